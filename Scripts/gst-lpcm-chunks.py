#!/usr/bin/env python3
"""Evidence for corpus-conformance.py's GStreamer lpcm allowance: GStreamer 1.22 plays an
`lpcm` track held in more than one chunk whole, ignoring its edit list.

Usage: gst-lpcm-chunks.py IN.mov OUT.mov. Writes a copy of IN whose one-chunk `lpcm` track
is split into two chunks (stsc and stco only; the moov must follow the mdat, so that no
offset moves), then prints the samples GStreamer and FFmpeg decode of both. On an iPhone
Live Photo (lychee_iphone_live_photo.mov): GStreamer 54391 then 91127 (the whole media),
FFmpeg 55296 then 54779 (the edit applied at packet ends)."""
import os, struct, subprocess, sys, tempfile
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mp4box

src, dst = sys.argv[1], sys.argv[2]
data = bytearray(open(src, "rb").read())
boxes = mp4box.read_tree(bytes(data), trailing_ok=True, truncated_ok=True)
moov = mp4box.top(boxes, b"moov")
trak = next(t for t in moov.children if t.kind == b"trak"
            and [e.kind for e in mp4box.stbl_of(t).child(b"stsd").children] == [b"lpcm"])
mdia = trak.child(b"mdia"); minf = mdia.child(b"minf"); stbl = minf.child(b"stbl")
stsc, stsz, stco = stbl.child(b"stsc"), stbl.child(b"stsz"), stbl.child(b"stco")
assert struct.unpack_from(">I", data, stsc.payload + 4)[0] == 1 and struct.unpack_from(">I", data, stco.payload + 4)[0] == 1
first, per, desc = struct.unpack_from(">III", data, stsc.payload + 8)
size = struct.unpack_from(">I", data, stsz.payload + 4)[0]
offset = struct.unpack_from(">I", data, stco.payload + 8)[0]
a = per // 2
new_stsc = struct.pack(">I4sII", 16 + 24, b"stsc", 0, 2) + struct.pack(">III", 1, a, desc) + struct.pack(">III", 2, per - a, desc)
new_stco = struct.pack(">I4sII", 16 + 8, b"stco", 0, 2) + struct.pack(">II", offset, offset + a * size)
grow = (len(new_stsc) - (stsc.end - stsc.offset)) + (len(new_stco) - (stco.end - stco.offset))
# Replace from the end backwards, then fix the ancestors' sizes (32-bit headers here).
out = data[:stco.offset] + new_stco + data[stco.end:]
out = out[:stsc.offset] + new_stsc + out[stsc.end:]
assert moov.offset > max(b.offset for b in boxes if b.kind == b"mdat"), "moov must follow mdat"
for box in (moov, trak, mdia, minf, stbl):
    assert struct.unpack_from(">I", out, box.offset)[0] == box.end - box.offset
    struct.pack_into(">I", out, box.offset, box.end - box.offset + grow)
open(dst, "wb").write(out)
mp4box.read_tree(bytes(out))  # walks cleanly

def gst(path):
    with tempfile.TemporaryDirectory() as tmp:
        raw = os.path.join(tmp, "a.raw")
        subprocess.run(["gst-launch-1.0", "filesrc", "location=" + path, "!", "qtdemux", "name=d", "d.audio_0", "!",
                        "queue", "!", "decodebin", "!", "audioconvert", "!", "audio/x-raw,format=S16LE,channels=1", "!",
                        "filesink", "location=" + raw, "sync=false"], capture_output=True, check=True)
        return os.path.getsize(raw) // 2

def ffmpeg(path):
    out = subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-i", path, "-map", "0:a:0", "-c:a", "pcm_s16le",
                          "-f", "framecrc", "-"], capture_output=True, check=True).stdout.decode()
    return sum(int(l.split(",")[3]) for l in out.splitlines() if l and not l.startswith("#"))

for label, path in (("original, 1 lpcm chunk", src), (f"split in 2 chunks ({a} + {per - a} samples)", dst)):
    print(f"{label}: GStreamer {gst(path)} samples, FFmpeg {ffmpeg(path)} samples")
