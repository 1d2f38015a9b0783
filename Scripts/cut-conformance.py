#!/usr/bin/env python3
"""Conformance of frame-accurate cuts (`extract-audio remux --from/--to`, issue 14).

Makes short inputs with ffmpeg in a temporary folder (H.264 with B-frames and a 2 s GOP +
AAC, HEVC + Opus, HEVC + AC-3; 160x120, 10 s), cuts each at times that are not keyframes,
and checks what two independent decoders make of the cut, against the source decoded by
the same decoder (never against our own parser):
  - FFmpeg and GStreamer start the video at the frame presented at --from (its checksum
    equals the source's frame at that time) and decode exactly the frames of [from, to);
  - the decoded audio starts with the source's sample at --from (aligned to the sample,
    and close to it: lossy decoders restart from the pre-roll) and lasts to - from
    (FFmpeg: up to one frame more, it does not trim the last packet; GStreamer: within
    one frame);
  - GStreamer 1.22 ends a stream early by its first edit's media_time (fixed upstream):
    exactly that shortfall is allowed at the end of GStreamer checks, nothing else;
  - GStreamer's audio twice: with qtdemux and the decoder alone (avdec_aac, avdec_opus,
    avdec_ac3), the samples are the source's from the first; with decodebin, as players
    build it, 1.22's audio parser drops a pre-roll frame lying wholly before the edit's
    start (it says so in its log, which is read), and then, exactly, the rest of the packet
    presenting --from is not checked;
  - --fragment output: ffprobe and GStreamer read it, every fragment starts with a video
    sync sample, its packets equal the progressive cut's;
  - the same for `extract-audio IN OUT.m4a --from --to` (the audio cut of extraction);
  - an empty or reversed range and a broken input exit 64/65 with one line and leave
    nothing behind;
  - Fixtures/timeline/ (fragmented files whose tracks start late on the decode clock): the
    range counts from the file's start (FFmpeg's start_time, where an edit's skipped
    priming is not counted: see presented_starts), the frames and the
    audio of the cut, and of the audio extraction, checked as above in both players.
With --table, also cuts with `ffmpeg -ss A -to B -c copy` (input and output seeking) and
prints a Markdown table: start error in frames, frame count error, audio duration error,
time (the table in Benchmarks/RESULTS.md).
Prints one ok/FAIL line per check and a final "N passed, M failed"; exits 1 on failure.
Set EXTRACT_AUDIO to a built binary to skip the release build.
"""
import array
import glob
import hashlib
import json
import math
import os
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Scripts"))
import mp4box  # noqa: E402
from oracle.binary import extract_audio  # noqa: E402
from oracle.ffprobe import packets as ffprobe_packets  # noqa: E402
from oracle.report import Checks  # noqa: E402
from oracle.run import run  # noqa: E402

# name, video codec args, fps, audio codec args, sample rate, audio frame size, cuts.
# Cut times sit on frame boundaries (multiples of 1/fps) and never on a keyframe (every 2 s).
INPUTS = [
    ("h264-aac", ["-c:v", "libx264", "-bf", "2", "-x264-params", "keyint=50:min-keyint=50:scenecut=0"], 25,
     ["-c:a", "aac", "-b:a", "64k"], 48000, 1024, "avdec_aac",
     [("2.52", "7.28"), ("0:03.4", "0:05.8"), ("5.2", None), ("0.6", "1.4"), ("0.24", "3.04"), ("0.7", "3.01")]),
    ("hevc-opus", ["-c:v", "libx265", "-tag:v", "hvc1", "-x265-params",
                   "keyint=50:min-keyint=50:scenecut=0:bframes=3:log-level=error"], 25,
     ["-c:a", "libopus", "-b:a", "64k"], 48000, 960, "avdec_opus",
     [("2.6", "7.2"), ("3.4", "8.6")]),
    ("hevc-ac3", ["-c:v", "libx265", "-tag:v", "hvc1", "-x265-params",
                  "keyint=60:min-keyint=60:scenecut=0:bframes=2:log-level=error"], 30,
     ["-c:a", "ac3", "-b:a", "96k"], 48000, 1536, "avdec_ac3",
     [("2.6", "7.2"), ("4.4", None)]),
]

