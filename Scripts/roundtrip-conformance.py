#!/usr/bin/env python3
"""Round trips through the public writer (Examples/CopyTracks), checked with FFmpeg and
GStreamer as oracles.

For each input (fixtures: video+audio, audio-only, several codecs, fragmented inputs, MOV;
plus B-frame H.264 and HEVC files made here with ffmpeg):
  - regular:    IN -> CopyTracks -> A.mp4; every packet of IN is in A with the same
                stream, pts, dts, duration, size, flags and CRC32 (ffprobe -show_packets,
                pos ignored);
  - fragmented: IN -> CopyTracks --fragment 1 -> F.mp4; the same packets (pts, dts, size,
                key flag, CRC32; see KNOWN for the fields FFmpeg 5.1 reports otherwise for
                fragments), and F plays in ffmpeg (-v error -f null -) and GStreamer
                (qtdemux ! decodebin ! fakesink) without an error;
  - back:       F -> CopyTracks -> B.mp4; B has every packet of A, all fields;
  - sidx:       IN -> CopyTracks --fragment 1 --sidx -> S.mp4: the packets of F, and S plays.
Then Examples/SilentAAC (progressive and fragmented) must decode cleanly in both players
with the duration it announces.

Usage: Scripts/roundtrip-conformance.py [--keep DIR]
Ends with one line `N passed, M failed`; exits 1 when anything failed.
"""
import json
import os
import sys
import tempfile

from oracle import ffprobe
from oracle.run import run as oracle_run

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "Fixtures")

# (file, what it stands for)
INPUTS = [
    ("aac-h264-faststart.mp4", "video+audio, moov first"),
    ("aac-h264-moov-end.mp4", "video+audio, moov at the end"),
    ("aac-two-audio.mp4", "video and two audio tracks"),
    ("aac-48k-mono.mp4", "audio-only AAC"),
    ("codec-alac.m4a", "audio-only ALAC"),
    ("codec-opus.mp4", "audio-only Opus"),
    ("codec-flac.mp4", "audio-only FLAC"),
    ("codec-ac3.mp4", "audio-only AC-3"),
    ("meta-itunes.m4a", "iTunes metadata"),
    ("meta-chapters-both.mp4", "chapters: a text track referenced by tref/chap, and chpl"),
    ("mp4-subtitle-chapters.mp4", "subtitles and a chapter track"),
    ("mov-timecode.mov", "QuickTime timecode track"),
    ("frag-keyframe.mp4", "fragmented input"),
    ("frag-cmaf.mp4", "fragmented input (CMAF)"),
    ("frag-audio-only.m4a", "fragmented audio-only input"),
    ("aac-quicktime.mov", "QuickTime MOV"),
    ("meta-iphone.mov", "QuickTime MOV from an iPhone"),
]

# Made at run time (B-frames need an encoder; no fixture holds them).
GENERATED = [
    ("bframes-h264.mp4", "H.264 with B-frames",
     ["-f", "lavfi", "-i", "testsrc=size=160x120:rate=25", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
      "-t", "3", "-c:v", "libx264", "-bf", "2", "-g", "25", "-pix_fmt", "yuv420p", "-c:a", "aac"]),
    ("bframes-hevc.mp4", "HEVC with B-frames",
     ["-f", "lavfi", "-i", "testsrc=size=160x120:rate=25", "-t", "2", "-c:v", "libx265", "-x265-params",
      "log-level=none:bframes=3", "-tag:v", "hvc1", "-pix_fmt", "yuv420p"]),
]

# What FFmpeg 5.1 reports differently for a fragmented file though the file holds the same
# samples. Edit lists: FFmpeg applies an edit's end to a regular file (samples past it are
# not shown: the empty closing sample of a subtitle track) but not to fragments, so both
# sides of a fragmented comparison are read with -ignore_editlist 1. These fields are left
# out of it (the back-conversion to a regular file then checks them exactly):
KNOWN = {
    "duration": "the last packet of a fragmented track gets the previous duration, and the first "
                "packet inside an edit's priming gets none",
    "flags": "the discard flag (D) of packets before an edit list's start is not set in fragments",
    "side_data_list": "skip-samples side data of primed audio is not added in fragments",
}
# A fragmented INPUT compared with its regular copy leaves out the same fields, and one more
# reason for durations: where a fragment's tfdt starts after the previous sample ended, the
# regular copy lengthens that sample to close the gap (stts cannot hold a gap), while FFmpeg
# reports the trun's duration.

passed = 0
failed = 0


