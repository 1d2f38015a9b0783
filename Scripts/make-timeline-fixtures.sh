#!/usr/bin/env bash
# Regenerate Fixtures/timeline/: small fragmented A/V files whose tracks start late on the
# decode clock (a first `tfdt` far from 0, different per track), as a stream's segments
# saved alone are, for the one-timeline rule of cuts (issue 32). Fixtures/README.md
# ("timeline/") says what each is and what FFmpeg and GStreamer make of it.
# Needs ffmpeg with libx264 (made with Debian's FFmpeg 5.1.9) and python3.
set -euo pipefail

cd "$(dirname "$0")/.."
DIR=Fixtures/timeline
rm -f "$DIR"/*.mp4 "$DIR"/*.ismv
mkdir -p "$DIR"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

ff() {
    ffmpeg -nostdin -hide_banner -v error -y "$@"
}
# 64x48 testsrc at 25 fps, H.264 High with B-frames (key frame every 25), AAC mono 32 kb/s.
AV=(-f lavfi -i "testsrc=size=64x48:rate=25" -f lavfi -i "sine=frequency=440:sample_rate=44100"
    -c:v libx264 -preset ultrafast -bf 2 -g 25 -keyint_min 25 -sc_threshold 0 -pix_fmt yuv420p
    -c:a aac -b:a 32k -ac 1 -fflags +bitexact -flags:v +bitexact -flags:a +bitexact -map_metadata -1 -threads 1)

# hls-late.mp4: an HLS fMP4 stream whose timestamps start at 29.9 s (-output_ts_offset),
# cut in 1 s segments; its init segment followed by the second segment, as a segment
# saved alone is. FFmpeg's HLS muxer puts the stream's start in each trak's edit list (an
# empty edit of 29.9 s for the video, 29.876 s for the audio) and the segment's own start
# in its tfdt (1.0 s of video, 0.975 s of audio), so the tracks start at different times.
ff "${AV[@]}" -t 3 -output_ts_offset 29.9 -f hls -hls_segment_type fmp4 -hls_time 1 -hls_list_size 0 \
    -hls_fmp4_init_filename init.mp4 -hls_segment_filename "$TMP/seg%d.m4s" "$TMP/hls.m3u8"
cat "$TMP/init.mp4" "$TMP/seg1.m4s" > "$DIR/hls-late.mp4"

# dash-late.mp4: FFmpeg's DASH muxer (-f dash, 2 s segments) over 68 s, one representation
# per track as it writes them; the two init segments joined into one moov (the audio trak
# and its trex renumbered track 2) followed by each track's segment at 66 s (sidx, moof,
# mdat; the audio's track_ID renumbered): a muxed stream's segment saved with its init
# segment. Each trak has the muxer's edit of duration 0 from media time 1024 (the B-frame
# delay, the AAC priming); the video's tfdt is 66 s (844800 of 12800), the audio's 65.945 s
# (2908160 of 44100: its segments follow its own frames).
ff "${AV[@]}" -t 68 -f dash -seg_duration 2 -use_template 1 -use_timeline 0 \
    -init_seg_name 'init-$RepresentationID$.m4s' -media_seg_name 'chunk-$RepresentationID$-$Number%05d$.m4s' \
    "$TMP/dash.mpd"
python3 - "$TMP" "$DIR/dash-late.mp4" <<'PY'
import struct, sys
sys.path.insert(0, "Scripts")
import mp4box
tmp, target = sys.argv[1], sys.argv[2]
def read(name):
    data = bytearray(open(f"{tmp}/{name}", "rb").read())
    return data, mp4box.read_tree(bytes(data))
def renumber(data, boxes, track_id):
    """Sets the track_ID of every tkhd, trex, tfhd and sidx (reference_ID) in `data`."""
    for box in mp4box.walk(boxes):
        if box.kind == b"tkhd":
            struct.pack_into(">I", data, box.payload + (20 if data[box.payload] == 1 else 12), track_id)
        elif box.kind in (b"trex", b"tfhd", b"sidx"):
            struct.pack_into(">I", data, box.payload + 4, track_id)
video, video_boxes = read("init-0.m4s")
audio, audio_boxes = read("init-1.m4s")
renumber(audio, audio_boxes, 2)
moov = mp4box.top(video_boxes, b"moov")
audio_moov = mp4box.top(audio_boxes, b"moov")
audio_trak = next(c for c in audio_moov.children if c.kind == b"trak")
audio_trex = next(c for c in audio_moov.child(b"mvex").children if c.kind == b"trex")
body = bytearray()
for child in moov.children:
    chunk = bytearray(video[child.offset:child.end])
    if child.kind == b"mvhd":
        struct.pack_into(">I", chunk, len(chunk) - 4, 3)  # next_track_ID
    if child.kind == b"mvex":
        chunk += audio[audio_trex.offset:audio_trex.end]
        struct.pack_into(">I", chunk, 0, len(chunk))
    body += chunk
    if child.kind == b"trak":
        body += audio[audio_trak.offset:audio_trak.end]
out = bytearray(video[:moov.offset]) + struct.pack(">I4s", 8 + len(body), b"moov") + body
for name, track_id in (("chunk-0-00034.m4s", 1), ("chunk-1-00034.m4s", 2)):
    data, boxes = read(name)
    renumber(data, boxes, track_id)
    out += b"".join(data[b.offset:b.end] for b in boxes if b.kind in (b"sidx", b"moof", b"mdat"))
open(target, "wb").write(out)
PY

# smooth.ismv: a Smooth Streaming-like file (FFmpeg's ismv muxer: PIFF-style fragments, every
# track in a 10 MHz media timescale, an mfra at the end), 4 s of 23.976 fps H.264 with
# B-frames and AAC at 44100 Hz, whose 1024-sample packets last 232199 or 232200 ticks. Cuts
# of it wrote the audio in 10 MHz and FFmpeg decoded none of it (issue 32).
ff -f lavfi -i "testsrc=size=64x48:rate=24000/1001" -f lavfi -i "sine=frequency=440:sample_rate=44100" -t 4 \
    -c:v libx264 -preset ultrafast -bf 2 -g 24 -keyint_min 24 -sc_threshold 0 -pix_fmt yuv420p \
    -c:a aac -b:a 32k -ac 1 -fflags +bitexact -flags:v +bitexact -flags:a +bitexact -map_metadata -1 -threads 1 \
    -f ismv "$DIR/smooth.ismv"
ls -l "$DIR"