checks = Checks()
# Unbounded queues: with two branches, a full bounded queue can stall the other branch.
QUEUE = ["queue", "max-size-buffers=0", "max-size-bytes=0", "max-size-time=0"]


def check(ok, name, detail=""):
    return checks.check(name, ok, detail, detail_if_ok=False)


def seconds(text):
    if text is None:
        return None
    total = 0.0
    for part in text.split(":"):
        total = total * 60 + float(part)
    return total


def make_input(tmp, name, vargs, fps, aargs, rate):
    path = os.path.join(tmp, name + ".mp4")
    out = run("ffmpeg", "-nostdin", "-v", "error", "-y",
              "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=%d" % fps,
              # A chirp: no two stretches alike, so an offset by one sample shows.
              "-f", "lavfi", "-i", "aevalsrc=sin(2*PI*(220+90*t)*t):s=%d:d=10" % rate,
              "-t", "10", "-pix_fmt", "yuv420p", *vargs, *aargs, "-ac", "1", path)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.decode())
    return path


def ffmpeg_frames(path):
    """MD5 of each decoded video frame, in presentation order (FFmpeg)."""
    out = run("ffmpeg", "-nostdin", "-v", "error", "-i", path, "-map", "0:v:0", "-pix_fmt", "yuv420p",
              "-f", "framemd5", "-")
    return [line.split(",")[-1].strip() for line in out.stdout.decode().splitlines()
            if line and not line.startswith("#")]