def report(ok, name, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok    {name}")
    else:
        failed += 1
        print(f"FAIL  {name}: {detail}")


def run(command, **options):
    return oracle_run(*command, text=True, **options)


def packets(path, ignore_editlist=False):
    """Per stream index, the list of packets (dicts without pos), in decode order."""
    result = ffprobe.packets(path, ignore_editlist=ignore_editlist, text=True,
                             entries="packet=stream_index,pts,dts,duration,size,flags,data_hash:packet_side_data")
    if result.returncode != 0:
        raise RuntimeError(f"ffprobe {path}: {result.stderr.strip()}")
    streams = {}
    for packet in json.loads(result.stdout).get("packets", []):
        packet.pop("pos", None)
        streams.setdefault(packet["stream_index"], []).append(packet)
    return streams


def compare(expected, actual, ignore=()):
    """None when equal, else the first difference."""
    if sorted(expected) != sorted(actual):
        return f"streams {sorted(expected)} != {sorted(actual)}"
    for stream in expected:
        left, right = expected[stream], actual[stream]
        if len(left) != len(right):
            return f"stream {stream}: {len(left)} packets != {len(right)}"
        for index, (a, b) in enumerate(zip(left, right)):
            a = {k: v for k, v in a.items() if k not in ignore}
            b = {k: v for k, v in b.items() if k not in ignore}
            if "flags" in ignore:
                a["key"], b["key"] = "K" in left[index].get("flags", ""), "K" in right[index].get("flags", "")
            if a != b:
                return f"stream {stream} packet {index}: {a} != {b}"
    return None


def plays(path):
    """None when both players decode `path` without an error, else what they said."""
    ffmpeg = run(["ffmpeg", "-v", "error", "-nostdin", "-i", path, "-f", "null", "-"])
    if ffmpeg.returncode != 0 or ffmpeg.stderr.strip():
        return "ffmpeg: " + (ffmpeg.stderr.strip().splitlines() or ["exit status %d" % ffmpeg.returncode])[0]
    gst = run(["gst-launch-1.0", "-q", "filesrc", f"location={path}", "!", "qtdemux", "!", "decodebin", "!",
               "fakesink"], timeout=120)
    if gst.returncode != 0 or "ERROR" in gst.stderr or "ERROR" in gst.stdout:
        return "gst-launch-1.0: " + ((gst.stderr + gst.stdout).strip().splitlines() or ["exit status %d" %
                                                                                       gst.returncode])[0]
    return None


def build(example):
    # The debug build, as Scripts/build-examples.sh builds it: each example is a package of
    # its own that compiles the library again, and a release build of two of them was most of
    # this step's time in CI (about 3 minutes); the inputs are small fixtures.
    package = os.path.join(ROOT, "Examples", example)
    result = run(["swift", "build", "--package-path", package, "-q"])
    if result.returncode != 0:
        sys.exit(f"roundtrip-conformance: cannot build {example}:\n{result.stdout}{result.stderr}")
    path = run(["swift", "build", "--package-path", package, "--show-bin-path"]).stdout.strip()
    return os.path.join(path, example)


def main():
    keep = sys.argv[sys.argv.index("--keep") + 1] if "--keep" in sys.argv else None
    work = keep or tempfile.mkdtemp(prefix="roundtrip-")
    os.makedirs(work, exist_ok=True)
    copy = build("CopyTracks")
    silent = build("SilentAAC")

    inputs = [(os.path.join(FIXTURES, name), name, story) for name, story in INPUTS]
    for name, story, arguments in GENERATED:
        path = os.path.join(work, name)
        result = run(["ffmpeg", "-v", "error", "-nostdin", "-y"] + arguments + [path])
        if result.returncode != 0:
            report(False, f"{name} ({story})", "ffmpeg could not make it: " + result.stderr.strip()[:200])
            continue
        inputs.append((path, name, story))

    for path, name, story in inputs:
        stem = os.path.splitext(name)[0]
        regular, fragmented, back = (os.path.join(work, f"{stem}.{kind}.mp4") for kind in ("regular", "frag", "back"))
        steps = [([copy, "--overwrite", path, regular], regular),
                 ([copy, "--overwrite", "--fragment", "1", path, fragmented], fragmented),
                 ([copy, "--overwrite", fragmented, back], back)]
        error = None
        for command, output in steps:
            result = run(command)
            if result.returncode != 0:
                error = f"{' '.join(command[1:])}: {result.stderr.strip()}"
                break
        if error:
            report(False, f"{name} ({story}) copies", error)
            continue
        source = packets(path)
        with open(path, "rb") as file:
            input_is_fragmented = b"moof" in file.read()
        difference = compare(source, packets(regular), ignore=tuple(KNOWN) if input_is_fragmented else ())
        report(difference is None, f"{name}: {'fragmented' if input_is_fragmented else 'regular'} -> regular keeps "
               "every packet" + (" (pts, dts, size, key, CRC)" if input_is_fragmented else ""), difference or "")
        difference = compare(packets(path, ignore_editlist=True), packets(fragmented, ignore_editlist=True),
                             ignore=tuple(KNOWN))
        report(difference is None, f"{name}: regular -> fragmented keeps every packet (pts, dts, size, key, CRC)",
               difference or "")
        difference = compare(packets(regular), packets(back))
        report(difference is None, f"{name}: regular -> fragmented -> regular keeps every packet", difference or "")
        trouble = plays(fragmented)
        report(trouble is None, f"{name}: the fragmented copy plays in ffmpeg and GStreamer", trouble or "")
        indexed = os.path.join(work, f"{stem}.sidx.mp4")
        result = run([copy, "--overwrite", "--fragment", "1", "--sidx", path, indexed])
        trouble = result.stderr.strip() if result.returncode != 0 else plays(indexed)
        if trouble is None:
            difference = compare(packets(fragmented, ignore_editlist=True), packets(indexed, ignore_editlist=True))
            trouble = difference and "packets differ from the copy without sidx: " + difference
        report(trouble is None, f"{name}: the fragmented copy with a sidx has the same packets and plays", trouble or "")

    for layout, options in (("progressive", []), ("fragmented", ["--fragment", "1"])):
        output = os.path.join(work, f"silent-{layout}.mp4")
        result = run([silent, "--overwrite"] + options + [output, "3"])
        if result.returncode != 0:
            report(False, f"SilentAAC {layout}", result.stderr.strip())
            continue
        samples = int(result.stdout.split(" samples")[0].split()[-1])
        trouble = plays(output)
        report(trouble is None, f"SilentAAC {layout}: decodes cleanly in ffmpeg and GStreamer", trouble or "")
        probe = ffprobe.ffprobe(output, "-select_streams", "a:0", "-show_entries", "stream=duration_ts,codec_name",
                                text=True)
        stream = json.loads(probe.stdout)["streams"][0]
        report(stream.get("codec_name") == "aac" and int(stream.get("duration_ts", -1)) == samples,
               f"SilentAAC {layout}: an AAC stream of {samples} samples", f"ffprobe says {stream}")

    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
