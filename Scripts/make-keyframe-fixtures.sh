#!/usr/bin/env bash
# Regenerate Fixtures/keyframes/: tiny one-track video files (160x120 or 176x144, 10 frames,
# a key frame every 5) from FFmpeg's lavfi testsrc, and beside each NAME.EXT the oracle
# NAME.keys: one line per sample in decode (file) order, 1 when FFmpeg's decoder flags the
# frame made from that packet as a key frame (ffprobe -show_frames key_frame, matched to
# the packet by pkt_pos), 0 otherwise. KeyFrameProbeTests compares KeyFrameProbe with it.
# Needs ffmpeg/ffprobe with libx264, libx265, libvpx, libaom (made with Debian's FFmpeg 5.1.9).
set -euo pipefail

cd "$(dirname "$0")/.."
DIR=Fixtures/keyframes
rm -f "$DIR"/*.mp4 "$DIR"/*.mov "$DIR"/*.3gp "$DIR"/*.keys
mkdir -p "$DIR"

SRC=(-f lavfi -i "testsrc=size=160x120:rate=25:duration=0.4")
EXACT=(-fflags +bitexact -flags:v +bitexact -map_metadata -1 -threads 1 -an)

ff() {
    ffmpeg -nostdin -hide_banner -v error -y "$@"
}

# keys FILE: writes FILE's oracle (FILE without extension + .keys).
keys() {
    local file=$1 out=${1%.*}.keys
    ffprobe -v error -select_streams v:0 -show_entries packet=pos -of csv=p=0 "$file" > "$out.packets"
    ffprobe -v error -select_streams v:0 -show_entries frame=pkt_pos,key_frame -of csv=p=0 "$file" > "$out.frames"
    python3 - "$out.packets" "$out.frames" > "$out" <<'PY'
import sys
packets = [line.strip() for line in open(sys.argv[1]) if line.strip()]
key = {}
for line in open(sys.argv[2]):
    line = line.strip()
    if not line:
        continue
    flag, pos = line.split(",")[:2]
    key[pos] = flag
missing = [pos for pos in packets if pos not in key]
if missing:
    sys.exit("no decoded frame for packets at " + " ".join(missing))
for pos in packets:
    print(key[pos])
PY
    rm -f "$out.packets" "$out.frames"
}

# H.264 High profile with B-frames, closed GOPs of 5 (IDR every 5 frames).
ff "${SRC[@]}" -c:v libx264 -preset veryfast -pix_fmt yuv420p -bf 2 \
    -x264-params keyint=5:min-keyint=5:scenecut=0 "${EXACT[@]}" "$DIR/h264-bframes.mp4"
# H.264 open GOP: only the first I frame is an IDR; the next is a non-IDR I frame carrying a
# recovery point SEI with recovery_frame_cnt 0.
ff "${SRC[@]}" -c:v libx264 -preset veryfast -pix_fmt yuv420p -bf 2 \
    -x264-params keyint=5:min-keyint=5:scenecut=0:open-gop=1 "${EXACT[@]}" "$DIR/h264-open-gop.mp4"
# HEVC (hvc1), B-frames, IRAP every 5 frames.
ff "${SRC[@]}" -c:v libx265 -preset veryfast -pix_fmt yuv420p -tag:v hvc1 \
    -x265-params keyint=5:min-keyint=5:scenecut=0:bframes=2:log-level=error:pools=none:frame-threads=1 \
    "${EXACT[@]}" "$DIR/hevc.mp4"
# MPEG-4 Part 2 (mp4v, objectTypeIndication 0x20) with B-VOPs.
ff "${SRC[@]}" -c:v mpeg4 -pix_fmt yuv420p -g 5 -bf 1 -q:v 10 "${EXACT[@]}" "$DIR/mpeg4.mp4"
# H.263 baseline (s263) in 3GP: QCIF is one of its fixed source formats.
ff -f lavfi -i "testsrc=size=176x144:rate=25:duration=0.4" -c:v h263 -g 5 -q:v 10 \
    "${EXACT[@]}" "$DIR/h263.3gp"
# H.263 version 2 at a custom size (160x120): every picture header uses PLUSPTYPE. The 3GP
# and MP4 muxers refuse FFmpeg's h263p, the mov muxer stores it as QuickTime's `H263`.
ff "${SRC[@]}" -c:v h263p -g 5 -q:v 10 "${EXACT[@]}" "$DIR/h263plus.mov"
# VP9. libvpx makes no alt-ref superframe in a clip this short (tried up to 20 frames,
# -lag-in-frames 25, -cpu-used 1): the superframe case is tested on hand-built bytes.
ff "${SRC[@]}" -c:v libvpx-vp9 -pix_fmt yuv420p -g 5 -crf 40 -b:v 0 -deadline good -cpu-used 8 -auto-alt-ref 1 \
    -lag-in-frames 5 "${EXACT[@]}" "$DIR/vp9.mp4"
# AV1 (libaom), key frame every 5.
ff "${SRC[@]}" -c:v libaom-av1 -pix_fmt yuv420p -g 5 -crf 50 -cpu-used 8 -row-mt 0 -tiles 1x1 "${EXACT[@]}" "$DIR/av1.mp4"

for file in "$DIR"/*.mp4 "$DIR"/*.mov "$DIR"/*.3gp; do
    keys "$file"
done