def ffmpeg_audio(path):
    out = run("ffmpeg", "-nostdin", "-v", "error", "-i", path, "-map", "0:a:0", "-ac", "1", "-f", "s16le",
              "-acodec", "pcm_s16le", "-")
    samples = array.array("h")
    samples.frombytes(out.stdout[:len(out.stdout) // 2 * 2])
    return samples


# GStreamer's audio parsers (baseparse subclasses decodebin puts before the decoder).
AUDIO_PARSERS = ("<aacparse", "<opusparse", "<ac3parse", "<mpegaudioparse", "<flacparse")


def gst_decode(path, work, has_audio=True, has_video=True, audio_decoder="decodebin"):
    """(frame MD5s, audio samples, audio frames the parser dropped) as GStreamer 1.22 decodes
    `path`: with decodebin, as players do, or with `audio_decoder` alone after qtdemux.

    The count is of the frames an audio parser dropped as lying wholly before the segment
    (baseparse's "Dropped frame, before segment"): a cut's pre-roll, which the decoder then
    never sees."""
    frames_dir = os.path.join(work, "frames")
    os.makedirs(frames_dir, exist_ok=True)
    for old in glob.glob(os.path.join(frames_dir, "*")):
        os.remove(old)
    pcm = os.path.join(work, "audio.raw")
    pipeline = ["gst-launch-1.0", "-q", "filesrc", "location=" + path, "!", "qtdemux", "name=d"]
    if has_video:
        pipeline += ["d.video_0", "!", *QUEUE, "!", "decodebin", "!", "videoconvert", "!",
                     "video/x-raw,format=I420", "!", "multifilesink", "sync=false",
                     "location=" + os.path.join(frames_dir, "%06d.raw")]
    if has_audio:
        pipeline += ["d.audio_0", "!", *QUEUE, "!", audio_decoder, "!", "audioconvert", "!",
                     "audio/x-raw,format=S16LE,channels=1", "!", "filesink", "sync=false", "location=" + pcm]
    env = dict(os.environ, GST_DEBUG="baseparse:6", GST_DEBUG_NO_COLOR="1")
    out = run(*pipeline, timeout=120, env=env)
    if out.returncode != 0:
        raise RuntimeError("gst-launch: " + out.stderr.decode(errors="replace")[-300:])
    dropped = sum(1 for line in out.stderr.decode(errors="replace").splitlines()
                  if "Dropped frame, before segment" in line and any(p in line for p in AUDIO_PARSERS))
    frames = [hashlib.md5(open(f, "rb").read()).hexdigest() for f in sorted(glob.glob(frames_dir + "/*.raw"))]
    samples = array.array("h")
    if has_audio and os.path.exists(pcm):
        data = open(pcm, "rb").read()
        samples.frombytes(data[:len(data) // 2 * 2])
    return frames, samples, dropped


def gst_audio_checks(label, path, tmp, has_video, decoder, source, rate, frame, start, expected, allowed_short):
    # has_video: decode the video beside the audio, as a player's pipeline does.
    """GStreamer's audio of a cut, two ways. qtdemux and the decoder alone: the samples must
    be the source's from the first one. decodebin, as players build it: GStreamer 1.22's
    audio parser (baseparse) drops the pre-roll frames lying wholly before the edit's start,
    so the decoder meets the packet presenting --from cold, and exactly that packet's output
    is wrong; the check allows exactly that (the rest of that packet, from --from) and only
    when the parser says it dropped frames, and checks the alignment and the samples after it."""
    rounding = gst_rounding_lag(path)
    _, samples, _ = gst_decode(path, os.path.join(tmp, "gstdirect"), has_video=False, audio_decoder=decoder)
    check_audio(label, f"GStreamer ({decoder})", source, samples, rate, frame, start, expected, allowed_short,
                rounding=rounding)
    _, samples, dropped = gst_decode(path, os.path.join(tmp, "gstaudio"), has_video=has_video)
    skip = 0
    if dropped:
        media_time = round(mp4box.first_edit_media_time(path, b"soun") * rate)
        skip = (frame - media_time % frame) % frame or frame
    check_audio(label, "GStreamer", source, samples, rate, frame, start, expected, allowed_short, skip=skip,
                why="" if not skip else f"; its parser dropped {dropped} pre-roll frame(s)", rounding=rounding)


def gst_rounding_lag(path):
    """The start error, in samples (0 or -1), that GStreamer 1.22 makes on the audio of
    `path` by rounding alone: it turns the first edit's media_time and the timestamp of the
    packet holding it into nanoseconds, each rounded down, and clips that packet's decoded
    samples by their difference, rounded down again. At 48 kHz (20833.3 ns a sample) the
    difference loses up to a nanosecond, and when it does GStreamer starts one sample
    early (measured on AAC: cuts at 0.7 and 5.555 s, where FFmpeg starts exactly; never
    where this says 0). The file is right; where this says -1 the checks accept that lag
    as well as 0 (AC-3, whose packets last a whole number of nanoseconds, measures 0
    where this says -1: the arithmetic is GStreamer's and only bounded here)."""
    data = open(path, "rb").read()
    boxes = mp4box.read_tree(data)
    moov = mp4box.top(boxes, b"moov")
    for trak in (c for c in moov.children if c.kind == b"trak"):
        if mp4box.handler_type(data, trak) != b"soun":
            continue
        timescale, _ = mp4box.timescale_and_duration(data, trak.child(b"mdia").child(b"mdhd"))
        media_time = next((e[1] for e in mp4box.edit_list(data, trak) or [] if e[1] >= 0), 0)
        start = 0
        for _, _, duration in mp4box.table_samples(data, trak):
            if start + duration > media_time:
                break
            start += duration
        nanoseconds = lambda ticks: ticks * 10**9 // timescale
        dropped = (nanoseconds(media_time) - nanoseconds(start)) * timescale // 10**9
        return dropped - (media_time - start)
    return 0


def snr(reference, signal):
    power = sum(float(x) * x for x in reference) or 1.0
    noise = sum((float(a) - b) ** 2 for a, b in zip(reference, signal)) or 1e-9
    return 10 * math.log10(power / noise)


def audio_start(source, cut, offset, window=2048, lags=48, skip=0):
    """(lag that matches best, SNR at lag 0) of `window` samples of `cut` from `skip` against
    `source` from `offset` + `skip`."""
    head = cut[skip:skip + window]
    offset += skip
    best, best_error = None, None
    for lag in range(-lags, lags + 1):
        start = offset + lag
        if start < 0 or start + len(head) > len(source):
            continue
        error = sum((float(a) - b) ** 2 for a, b in zip(head, source[start:start + len(head)]))
        if best_error is None or error < best_error:
            best, best_error = lag, error
    return best, snr(source[offset:offset + len(head)], head)


def check_video(label, decoder, source_frames, frames, k, expected, allowed_short,
                first="the frame presented at --from"):
    if not check(len(frames) > 0, f"{label}: {decoder} decodes video"):
        return
    start_ok = frames[0] == source_frames[k] if k < len(source_frames) else False
    detail = ""
    if not start_ok and frames[0] in source_frames:
        detail = f"starts at source frame {source_frames.index(frames[0])}, not {k}"
    check(start_ok, f"{label}: {decoder} starts at {first} (source frame {k})", detail)
    if decoder == "GStreamer":
        # GStreamer 1.22 ends a stream early by its first edit's media_time (fixed upstream).
        count_ok = expected - allowed_short <= len(frames) <= expected
        what = f"{expected} frames (GStreamer may end up to {allowed_short} early)"
    else:
        count_ok = len(frames) == expected
        what = f"{expected} frames"
    check(count_ok, f"{label}: {decoder} decodes {what}", f"decoded {len(frames)}")
    same = frames == source_frames[k:k + len(frames)]
    check(same, f"{label}: {decoder} frames are the source's, in order")


def check_audio(label, decoder, source, samples, rate, frame, start, expected, allowed_short, skip=0, why="",
                rounding=0):
    if not check(len(samples) > 0, f"{label}: {decoder} decodes audio"):
        return
    offset = round(start * rate)
    lag, quality = audio_start(source, samples, offset, skip=skip)
    where = "" if skip == 0 else f" (checked from {skip} samples in{why})"
    if rounding and lag == rounding:
        # The one lag GStreamer's rounding can make here (see gst_rounding_lag): the SNR there.
        _, quality = audio_start(source, samples, offset + lag, skip=skip)
        where += f" (its nanosecond rounding starts it {-lag} sample early)"
    check(lag in (0, rounding) and quality >= 20,
          f"{label}: {decoder} audio starts with the source's sample at --from{where}",
          f"best lag {lag}, SNR {quality:.1f} dB")
    n = len(samples)
    if decoder == "FFmpeg":
        ok = expected <= n <= expected + frame
        what = f"{expected}..{expected + frame}"
    else:
        # GStreamer 1.22 ends a stream early by its first edit's media_time (fixed upstream).
        low = expected - frame - round(allowed_short * rate)
        ok = low <= n <= expected + frame
        what = f"{low}..{expected + frame}"
    check(ok, f"{label}: {decoder} audio lasts to - from ({what} samples)", f"decoded {n}")


def fragment_checks(tool, tmp, source, cut, label, args, fps):
    fragmented = os.path.join(tmp, "frag.mp4")
    out = run(tool, "remux", source, fragmented, "--overwrite", "--quiet", "--fragment", "1", *args)
    if not check(out.returncode == 0, f"{label}: remux --fragment 1", out.stderr.decode().strip()):
        return

    def packets(path):
        o = ffprobe_packets(path, ignore_editlist=True)
        return json.loads(o.stdout).get("packets", [])
    a, b = packets(cut), packets(fragmented)
    key = lambda p: (p["stream_index"], p.get("pts"), p.get("dts"), p["size"], p["data_hash"], p["flags"][0])
    check(len(a) == len(b) and sorted(map(key, a)) == sorted(map(key, b)),
          f"{label}: fragmented packets equal the progressive cut's", f"{len(a)} vs {len(b)} packets")
    data = open(fragmented, "rb").read()
    boxes = mp4box.read_tree(data)
    moov = mp4box.top(boxes, b"moov")
    video_id = None
    for trak in (c for c in moov.children if c.kind == b"trak"):
        if mp4box.handler_type(data, trak) == b"vide":
            video_id = mp4box.track_id(data, trak)
    samples = mp4box.fragment_samples(data, boxes, video_id)
    firsts = {}
    for s in samples:
        firsts.setdefault(s["moof"], s["offset"])
    keyed = {int(p["pos"]) for p in b if p["flags"].startswith("K")}
    check(len(firsts) > 1 and all(offset in keyed for offset in firsts.values()),
          f"{label}: each of {len(firsts)} fragments starts with a video sync sample")
    try:
        frames, _, _ = gst_decode(fragmented, os.path.join(tmp, "gstfrag"))
        reference, _, _ = gst_decode(cut, os.path.join(tmp, "gstfrag"))
        # The frames of the progressive cut; GStreamer 1.22 may end early by the first edit's
        # media_time (in fragments it does not always end at the same frame).
        short = math.ceil(mp4box.first_edit_media_time(fragmented, b"vide") * fps - 1e-9)
        check(len(frames) > 0 and frames == reference[:len(frames)] and len(frames) >= len(reference) - short,
              f"{label}: GStreamer plays the fragmented cut as the progressive one",
              f"{len(frames)} vs {len(reference)} frames")
    except (RuntimeError, subprocess.TimeoutExpired) as error:
        check(False, f"{label}: GStreamer plays the fragmented cut", str(error))
    o = run("ffmpeg", "-nostdin", "-v", "error", "-i", fragmented, "-f", "null", "-")
    check(o.returncode == 0 and not o.stderr.strip(), f"{label}: ffmpeg decodes the fragmented cut cleanly",
          o.stderr.decode()[-200:])


def audio_cut_checks(tool, tmp, source, label, args, rate, frame, decoder, start, expected, src_ff, src_gst):
    """`extract-audio IN OUT.m4a --from --to`: the audio cut, decoded by both."""
    m4a = os.path.join(tmp, "cut.m4a")
    out = run(tool, source, m4a, "--overwrite", "--quiet", *args)
    label = label + " audio extraction"
    if not check(out.returncode == 0, f"{label}: extract-audio --from/--to", out.stderr.decode().strip()):
        return
    check_audio(label, "FFmpeg", src_ff, ffmpeg_audio(m4a), rate, frame, start, expected, 0)
    try:
        gst_audio_checks(label, m4a, tmp, False, decoder, src_gst, rate, frame, start, expected,
                         mp4box.first_edit_media_time(m4a, b"soun"))
    except (RuntimeError, subprocess.TimeoutExpired) as error:
        check(False, f"{label}: GStreamer decodes the audio cut", str(error))


# Fragmented files whose tracks start late on the decode clock (Fixtures/timeline/): cuts
# count from the file's start (where its first track starts), for every track alike (issue 32).
TIMELINE = [("hls-late.mp4", [("0.3", "0.7"), ("0.4", "0.9"), ("0", "0.5")]),
            ("dash-late.mp4", [("0.3", "0.7"), ("1.22", "1.9"), ("0", "0.5")])]


def presented_starts(path):
    """Where each stream starts on the file's clock, by FFmpeg's packet times, {"video": s,
    "audio": s}: where its edit starts its media, its first decoded sample's time plus the
    edit's media time (read by mp4box.py). In fragments FFmpeg applies an edit's media time
    as a shift (mov.c time_offset) and so also presents what the edit skips (an AAC
    priming: its start_time is that much earlier); a B-frame delay without an edit stays a
    delay, as GStreamer and a regular file place it (FFmpeg's start_time is the first
    frame's, corpus-cuts.py's clock is the file's pts)."""
    data = open(path, "rb").read()
    moov = mp4box.top(mp4box.read_tree(data), b"moov")
    media_times = {}
    for trak in (c for c in moov.children if c.kind == b"trak"):
        handler = mp4box.handler_type(data, trak)
        timescale, _ = mp4box.timescale_and_duration(data, trak.child(b"mdia").child(b"mdhd"))
        edits = [e for e in mp4box.edit_list(data, trak) or [] if e[1] >= 0]
        media_times[{b"vide": "video", b"soun": "audio"}.get(handler)] = edits[0][1] / timescale if edits else 0
    out = json.loads(run("ffprobe", "-v", "error", "-show_entries", "packet=stream_index,pts_time,dts_time:"
                         "stream=index,codec_type", "-of", "json", path).stdout)
    kinds = {s["index"]: s["codec_type"] for s in out["streams"]}
    starts = {}
    for kind in ("video", "audio"):
        packets = [p for p in out["packets"] if kinds[p["stream_index"]] == kind]
        starts[kind] = float(packets[0]["dts_time"]) + media_times.get(kind, 0)
    return starts


def frame_spans(path):
    """(start, end, MD5) of each video frame FFmpeg decodes, on the stream's clock (ffprobe's
    frame times; the MD5s from framemd5, in the same presentation order)."""
    out = run("ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "frame=pts_time",
              "-of", "csv=p=0", path)
    times = [float(line.split(",")[0]) for line in out.stdout.decode().split() if line.strip()]
    md5s = ffmpeg_frames(path)
    if len(times) != len(md5s):
        raise RuntimeError(f"{len(times)} frame times, {len(md5s)} frames")
    ends = times[1:] + [times[-1] + (times[-1] - times[-2])]
    return list(zip(times, ends, md5s))


def nanosecond_lag(path, rate):
    """-1 where the audio edit's media_time is no whole number of nanoseconds, else 0.
    GStreamer 1.22 clips a decoded packet that ends exactly at the edit's start by its
    nanosecond times, the edit's rounded down and the packet's end rounded up, so it keeps
    one sample of it (measured: dash-late.mp4 cut from 0, media_time 1024 of 44100, starts
    one sample early in GStreamer, exactly in FFmpeg); gst_rounding_lag covers an edit
    inside a packet."""
    ticks = round(mp4box.first_edit_media_time(path, b"soun") * rate)
    return -1 if ticks * 10**9 % rate else 0


def timeline_checks(tool, tmp):
    folder = os.path.join(ROOT, "Fixtures", "timeline")
    for name, cuts in TIMELINE:
        source = os.path.join(folder, name)
        starts = presented_starts(source)
        origin = min(starts.values())
        spans = [(a - origin, b - origin, md5) for a, b, md5 in frame_spans(source)]
        src_ff_audio = ffmpeg_audio(source)
        # FFmpeg's decode of the source starts at its start_time (priming and all).
        ff_audio_start = float(json.loads(run("ffprobe", "-v", "error", "-select_streams", "a:0", "-show_entries",
                                              "stream=start_time", "-of", "json", source).stdout)
                               ["streams"][0]["start_time"]) - origin
        for start_text, end_text in cuts:
            start, end = float(start_text), float(end_text)
            label = f"timeline/{name} [{start_text}, {end_text})"
            cut = os.path.join(tmp, "timeline-cut.mp4")
            out = run(tool, "remux", source, cut, "--overwrite", "--quiet", "--from", start_text, "--to", end_text)
            if not check(out.returncode == 0, f"{label}: remux", out.stderr.decode().strip()):
                continue
            wanted = [i for i, (a, b, _) in enumerate(spans) if b > start + 1e-9 and a < end - 1e-9]
            k = wanted[0]
            md5s = [md5 for _, _, md5 in spans]
            frames = ffmpeg_frames(cut)
            # FFmpeg 5.1 drops the frame that starts before the edit (see main).
            straddles = spans[k][0] < start - 1e-9
            k_ffmpeg = k + 1 if straddles and frames[:1] == md5s[k + 1:k + 2] else k
            check_video(label, "FFmpeg", md5s, frames, k_ffmpeg, wanted[-1] + 1 - k_ffmpeg, 0,
                        "the frame presented at --from on the file's clock" if k_ffmpeg == k
                        else "the first frame that starts after --from (FFmpeg drops the one it falls in)")
            rate = 44100
            expected_audio = round((min(end, len(src_ff_audio) / rate + ff_audio_start) - start) * rate)
            check_audio(label, "FFmpeg", src_ff_audio, ffmpeg_audio(cut), rate, 1024, start - ff_audio_start,
                        expected_audio, 0)
            try:
                gst_frames, _, _ = gst_decode(cut, os.path.join(tmp, "gsttimelinecut"), has_audio=False)
                short = math.ceil(mp4box.first_edit_media_time(cut, b"vide") * 25 - 1e-9)
                check_video(label, "GStreamer", md5s, gst_frames, k, wanted[-1] + 1 - k, short,
                            "the frame presented at --from on the file's clock")
                _, samples, _ = gst_decode(cut, os.path.join(tmp, "gsttimelinecut"), has_video=False,
                                           audio_decoder="avdec_aac")
                # Against FFmpeg's decode of the source: both decode with libavcodec, and
                # GStreamer 1.22's own decode of such a source is not on either clock (its
                # audio starts 357 samples into FFmpeg's on dash-late.mp4, neither 0 nor the
                # edit's 1024), so it is no reference; the cut's edit is what is checked.
                check_audio(label, "GStreamer (avdec_aac)", src_ff_audio, samples, rate, 1024,
                            start - ff_audio_start, expected_audio, mp4box.first_edit_media_time(cut, b"soun"),
                            rounding=gst_rounding_lag(cut) or nanosecond_lag(cut, rate))
            except (RuntimeError, subprocess.TimeoutExpired) as error:
                check(False, f"{label}: GStreamer decodes the cut", str(error))
            # The audio cut of extraction counts on the same clock.
            m4a = os.path.join(tmp, "timeline-cut.m4a")
            out = run(tool, source, m4a, "--overwrite", "--quiet", "--from", start_text, "--to", end_text)
            if not check(out.returncode == 0, f"{label} audio extraction: extract-audio --from/--to",
                         out.stderr.decode().strip()):
                continue
            check_audio(label + " audio extraction", "FFmpeg", src_ff_audio, ffmpeg_audio(m4a), rate, 1024,
                        start - ff_audio_start, expected_audio, 0)
            try:
                _, samples, _ = gst_decode(m4a, os.path.join(tmp, "gsttimelinem4a"), has_video=False,
                                           audio_decoder="avdec_aac")
                check_audio(label + " audio extraction", "GStreamer (avdec_aac)", src_ff_audio, samples, rate, 1024,
                            start - ff_audio_start, expected_audio, mp4box.first_edit_media_time(m4a, b"soun"),
                            rounding=gst_rounding_lag(m4a) or nanosecond_lag(m4a, rate))
            except (RuntimeError, subprocess.TimeoutExpired) as error:
                check(False, f"{label} audio extraction: GStreamer decodes it", str(error))


def error_checks(tool, tmp, source):
    folder = os.path.join(tmp, "errors")
    os.makedirs(folder, exist_ok=True)
    broken = os.path.join(folder, "broken.mp4")
    with open(source, "rb") as f:
        head = bytearray(f.read(4096))
    head[40:48] = b"\xff" * 8
    open(broken, "wb").write(bytes(head))
    cases = [
        ("--from after --to", [source, "--from", "5", "--to", "3"], 64),
        ("an empty range", [source, "--from", "3", "--to", "3"], 64),
        ("a range past the end", [source, "--from", "60", "--to", "70"], 64),
        ("a bad time", [source, "--from", "1:75"], 64),
        ("a broken input", [broken, "--from", "1", "--to", "2"], 65),
    ]
    for name, args, status in cases:
        output = os.path.join(folder, "out.mp4")
        out = run(tool, "remux", args[0], output, *args[1:])
        lines = out.stderr.decode().strip().splitlines()
        left = sorted(set(os.listdir(folder)) - {"broken.mp4"})
        check(out.returncode == status and len(lines) == 1 and not left,
              f"errors: {name} exits {status} with one line and leaves nothing",
              f"exit {out.returncode}, {len(lines)} lines, left {left}: {out.stderr.decode().strip()}")


def main():
    table = "--table" in sys.argv
    tool = extract_audio(ROOT)
    if tool is None:
        return 1
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        if "--timeline-only" in sys.argv:
            timeline_checks(tool, tmp)
            checks.finish()
            return 0
        for name, vargs, fps, aargs, rate, frame, decoder, cuts in INPUTS:
            source = make_input(tmp, name, vargs, fps, aargs, rate)
            src_ff_frames, src_ff_audio = ffmpeg_frames(source), ffmpeg_audio(source)
            src_gst_frames, src_gst_audio, _ = gst_decode(source, os.path.join(tmp, "gstsrc"))
            for n, (start_text, end_text) in enumerate(cuts):
                start, end = seconds(start_text), seconds(end_text)
                label = f"{name} [{start_text}, {end_text or 'end'})"
                cut = os.path.join(tmp, f"{name}-{n}.mp4")
                args = ["--from", start_text] + (["--to", end_text] if end_text else [])
                began = time.monotonic()
                out = run(tool, "remux", source, cut, "--overwrite", "--quiet", *args)
                elapsed = time.monotonic() - began
                if not check(out.returncode == 0, f"{label}: remux", out.stderr.decode().strip()):
                    continue
                # The frame presented at --from is the one whose display interval holds it; the
                # range's frames are those shown in [from, to). GStreamer shows exactly these.
                # FFmpeg 5.1 drops a first frame that starts before the edit (its pts would be
                # negative), so where --from falls inside a frame it starts at the next one:
                # that frame, and only for such a cut, is allowed it (measured: 0.7 s shows
                # frame 17 in GStreamer, 18 in FFmpeg; on frame boundaries both agree).
                k = math.floor(start * fps + 1e-6)
                k_ffmpeg = math.ceil(start * fps - 1e-6)
                end_frame = math.ceil(end * fps - 1e-6) if end else None
                expected = (end_frame if end else len(src_gst_frames)) - k
                expected_ffmpeg = (end_frame if end else len(src_ff_frames)) - k_ffmpeg
                expected_audio = round(((end if end else len(src_ff_audio) / rate) - start) * rate)
                check_video(label, "FFmpeg", src_ff_frames, ffmpeg_frames(cut), k_ffmpeg, expected_ffmpeg, 0,
                            "the frame presented at --from" if k_ffmpeg == k
                            else "the first frame that starts after --from (FFmpeg drops the one it falls in)")
                check_audio(label, "FFmpeg", src_ff_audio, ffmpeg_audio(cut), rate, frame, start,
                            expected_audio, 0)
                try:
                    frames, _, _ = gst_decode(cut, os.path.join(tmp, "gstcut"), has_audio=False)
                    video_short = math.ceil(mp4box.first_edit_media_time(cut, b"vide") * fps - 1e-9)
                    check_video(label, "GStreamer", src_gst_frames, frames, k, expected, video_short)
                    gst_audio_checks(label, cut, tmp, False, decoder, src_gst_audio, rate, frame, start,
                                     expected_audio, mp4box.first_edit_media_time(cut, b"soun"))
                except (RuntimeError, subprocess.TimeoutExpired) as error:
                    check(False, f"{label}: GStreamer decodes the cut", str(error))
                if n == 0:
                    fragment_checks(tool, tmp, source, cut, label, args, fps)
                    audio_cut_checks(tool, tmp, source, label, args, rate, frame, decoder, start, expected_audio,
                                     src_ff_audio, src_gst_audio)
                if table:
                    # Decoded by FFmpeg: against the frames FFmpeg shows for the range.
                    rows.append(compare(name, label, tool, source, cut, start_text, end_text, fps, rate, k_ffmpeg,
                                        expected_ffmpeg, expected_audio, src_ff_frames, elapsed, tmp))
            if name == INPUTS[0][0]:
                error_checks(tool, tmp, source)
        timeline_checks(tool, tmp)
    if table:
        print()
        print("| Input, range | Tool | Start error (frames) | Frames decoded − expected | "
              "Audio duration error (ms) | Time (ms) |")
        print("|---|---|---|---|---|---|")
        for group in rows:
            for row in group:
                print("| " + " | ".join(str(c) for c in row) + " |")
    checks.finish()


def compare(name, label, tool, source, cut, start_text, end_text, fps, rate, k, expected, expected_audio,
            src_frames, ours_time, tmp):
    """Rows of the side-by-side table: ours, ffmpeg -ss before -i, ffmpeg -ss after -i."""
    rows = []
    span = ["-to", end_text] if end_text else []
    variants = [("extract-audio remux", None, ours_time)]
    for kind in ("input", "output"):
        path = os.path.join(tmp, f"ff-{kind}.mp4")
        if kind == "input":
            args = ["ffmpeg", "-nostdin", "-v", "error", "-y", "-ss", start_text, *span, "-i", source,
                    "-map", "0", "-c", "copy", path]
        else:
            args = ["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", source, "-ss", start_text, *span,
                    "-map", "0", "-c", "copy", path]
        began = time.monotonic()
        run(*args)
        variants.append((f"ffmpeg -ss ({kind} seeking) -c copy", path, time.monotonic() - began))
    for tool_name, path, elapsed in variants:
        frames = ffmpeg_frames(path or cut)
        audio = ffmpeg_audio(path or cut)
        if frames and frames[0] in src_frames:
            start_error = src_frames.index(frames[0]) - k
        else:
            start_error = "not a source frame"
        rows.append([f"{label}", tool_name, start_error, len(frames) - expected,
                     round((len(audio) - expected_audio) * 1000 / rate, 1), round(elapsed * 1000)])
    return rows


if __name__ == "__main__":
    sys.exit(main())
