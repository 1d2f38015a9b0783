#!/usr/bin/env bash
# Packaging benchmark (issue 31): `extract-audio package` beside FFmpeg's HLS muxer by stream
# copy (`ffmpeg -c copy -f hls -hls_segment_type fmp4`), on a 1-minute and a 2-hour file:
# wall time, peak RSS (GNU time) and bytes written (the output folder, `du -sb`).
# Target: peak RSS of `package` on 2 hours <= 1.2 x its peak RSS on 1 minute (memory follows
# the segment being written, not the file's length).
# Inputs: one 10 s H.264 + AAC clip (320x240, 25 fps, a key frame every 2 s), repeated by
# stream copy (`ffmpeg -stream_loop`) to 1 minute and 2 hours, in a temporary folder.
# With --first-playlist RUNS, also the time to the first playlist of an on-demand package
# (issue 31 point 2): Benchmarks/first-playlist.swift, compiled against the release objects
# in .build/release (swift build -c release first), plans SegmentSource and gives
# master.m3u8 and the first media playlist, RUNS times in one process, with the default
# options and with --single-file --iframes; min and median. --no-package skips the table
# above (the package runs) and the memory verdict.
# Usage: Benchmarks/package.sh [--bin PATH] [--dir DIR] [--keep] [--first-playlist RUNS] [--no-package]
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=$ROOT/.build/release/extract-audio
DIR=${TMPDIR:-/tmp}/extract-audio-package-bench
KEEP=0 RUNS=0 PACKAGE=1
while [[ $# -gt 0 ]]; do
    case $1 in
        --bin) BIN=$2; shift 2 ;;
        --dir) DIR=$2; shift 2 ;;
        --keep) KEEP=1; shift ;;
        --first-playlist) RUNS=$2; shift 2 ;;
        --no-package) PACKAGE=0; shift ;;
        *) echo "unknown option $1 (see the header of $0)" >&2; exit 64 ;;
    esac
done
[[ -x $BIN ]] || { echo "no binary at $BIN: swift build -c release, or --bin PATH" >&2; exit 66; }
[[ -x /usr/bin/time ]] || { echo "needs GNU time (/usr/bin/time: apt-get install time)" >&2; exit 69; }
mkdir -p "$DIR"
[[ $KEEP == 1 ]] || trap 'rm -rf "$DIR"' EXIT

clip=$DIR/clip.mp4
[[ -s $clip ]] || ffmpeg -nostdin -v error -y \
    -f lavfi -i "testsrc2=size=320x240:rate=25,noise=alls=12:allf=t" \
    -f lavfi -i "sine=frequency=440:beep_factor=4:sample_rate=48000,aformat=channel_layouts=stereo" \
    -t 10 -map 0:v -map 1:a -c:v libx264 -preset ultrafast -g 50 -keyint_min 50 -sc_threshold 0 \
    -b:v 400k -maxrate 400k -bufsize 400k -c:a aac -b:a 128k "$clip"
loop() {  # loop LOOPS OUT
    [[ -s $2 ]] || ffmpeg -nostdin -v error -y -stream_loop $(($1 - 1)) -i "$clip" -map 0 -c copy "$2"
}
loop 6 "$DIR/1min.mp4"
loop 720 "$DIR/2h.mp4"

# Runs a command under GNU time; prints "seconds peak_kib".
measure() {
    /usr/bin/time -f "%e %M" -o "$DIR/time.txt" "$@" >/dev/null 2>"$DIR/err.txt" || { cat "$DIR/err.txt" >&2; exit 1; }
    cat "$DIR/time.txt"
}
duration() { ffprobe -v error -show_entries format=duration -of csv=p=0 "$1"; }

if [[ $RUNS -gt 0 ]]; then
    release=$ROOT/.build/release
    program=$DIR/first-playlist
    [[ -d $release/AudioRemux.build ]] || { echo "no objects in $release: swift build -c release" >&2; exit 66; }
    swiftc -O -I "$release/Modules" -Xcc -fmodule-map-file="$release/CSystem.build/module.modulemap" \
        "$ROOT/Benchmarks/first-playlist.swift" "$release"/AudioRemux.build/*.o "$release"/ISOBMFF.build/*.o \
        "$release"/CSystem.build/*.o -o "$program"
    echo "| input | options | time to master.m3u8 + first media playlist ($RUNS runs) |"
    echo "| --- | --- | --- |"
    for name in 1min 2h; do
        for options in "" "--single-file --iframes"; do
            # shellcheck disable=SC2086 # the options are words
            echo "| $name | ${options:-default} | $("$program" "$DIR/$name.mp4" "$RUNS" $options) |"
        done
    done
    echo
fi
[[ $PACKAGE == 1 ]] || exit 0

echo "| input | size | tool | wall | peak RSS | bytes written | files |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
declare -A peak
for name in 1min 2h; do
    input=$DIR/$name.mp4
    size=$(stat -c %s "$input")
    label="$name ($(printf %.0f "$(duration "$input")") s)"
    rm -rf "$DIR/ours" "$DIR/ffmpeg"
    read -r s kib <<<"$(measure "$BIN" package "$input" "$DIR/ours" --segment-duration 6 --quiet)"
    peak[$name]=$kib
    echo "| $label | $size | extract-audio package | $s s | $((kib / 1024)) MiB ($kib KiB) |" \
        "$(du -sb "$DIR/ours" | cut -f1) | $(ls "$DIR/ours" | wc -l) |"
    mkdir -p "$DIR/ffmpeg"
    read -r s kib <<<"$(measure ffmpeg -nostdin -v error -y -i "$input" -map 0 -c copy -f hls \
        -hls_segment_type fmp4 -hls_time 6 -hls_playlist_type vod \
        -hls_segment_filename "$DIR/ffmpeg/seg_%d.m4s" "$DIR/ffmpeg/index.m3u8")"
    echo "| $label | $size | ffmpeg -c copy -f hls (fmp4) | $s s | $((kib / 1024)) MiB ($kib KiB) |" \
        "$(du -sb "$DIR/ffmpeg" | cut -f1) | $(ls "$DIR/ffmpeg" | wc -l) |"
done
limit=$((peak[1min] * 12 / 10))
verdict=$([[ ${peak[2h]} -le $limit ]] && echo PASS || echo FAIL)
echo
echo "package peak RSS, 2 h: ${peak[2h]} KiB; 1 min: ${peak[1min]} KiB; limit 1.2 x = $limit KiB: $verdict"
[[ $verdict == PASS ]]
