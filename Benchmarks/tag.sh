#!/usr/bin/env bash
# Tag-editing benchmark (issue 22): on one large MP4, the first edit (a full rewrite beside
# the file, synced and renamed) against `cp` + sync of the same file, the second edit (in
# place, in the padding the first left, syncs included), and beside them `ffmpeg -metadata
# -c copy` and AtomicParsley. Targets: second edit <= 50 ms; first edit >= 80 % of cp's
# throughput in the same run.
# Usage: Benchmarks/tag.sh [--bin PATH] [--size-mb N (default 2048)] [--dir DIR] [--keep]
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=$ROOT/.build/release/extract-audio
SIZE_MB=2048
DIR=${TMPDIR:-/tmp}/extract-audio-tag-bench
KEEP=0
while [[ $# -gt 0 ]]; do
    case $1 in
        --bin) BIN=$2; shift 2 ;;
        --size-mb) SIZE_MB=$2; shift 2 ;;
        --dir) DIR=$2; shift 2 ;;
        --keep) KEEP=1; shift ;;
        *) echo "unknown option $1 (see the header of $0)" >&2; exit 64 ;;
    esac
done
[[ -x $BIN ]] || { echo "no binary at $BIN: swift build -c release, or --bin PATH" >&2; exit 66; }
mkdir -p "$DIR"
[[ $KEEP == 1 ]] || trap 'rm -f "$DIR"/work-*.mp4 "$DIR"/out-*.mp4' EXIT

# The input: a 10 s 1080p clip of noise at a high bitrate (about 50 MB), stream-copied in a
# loop up to the size asked (stream copy is I/O bound: quick to make).
big=$DIR/big-${SIZE_MB}mb.mp4
if [[ ! -s $big ]]; then
    clip=$DIR/clip.mp4
    ffmpeg -nostdin -v error -y -f lavfi -i "color=s=1920x1080:d=10,noise=alls=100:allf=t" -f lavfi \
        -i sine=d=10 -c:v mpeg4 -q:v 2 -c:a aac -shortest "$clip"
    # -stream_loop N plays the clip N + 1 times.
    loops=$(( SIZE_MB * 1048576 / $(stat -c %s "$clip") - 1 ))
    (( loops >= 0 )) || loops=0
    ffmpeg -nostdin -v error -y -stream_loop "$loops" -i "$clip" -c copy "$big"
    # The copy holds less than loops × the clip (its index and padding are not repeated):
    # once more, scaled to the size asked.
    made=$(stat -c %s "$big")
    if (( made < SIZE_MB * 1048576 * 95 / 100 )); then
        loops=$(( (loops + 1) * SIZE_MB * 1048576 / made ))
        ffmpeg -nostdin -v error -y -stream_loop "$loops" -i "$clip" -c copy "$big"
    fi
fi
bytes=$(stat -c %s "$big")

now() { date +%s%N; }
ms() { echo $(( ($2 - $1) / 1000000 )); }

cp "$big" "$DIR/work-a.mp4"; sync
t0=$(now); cp "$big" "$DIR/work-cp.mp4"; sync "$DIR/work-cp.mp4"; t1=$(now)
cp_ms=$(ms "$t0" "$t1"); rm -f "$DIR/work-cp.mp4"

t0=$(now); "$BIN" tag --quiet --set title=First "$DIR/work-a.mp4"; t1=$(now)
first_ms=$(ms "$t0" "$t1")
t0=$(now); "$BIN" tag --json --set title=Second "$DIR/work-a.mp4" > "$DIR/second.json"; t1=$(now)
second_ms=$(ms "$t0" "$t1")
grep -q '"written": "in_place"' "$DIR/second.json" || { echo "the second edit was not in place" >&2; exit 1; }

t0=$(now); ffmpeg -nostdin -v error -y -i "$big" -map 0 -c copy -metadata title=FFmpeg "$DIR/out-ffmpeg.mp4"
sync "$DIR/out-ffmpeg.mp4"; t1=$(now); ffmpeg_ms=$(ms "$t0" "$t1")
ap_ms=n/a
if command -v AtomicParsley >/dev/null; then
    cp "$big" "$DIR/work-ap.mp4"; sync
    t0=$(now); AtomicParsley "$DIR/work-ap.mp4" --title AtomicParsley --overWrite >/dev/null
    sync "$DIR/work-ap.mp4"; t1=$(now); ap_ms=$(ms "$t0" "$t1")
fi

mbps() { awk -v b="$bytes" -v t="$1" 'BEGIN { printf "%.0f", (t > 0 ? b / 1048576 / (t / 1000) : 0) }'; }
ratio=$(awk -v a="$cp_ms" -v b="$first_ms" 'BEGIN { printf "%.0f", (b > 0 ? 100 * a / b : 0) }')
second_ok=$([[ $second_ms -le 50 ]] && echo PASS || echo FAIL)
first_ok=$([[ $ratio -ge 80 ]] && echo PASS || echo FAIL)
cat <<REPORT
input: $big ($(( bytes / 1048576 )) MiB)
| what | ms | MiB/s | target |
| --- | --- | --- | --- |
| cp + sync | $cp_ms | $(mbps "$cp_ms") | |
| extract-audio tag, first edit (rewrite) | $first_ms | $(mbps "$first_ms") | >= 80 % of cp: $ratio % $first_ok |
| extract-audio tag, second edit (in place) | $second_ms | | <= 50 ms: $second_ok |
| ffmpeg -metadata -c copy | $ffmpeg_ms | $(mbps "$ffmpeg_ms") | |
| AtomicParsley --title --overWrite | $ap_ms | | |
REPORT
[[ $second_ok == PASS && $first_ok == PASS ]]
