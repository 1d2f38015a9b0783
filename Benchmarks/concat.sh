#!/usr/bin/env bash
# Join benchmark (issues 23 and 27): peak memory and time of `extract-audio concat` beside
# FFmpeg's concat demuxer (`ffmpeg -f concat -c copy`) on the same inputs:
#   - 1,000 inputs of 10 s (AAC, 44.1 kHz),
#   - 2 inputs of 5 hours each.
# Target: peak RSS <= 64 MiB + 64 bytes per output sample (packet): a join holds the output's
# sample tables, never sample data. The 5-hour inputs are themselves made by concat (1,800
# copies of the 10 s clip), so generating them takes seconds, not an encode of 10 hours.
# Usage: Benchmarks/concat.sh [--bin PATH] [--dir DIR] [--keep]
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=$ROOT/.build/release/extract-audio
DIR=${TMPDIR:-/tmp}/extract-audio-concat-bench
KEEP=0
while [[ $# -gt 0 ]]; do
    case $1 in
        --bin) BIN=$2; shift 2 ;;
        --dir) DIR=$2; shift 2 ;;
        --keep) KEEP=1; shift ;;
        *) echo "unknown option $1 (see the header of $0)" >&2; exit 64 ;;
    esac
done
[[ -x $BIN ]] || { echo "no binary at $BIN: swift build -c release, or --bin PATH" >&2; exit 66; }
[[ -x /usr/bin/time ]] || { echo "needs GNU time (/usr/bin/time: apt-get install time)" >&2; exit 69; }
mkdir -p "$DIR"
[[ $KEEP == 1 ]] || trap 'rm -rf "$DIR"' EXIT

clip=$DIR/clip.m4a
[[ -s $clip ]] || ffmpeg -nostdin -v error -y -f lavfi -i "sine=f=440:r=44100:d=10" -c:a aac "$clip"

# 1,000 inputs of 10 s: links to one clip (the join opens each as its own input).
mkdir -p "$DIR/parts"
list=$DIR/parts/list.txt
: > "$list"
for i in $(seq -w 1 1000); do
    ln -f "$clip" "$DIR/parts/part$i.m4a"
    echo "file 'part$i.m4a'" >> "$list"
done
# 2 inputs of 5 hours.
long_list=$DIR/long-list.txt
: > "$long_list"
for i in $(seq 1 1800); do echo "file 'clip.m4a'" >> "$long_list"; done
[[ -s $DIR/long.m4a ]] || "$BIN" concat --quiet --overwrite --file-list "$long_list" "$DIR/long.m4a"
cp "$DIR/long.m4a" "$DIR/long2.m4a"
printf "file 'long.m4a'\nfile 'long2.m4a'\n" > "$DIR/two-list.txt"

# Runs a command under GNU time; prints "seconds peak_kib".
measure() {
    /usr/bin/time -f "%e %M" -o "$DIR/time.txt" "$@" >/dev/null 2>"$DIR/err.txt" || { cat "$DIR/err.txt" >&2; exit 1; }
    cat "$DIR/time.txt"
}
packets() { ffprobe -v error -select_streams a:0 -count_packets -show_entries stream=nb_read_packets -of csv=p=0 "$1"; }

echo "| join | ours | peak RSS | limit | ffmpeg -f concat -c copy | its peak RSS |"
echo "| --- | --- | --- | --- | --- | --- |"
for case in "1,000 × 10 s:$list" "2 × 5 h:$DIR/two-list.txt"; do
    name=${case%%:*}
    file=${case#*:}
    read -r ours_s ours_kib <<<"$(measure "$BIN" concat --quiet --overwrite --file-list "$file" "$DIR/ours.m4a")"
    read -r ff_s ff_kib <<<"$(measure ffmpeg -nostdin -v error -y -f concat -safe 0 -i "$file" -c copy "$DIR/ffmpeg.m4a")"
    samples=$(packets "$DIR/ours.m4a")
    limit_kib=$(( 65536 + samples * 64 / 1024 ))
    verdict=$([[ $ours_kib -le $limit_kib ]] && echo PASS || echo FAIL)
    echo "| $name ($samples packets) | $ours_s s | $((ours_kib / 1024)) MiB $verdict | $((limit_kib / 1024)) MiB | $ff_s s | $((ff_kib / 1024)) MiB |"
done
