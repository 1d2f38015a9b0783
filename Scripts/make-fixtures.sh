#!/usr/bin/env bash
# Regenerate everything in Fixtures/ (except README.md) from FFmpeg's lavfi sources.
# Run from anywhere; needs ffmpeg/ffprobe (made with 5.1, libx264) and python3.
# Deterministic: bit-exact flags, no metadata, one encoder thread, fixed sources.
set -euo pipefail

cd "$(dirname "$0")/.."
FIX=Fixtures

# Only the generated files are removed; README.md stays.
rm -rf "$FIX/corrupt" "$FIX/expected"
rm -f "$FIX"/*.mp4 "$FIX"/*.mov
mkdir -p "$FIX/corrupt" "$FIX/expected"

DUR=3
VIDEO=(-f lavfi -i "testsrc=size=160x120:rate=25:duration=$DUR")
VCODEC=(-c:v libx264 -preset ultrafast -pix_fmt yuv420p)
EXACT=(-fflags +bitexact -flags:v +bitexact -flags:a +bitexact -map_metadata -1 -threads 1)

sine() { # sine FREQUENCY RATE
    echo "sine=frequency=$1:sample_rate=$2:duration=$DUR"
}

ff() {
    ffmpeg -nostdin -hide_banner -v error -y "$@"
}

echo "good fixtures"
# AAC 44.1 kHz stereo + H.264; FFmpeg's default mp4 layout puts moov after mdat.
ff "${VIDEO[@]}" -f lavfi -i "$(sine 440 44100)" -map 0:v -map 1:a \
    "${VCODEC[@]}" -c:a aac -b:a 64k -ac 2 "${EXACT[@]}" "$FIX/aac-h264-moov-end.mp4"

# The same with moov moved in front of mdat.
ff "${VIDEO[@]}" -f lavfi -i "$(sine 440 44100)" -map 0:v -map 1:a \
    "${VCODEC[@]}" -c:a aac -b:a 64k -ac 2 "${EXACT[@]}" -movflags +faststart \
    "$FIX/aac-h264-faststart.mp4"

# Audio is track 1, video track 2.
ff "${VIDEO[@]}" -f lavfi -i "$(sine 660 44100)" -map 1:a -map 0:v \
    "${VCODEC[@]}" -c:a aac -b:a 64k -ac 2 "${EXACT[@]}" "$FIX/aac-audio-first.mp4"

# Video + two audio tracks: 440 Hz at 64k (a:0, the one -map 0:a:0 takes), then 880 Hz at 96k.
ff "${VIDEO[@]}" -f lavfi -i "$(sine 440 44100)" -f lavfi -i "$(sine 880 44100)" \
    -map 0:v -map 1:a -map 2:a "${VCODEC[@]}" \
    -c:a aac -ac 2 -b:a:0 64k -b:a:1 96k "${EXACT[@]}" "$FIX/aac-two-audio.mp4"

# 48 kHz mono.
ff "${VIDEO[@]}" -f lavfi -i "$(sine 1000 48000)" -map 0:v -map 1:a \
    "${VCODEC[@]}" -c:a aac -b:a 64k -ac 1 "${EXACT[@]}" "$FIX/aac-48k-mono.mp4"

# 5.1: one sine per channel (FL FR FC LFE BL BR), merged into a 5.1 layout.
ff "${VIDEO[@]}" \
    -f lavfi -i "$(sine 220 48000)" -f lavfi -i "$(sine 330 48000)" -f lavfi -i "$(sine 440 48000)" \
    -f lavfi -i "$(sine 55 48000)" -f lavfi -i "$(sine 550 48000)" -f lavfi -i "$(sine 660 48000)" \
    -filter_complex "[1:a][2:a][3:a][4:a][5:a][6:a]amerge=inputs=6,aformat=channel_layouts=5.1[a]" \
    -map 0:v -map "[a]" "${VCODEC[@]}" -c:a aac -b:a 64k "${EXACT[@]}" "$FIX/aac-5.1.mp4"

# QuickTime: FFmpeg's mov muxer (see README for the sound description it writes).
ff "${VIDEO[@]}" -f lavfi -i "$(sine 440 44100)" -map 0:v -map 1:a \
    "${VCODEC[@]}" -c:a aac -b:a 64k -ac 2 "${EXACT[@]}" -f mov "$FIX/aac-quicktime.mov"

echo "bad fixtures"
ff "${VIDEO[@]}" -map 0:v "${VCODEC[@]}" -an "${EXACT[@]}" "$FIX/video-only.mp4"

# The first half of the bytes of the moov-at-end file: ftyp and part of mdat, no moov.
size=$(wc -c < "$FIX/aac-h264-moov-end.mp4")
head -c $((size / 2)) "$FIX/aac-h264-moov-end.mp4" > "$FIX/truncated-no-moov.mp4"

# 16-bit little-endian PCM (QuickTime 'sowt'), 8 kHz mono to keep the file small.
ff "${VIDEO[@]}" -f lavfi -i "$(sine 440 8000)" -map 0:v -map 1:a \
    "${VCODEC[@]}" -c:a pcm_s16le -ac 1 "${EXACT[@]}" -f mov "$FIX/pcm-in-mov.mov"

python3 Scripts/corrupt.py "$FIX/aac-h264-faststart.mp4" "$FIX/corrupt"

echo "expectations"
for fixture in aac-h264-moov-end.mp4 aac-h264-faststart.mp4 aac-audio-first.mp4 \
    aac-two-audio.mp4 aac-48k-mono.mp4 aac-5.1.mp4 aac-quicktime.mov; do
    python3 Scripts/expectations.py write "$FIX/$fixture" "$FIX/expected/${fixture%.*}.json"
done

echo "done: $(find "$FIX" -type f ! -name README.md | wc -l) files, $(du -sk "$FIX" | cut -f1) KiB"
