#!/usr/bin/env bash
# The mux of a tiny video whose `stts` says each frame lasts 10^8 seconds (issue 13): the
# writer's interleaver must do work proportional to the samples (2 frames, ~130 AAC
# packets), not to the timeline (the 0.5 s-step loop it replaced took 4·10^8 steps).
# Makes the video with ffmpeg (2 black 16x16 H.264 frames at timescale 1, patched in
# place: stts delta 10^8, mdhd duration 2·10^8, the edit list turned into `free`) and a
# 3 s AAC clip, then times `extract-audio mux` with hyperfine beside
# `ffmpeg -i VIDEO -i CLIP -map 0:v -map 1:a -c copy`, and prints a Markdown table.
#
# Usage: Benchmarks/mux-gap.sh [--bin PATH] [--dir DIR]
#   --bin PATH  the extract-audio to measure (default: .build/release/extract-audio, built first)
#   --dir DIR   work folder (default: a new temporary folder, removed at the end)
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
BIN="" WORK=""
while [[ $# -gt 0 ]]; do
    case $1 in
        --bin) BIN=$2; shift ;;
        --dir) WORK=$2; shift ;;
        -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "mux-gap.sh: unknown option $1" >&2; exit 64 ;;
    esac
    shift
done
for tool in ffmpeg hyperfine python3; do
    command -v "$tool" >/dev/null || { echo "mux-gap.sh: $tool is required" >&2; exit 1; }
done
if [[ -z $BIN ]]; then
    (cd "$ROOT" && swift build -c release --product extract-audio >/dev/null)
    BIN=$ROOT/.build/release/extract-audio
fi
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
if [[ -z $WORK ]]; then
    WORK=$(mktemp -d "${TMPDIR:-/tmp}/mux-gap.XXXXXX")
    trap 'rm -rf "$WORK"' EXIT
fi
mkdir -p "$WORK"
cd "$WORK"

ffmpeg -nostdin -v error -y -f lavfi -i color=c=black:s=16x16:r=1 -frames:v 2 -c:v libx264 -preset ultrafast \
    -video_track_timescale 1 plain.mp4
ffmpeg -nostdin -v error -y -f lavfi -i "sine=frequency=440:duration=3" -c:a aac clip.m4a
python3 - <<'PY'
import struct
data = bytearray(open("plain.mp4", "rb").read())
def box(kind):
    at = data.find(kind)
    assert at > 4, kind
    return at - 4
stts = box(b"stts")  # one entry (2 samples of 1 tick): its delta is 20 bytes in
assert struct.unpack_from(">II", data, stts + 12) == (1, 2), "unexpected stts"
struct.pack_into(">I", data, stts + 20, 100_000_000)
struct.pack_into(">I", data, box(b"mdhd") + 24, 200_000_000)  # version 0 duration
data[box(b"edts") + 4:box(b"edts") + 8] = b"free"  # present the media as it is
open("gap.mp4", "wb").write(data)
PY

size=$(wc -c < gap.mp4)
"$BIN" mux gap.mp4 --audio clip.m4a ours.mp4 --overwrite --quiet
if ffmpeg -nostdin -v error -y -i gap.mp4 -i clip.m4a -map 0:v -map 1:a -c copy ffmpeg.mp4 2> ffmpeg.txt; then
    peer="wrote $(wc -c < ffmpeg.mp4) bytes"
else
    peer="fails: $(tail -n 1 ffmpeg.txt)"
fi
hyperfine -N -w 3 -r 30 --export-json times.json \
    "$BIN mux gap.mp4 --audio clip.m4a ours.mp4 --overwrite --quiet" \
    "ffmpeg -nostdin -v quiet -y -i gap.mp4 -i clip.m4a -map 0:v -map 1:a -c copy ffmpeg.mp4" -i >/dev/null
python3 - "$size" "$(wc -c < ours.mp4)" "$peer" <<'PY'
import json, sys
size, ours_size, peer = sys.argv[1:4]
ours, ffmpeg = json.load(open("times.json"))["results"]
print(f"Video: {size} bytes, 2 frames of 10^8 s each (timeline 2·10^8 s); music: a 3 s AAC clip.\n")
print("| command | median | min | result |")
print("|---|---:|---:|---|")
print(f"| extract-audio mux | {ours['median'] * 1000:.1f} ms | {ours['min'] * 1000:.1f} ms | wrote {ours_size} bytes |")
print(f"| ffmpeg -c copy | {ffmpeg['median'] * 1000:.1f} ms | {ffmpeg['min'] * 1000:.1f} ms | {peer} |")
PY
