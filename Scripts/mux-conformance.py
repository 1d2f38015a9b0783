#!/usr/bin/env python3
"""Conformance of `extract-audio mux` against ffprobe/ffmpeg.

Makes short AAC music clips with ffmpeg in a temporary folder, puts them under a fixture
video with our CLI, and checks with ffprobe (never with our own parser):
  - the video packets (pts, dts, duration, size, CRC-32) equal the input video's;
  - the raw audio packets (ffprobe -ignore_editlist 1) are the clips' packets in order;
  - the audio's presented duration equals the video's within 1 ms;
  - both streams start at the same time;
  - `ffmpeg -v error -i OUT -f null -` prints nothing.
Prints one ok/FAIL line per case and a final "N passed, M failed"; exits 1 on failure.
"""
import json
import os
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VIDEO = os.path.join(ROOT, "Fixtures", "aac-h264-faststart.mp4")
FRAGMENTED = os.path.join(ROOT, "Fixtures", "frag-audio-only.m4a")


def run(*args):
    return subprocess.run(args, capture_output=True, text=True)


def packets(path, stream, ignore_editlist=False):
    args = ["ffprobe", "-v", "error"] + (["-ignore_editlist", "1"] if ignore_editlist else []) + [
        "-select_streams", stream, "-show_packets", "-show_data_hash", "CRC32", "-of", "json", path]
    out = run(*args)
    if out.returncode != 0:
        raise RuntimeError(out.stderr)
    return json.loads(out.stdout).get("packets", [])


def streams(path):
    out = run("ffprobe", "-v", "error", "-show_streams", "-of", "json", path)
    return json.loads(out.stdout)["streams"]


def key(p, timing=True):
    base = (int(p["size"]), p["data_hash"])
    return (p.get("pts"), p.get("dts"), p.get("duration")) + base if timing else base


def check(name, tmp, extract, clips, extra, expect_clips):
    out = os.path.join(tmp, name + ".mp4")
    args = [extract, "mux", VIDEO] + sum((["--audio", c] for c in clips), []) + extra + [out]
    result = run(*args)
    if result.returncode != 0:
        return "mux exited %d: %s" % (result.returncode, result.stderr.strip())
    if [key(p) for p in packets(out, "v:0")] != [key(p) for p in packets(VIDEO, "v:0")]:
        return "video packets differ from the input's"
    ours = [key(p, False) for p in packets(out, "a:0", ignore_editlist=True)]
    expected = []
    for clip in expect_clips:
        expected += [key(p, False) for p in packets(clip, "a:0", ignore_editlist=True)]
    if ours != expected[:len(ours)] or not ours:
        first = next((i for i, (a, b) in enumerate(zip(ours, expected)) if a != b), len(ours))
        return "audio packet %d is not the clips' (ours %d packets, clips %d)" % (first, len(ours), len(expected))
    info = streams(out)
    video = next(s for s in info if s["codec_type"] == "video")
    audio = [s for s in info if s["codec_type"] == "audio"]
    music = audio[0]
    if "--offset" in extra:
        # The music starts later (an empty edit); it must still end with the video: the
        # last packet straddles the video's end, cut there by the edit list.
        offset = float(extra[extra.index("--offset") + 1])
        if abs(float(music["start_time"]) - offset) > 0.001:
            return "audio starts at %s, not at the offset %s" % (music["start_time"], offset)
        last = packets(out, "a:0")[-1]
        rate = int(music["sample_rate"])
        end = float(video["duration"]) + float(video["start_time"])
        if not int(last["pts"]) / rate < end <= (int(last["pts"]) + int(last["duration"])) / rate:
            return "the last audio packet does not straddle the video's end (%s s)" % end
    else:
        if expect_full_length(extra, clips) and abs(float(music["duration"]) - float(video["duration"])) > 0.001:
            return "audio lasts %s s, video %s s" % (music["duration"], video["duration"])
        if music.get("start_time") != video.get("start_time"):
            return "audio starts at %s, video at %s" % (music.get("start_time"), video.get("start_time"))
    if "--keep-original-audio" in extra:
        if len(audio) != 2:
            return "expected the original audio as a second track, got %d audio streams" % len(audio)
        if [key(p) for p in packets(out, "a:1")] != [key(p) for p in packets(VIDEO, "a:0")]:
            return "the kept original audio differs from the input's"
    decode = run("ffmpeg", "-nostdin", "-v", "error", "-i", out, "-map", "0", "-f", "null", "-")
    if decode.stderr.strip():
        return "ffmpeg reports: " + decode.stderr.strip().splitlines()[0]
    return None


def expect_full_length(extra, clips):
    return "--loop" in extra or len(clips) > 1 or "long" in clips[0]


def main():
    build = run("swift", "build", "-c", "release", "-q")
    if build.returncode != 0:
        print(build.stdout + build.stderr)
        print("0 passed, 1 failed")
        return 1
    bindir = run("swift", "build", "-c", "release", "--show-bin-path").stdout.strip()
    extract = os.path.join(bindir, "extract-audio")
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        def clip(name, frequency, seconds):
            path = os.path.join(tmp, name + ".m4a")
            run("ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i",
                "sine=frequency=%d:duration=%s:sample_rate=44100" % (frequency, seconds),
                "-ac", "2", "-c:a", "aac", "-b:a", "64k", path)
            return path
        a, b, c = clip("a", 330, 1.3), clip("b", 660, 1.1), clip("c", 880, 1.8)
        long = clip("long", 440, 4.5)
        cases = [
            ("three-clips", [a, b, c], [], [a, b, c]),
            ("clip-longer-than-video", [long], [], [long]),
            ("loop", [b], ["--loop"], [b, b, b]),
            ("keep-original-audio", [long], ["--keep-original-audio"], [long]),
            ("offset", [long], ["--offset", "0.5"], [long]),
            # A fragmented clip (FFmpeg's frag_keyframe audio-only .m4a), looped.
            ("fragmented-clip-looped", [FRAGMENTED], ["--loop"], [FRAGMENTED, FRAGMENTED]),
        ]
        for name, clips, extra, expect in cases:
            try:
                reason = check(name, tmp, extract, clips, extra, expect)
            except Exception as error:  # a tool failed: report, do not crash
                reason = "error: %s" % error
            if reason:
                failed += 1
                print("FAIL mux %s: %s" % (name, reason))
            else:
                passed += 1
                print("ok   mux %s" % name)
        # The refusals: a video without video, clips coded differently.
        mono = os.path.join(tmp, "mono.m4a")
        run("ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "sine=duration=1", "-ac", "1",
            "-c:a", "aac", mono)
        for name, args, status in [("refuses-different-clips", [VIDEO, "--audio", a, "--audio", mono], 69),
                                   ("refuses-video-without-video", [a, "--audio", b], 79)]:
            out = os.path.join(tmp, name + ".mp4")
            result = run(extract, "mux", *args, out)
            if result.returncode == status and not os.path.exists(out):
                passed += 1
                print("ok   mux %s" % name)
            else:
                failed += 1
                print("FAIL mux %s: exit %d, %s" % (name, result.returncode, result.stderr.strip()))
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
