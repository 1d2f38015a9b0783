#!/usr/bin/env python3
"""Frame-accurate cuts (`extract-audio remux --from A --to B`) of every real-world video
file of the shared corpus, judged by FFmpeg and by GStreamer.

Scope, decided by class at run time, never by file name: every file of the corpus folder
(`../shared/corpus/` beside the project, or $CORPUS_DIR) that ffprobe opens alone, that has
a video stream (cover art and chapter images, FFmpeg's attached pictures, are not video),
whose video is not encrypted (an `encv`/`drmi` sample entry: nothing can decode it here),
and of which FFmpeg decodes at least MIN_FRAMES frames. Each file out of scope gets a
"skipped (reason)" line and is not counted. Media segments (`.m4s`) need their init
segment, so ffprobe cannot open them alone: skipped too.

Each file in scope is cut at two ranges, computed from the frames FFmpeg decodes of it:
  - range 1 starts in the middle of the frame about a third into the file;
  - range 2 starts in the frame after the first sync sample from about 55 % of the file
    on and runs to about 85 % (a cut's edit media_time is then small: see GStreamer's
    allowance below, which would leave nothing to check in a range shorter than it);
both at most about 2 s of video and at least 3 frames long, and both bounds at least 1 ms
from every frame's start and end (so that no player's rounding decides the answer).
Each cut is decoded by each player and compared, frame checksum by frame checksum, with
the frames the same player presents for [A, B) when it plays the source: the frames whose
presentation interval [start, next frame's start) meets [A, B), the one presented at A
included although it starts before A (ISO 14496-12 edit-list semantics), and the one
presented at B excluded unless it starts before B.
  - FFmpeg: `-f framemd5` at the source's own 8- or 10-bit 4:2:0 pixel format (no
    conversion; yuv420p for anything else), with -noautorotate, -copyts and
    -enc_time_base -1 so that the timestamps are the demuxer's, in the stream's time base,
    edit lists applied, and the frames those of the file as stored. The CLI's default
    frame-rate mode stays (as a player, it shows no frame timed before 0: FFmpeg 5.1's
    libdav1d wrapper outputs the frames its demuxer marked discard, with negative times).
  - GStreamer: `qtdemux ! decodebin ! videoconvert ! I420 (I420_10LE for 10-bit)`, each
    frame's visible bytes hashed (row padding dropped), each frame's time its stream time
    (pts - segment start + segment time, as `identity` reports buffers and segments): the
    movie's presentation time, since qtdemux maps each edit to a segment.
    Where GStreamer's decode of the source does not reach B (GStreamer 1.22 ends a stream
    early by its first edit's media_time, which on a short file can be all of it), the
    reference is FFmpeg's decode of the source instead: both players decode with
    libavcodec and the frames are byte for byte the same in a 4:2:0 format both produce
    without conversion; if the source is in no such format the GStreamer half is skipped,
    with the reason. So is it when GStreamer has no decoder for the codec (AV1 here).
Two player faults are allowed, exactly, each where it is checked:
  - FFmpeg 5.1 drops a frame that starts before the edit (its packet is marked discard by
    the demuxer), so where A falls inside a frame its decode may start at the next one;
  - GStreamer 1.22 ends a stream early by up to its first edit's media_time (fixed
    upstream): the cut's decode may lack the frames presented in the last media_time
    seconds of the range (the media_time of the cut file's video `elst`).
Anything else is a failure, and so is a remux refusing a file (its one line is printed).
Where that early end covers the whole range (a cut deep in a long GOP) and GStreamer shows
nothing, nothing was checked: "skipped", not counted.
Prints one ok/FAIL line per check with the time its step took, and "N passed, M failed"
last; exits 1 on any failure. Set EXTRACT_AUDIO to a built binary to skip the release
build; files run two at a time.
"""
import hashlib
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Scripts"))
import mp4box  # noqa: E402
from oracle import CORPUS, corpus_names  # noqa: E402
from oracle.binary import extract_audio_and_corpus  # noqa: E402
from oracle.ffprobe import ffprobe  # noqa: E402
from oracle.report import Report, Tally, print_reports  # noqa: E402
from oracle.run import run  # noqa: E402

MIN_FRAMES = 5         # two ranges of at least 3 frames each, inside the file
RANGE_FRAMES = 3       # at least this many frames in a range
RANGE_SECONDS = 2.0    # and at most about this much video (unless that is fewer frames)
MARGIN = 0.001         # each bound at least 1 ms from any frame's start or end
ENCRYPTED_ENTRIES = {b"encv", b"drmi", b"enca", b"drms", b"encs", b"enct"}
# The GStreamer elements that decode each codec (any one will do); codecs not listed are
# tried, and a missing decoder then shows as a failure with GStreamer's message.
GST_DECODERS = {"h264": ["avdec_h264"], "hevc": ["avdec_h265"], "vp9": ["avdec_vp9", "vp9dec"],
                "vp8": ["avdec_vp8", "vp8dec"], "av1": ["av1dec", "dav1ddec", "avdec_av1"],
                "h263": ["avdec_h263"], "mpeg4": ["avdec_mpeg4"], "mjpeg": ["jpegdec", "avdec_mjpeg"],
                "mpeg2video": ["avdec_mpeg2video", "mpeg2dec"], "prores": ["avdec_prores"]}
# 4:2:0 formats both players produce without converting a libavcodec frame (FFmpeg's
# name -> GStreamer's): there the bytes are the same in both.
SHARED_FORMATS = {"yuv420p": "I420", "yuvj420p": "I420", "yuv420p10le": "I420_10LE"}
QUEUE = ["queue", "max-size-buffers=0", "max-size-bytes=0", "max-size-time=0"]

tally = Tally()


def probe(path):
    out = ffprobe(path, "-show_streams", timeout=60)
    if out.returncode != 0:
        return None, out.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["exit status"]
    return json.loads(out.stdout).get("streams", []), None


def video_entries(path):
    """The sample entry kinds of the first video track (from our independent box walker),
    or None when the file cannot be walked."""
    try:
        data = open(path, "rb").read()
        boxes = mp4box.read_tree(data, trailing_ok=True, truncated_ok=True)
        moov = mp4box.top(boxes, b"moov")
        for trak in (c for c in moov.children if c.kind == b"trak"):
            if mp4box.handler_type(data, trak) == b"vide":
                stsd = mp4box.stbl_of(trak).child(b"stsd")
                return {entry.kind for entry in stsd.children}
    except (ValueError, OSError, IndexError):
        return None
    return set()


def ffmpeg_frames(path, stream, pix_fmt):
    """[(start seconds, duration seconds, md5)] of each frame FFmpeg shows, in
    presentation order, the frame size (width, height) and FFmpeg's messages; the
    timestamps are the demuxer's (-copyts), in the stream's time base (-enc_time_base -1)."""
    out = run("ffmpeg", "-nostdin", "-v", "error", "-noautorotate", "-copyts", "-i", path, "-map", f"0:{stream}",
              "-enc_time_base", "-1", "-pix_fmt", pix_fmt, "-f", "framemd5", "-",
              timeout=300)
    frames, base, size = [], None, None
    for line in out.stdout.decode().splitlines():
        if line.startswith("#tb 0:"):
            num, den = line.split(":", 1)[1].strip().split("/")
            base = int(num) / int(den)
        elif line.startswith("#dimensions 0:"):
            size = tuple(int(v) for v in line.split(":", 1)[1].strip().split("x"))
        elif line and not line.startswith("#"):
            fields = [f.strip() for f in line.split(",")]
            frames.append((int(fields[2]) * base, int(fields[3]) * base, fields[5]))
    return frames, size, out.stderr.decode(errors="replace").strip()


def video_timing(path):
    """The first video track's timing as stored, from our box walker (independent of the
    Swift code): (media timescale, movie timescale, edit list or None, [(decode time,
    composition offset)] in decode order, how many of them are the sample table's), in
    media ticks. Sample tables (stts, ctts) and
    movie fragments (trun; tfdt where present, else each fragment follows the last).
    Offsets are read signed in both ctts and trun versions, as both players read them."""
    data = open(path, "rb").read()
    boxes = mp4box.read_tree(data, trailing_ok=True, truncated_ok=True)
    moov = mp4box.top(boxes, b"moov")
    movie_scale, _ = mp4box.timescale_and_duration(data, moov.child(b"mvhd"))
    for trak in (c for c in moov.children if c.kind == b"trak"):
        if mp4box.handler_type(data, trak) != b"vide":
            continue
        scale, _ = mp4box.timescale_and_duration(data, trak.child(b"mdia").child(b"mdhd"))
        stbl = mp4box.stbl_of(trak)
        kinds = {c.kind: c for c in stbl.children}
        durations = []
        stts = kinds[b"stts"]
        for i in range(mp4box.u32(data, stts.payload + 4)):
            count, delta = struct.unpack_from(">II", data, stts.payload + 8 + 8 * i)
            durations += [delta] * count
        offsets = []
        if b"ctts" in kinds:
            ctts = kinds[b"ctts"]
            for i in range(mp4box.u32(data, ctts.payload + 4)):
                count, offset = struct.unpack_from(">Ii", data, ctts.payload + 8 + 8 * i)
                offsets += [offset] * count
        offsets += [0] * (len(durations) - len(offsets))
        samples, dts = [], 0
        for duration, offset in zip(durations, offsets):
            samples.append((dts, offset))
            dts += duration
        table_count = len(samples)
        wanted = mp4box.track_id(data, trak)
        trex_duration = 0
        for mvex in (c for c in moov.children if c.kind == b"mvex"):
            for trex in (c for c in mvex.children if c.kind == b"trex"):
                if mp4box.u32(data, trex.payload + 4) == wanted:
                    trex_duration = mp4box.u32(data, trex.payload + 12)
        for moof in (b for b in boxes if b.kind == b"moof"):
            for traf in (c for c in moof.children if c.kind == b"traf"):
                tfhd = traf.child(b"tfhd")
                if mp4box.u32(data, tfhd.payload + 4) != wanted:
                    continue
                flags, pos = mp4box.full_box_flags(data, tfhd), tfhd.payload + 8
                pos += (8 if flags & 0x1 else 0) + (4 if flags & 0x2 else 0)
                default_duration = mp4box.u32(data, pos) if flags & 0x8 else trex_duration
                for tfdt in (c for c in traf.children if c.kind == b"tfdt"):
                    dts = (struct.unpack_from(">Q", data, tfdt.payload + 4)[0] if data[tfdt.payload] == 1
                           else mp4box.u32(data, tfdt.payload + 4))
                for trun in (c for c in traf.children if c.kind == b"trun"):
                    tflags, count = mp4box.full_box_flags(data, trun), mp4box.u32(data, trun.payload + 4)
                    pos = trun.payload + 8 + (4 if tflags & 0x1 else 0) + (4 if tflags & 0x4 else 0)
                    for _ in range(count):
                        duration, offset = default_duration, 0
                        if tflags & 0x100:
                            duration = mp4box.u32(data, pos)
                            pos += 4
                        pos += (4 if tflags & 0x200 else 0) + (4 if tflags & 0x400 else 0)
                        if tflags & 0x800:
                            offset = struct.unpack_from(">i", data, pos)[0]
                            pos += 4
                        samples.append((dts, offset))
                        dts += duration
        return scale, movie_scale, mp4box.edit_list(data, trak), samples, table_count
    raise ValueError("no video track")


def ffmpeg_dts_shift(path, frames):
    """FFmpeg 5.1's shift of a source's frames (seconds), 0 if none, or raises ValueError.
    libavformat/mov.c gives a packet pts = dts + sc->dts_shift + its composition offset
    (mov_read_packet), where dts_shift is the largest negation of a negative offset read
    (mov_update_dts_shift, from mov_read_ctts and mov_read_trun). For samples of the
    sample table mov_build_index takes it back out (current_dts -= sc->dts_shift: the dts
    are lowered, the pts are ISO's), but samples of movie fragments get their dts from
    tfdt or the track's end in mov_read_trun, uncorrected, and with no edit list nothing
    else (mov_fix_index) moves them: every frame of a fragmented track with a negative
    trun composition offset and no edit list is shown that much later than its ISO
    14496-12 composition time (dts + offset), which GStreamer and our cuts follow. Only
    that class is allowed, and checked, not assumed: FFmpeg's frame times less the shift
    must be the ISO composition times exactly (a shift that grew fragment by fragment,
    as FFmpeg reads them, would fail here)."""
    try:
        scale, _, edits, samples, table_count = video_timing(path)
    except (ValueError, KeyError, IndexError, struct.error, OSError):
        return 0.0                     # no timing read: no allowance
    if edits is not None or not any(offset < 0 for _, offset in samples[table_count:]):
        return 0.0
    shift = max(-offset for _, offset in samples)
    iso = sorted(dts + offset for dts, offset in samples)
    shown = [round(start * scale) - shift for start, _, _ in frames]
    if shown != iso[:len(shown)] or len(shown) != len(iso):
        bad = next((i for i, (a, b) in enumerate(zip(shown, iso)) if a != b), min(len(shown), len(iso)))
        raise ValueError(f"FFmpeg's source frame times less the dts_shift {shift}/{scale} s are not the ISO "
                         f"composition times ({len(shown)} frames, {len(iso)} samples; first difference at "
                         f"frame {bad})")
    return shift / scale


def intervals(frames):
    """[(start, end, md5)]: each frame is presented until the next one starts; the last
    for its own duration."""
    spans = []
    for i, (start, duration, md5) in enumerate(frames):
        end = frames[i + 1][0] if i + 1 < len(frames) and frames[i + 1][0] > start else start + duration
        spans.append((start, end, md5))
    return spans


def plane_rows(width, height, fmt):
    """GStreamer's layout of a frame of `fmt` (video-info.c): [(offset, stride, row bytes,
    rows)] for Y, U, V. Rows are padded to 4 bytes; only the visible bytes are hashed."""
    sample = 2 if fmt == "I420_10LE" else 1
    round4 = lambda n: (n + 3) // 4 * 4
    h2 = (height + 1) // 2 * 2
    cw, ch = (width + 1) // 2, (height + 1) // 2
    y_stride, c_stride = round4(width * sample), round4(((width + 1) // 2 * 2) // 2 * sample)
    u = y_stride * h2
    v = u + c_stride * (h2 // 2)
    size = v + c_stride * (h2 // 2)
    return [(0, y_stride, width * sample, height), (u, c_stride, cw * sample, ch),
            (v, c_stride, cw * sample, ch)], size


def gst_clock(text):
    """Nanoseconds of GStreamer's H:MM:SS.nnnnnnnnn, None for "none"."""
    if text == "none":
        return None
    hours, minutes, seconds = text.split(":")
    whole, _, fraction = seconds.partition(".")
    return ((int(hours) * 60 + int(minutes)) * 60 + int(whole)) * 10**9 + int(fraction.ljust(9, "0"))


def gst_frames(path, fmt, size, timeout=300):
    """[(stream time seconds, duration seconds, md5)] of each frame GStreamer decodes, in
    presentation order. The frames go through a pipe (fdsink), hashed as they come; their
    times are what `identity silent=false` says of each buffer (pts) and of the segment
    before it: stream time = pts - segment start + segment time (the movie's presentation
    time: qtdemux maps each edit to a segment)."""
    planes, frame_bytes = plane_rows(size[0], size[1], fmt)
    read_fd, write_fd = os.pipe()
    hashes = []

    def reader():
        with os.fdopen(read_fd, "rb") as pipe:
            while True:
                frame = pipe.read(frame_bytes)
                if not frame:
                    break
                md5 = hashlib.md5()
                for offset, stride, width, rows in planes:
                    for row in range(rows):
                        start = offset + row * stride
                        md5.update(frame[start:start + width])
                hashes.append(md5.hexdigest() if len(frame) == frame_bytes else "partial frame")

    thread = threading.Thread(target=reader)
    thread.start()
    pipeline = ["gst-launch-1.0", "-v", "filesrc", "location=" + path, "!", "qtdemux", "name=d",
                "d.video_0", "!", *QUEUE, "!", "decodebin", "!", "videoconvert", "!",
                f"video/x-raw,format={fmt},width={size[0]},height={size[1]}", "!",
                "identity", "name=frames", "silent=false", "!", "fdsink", f"fd={write_fd}"]
    try:
        out = run(*pipeline, timeout=timeout, pass_fds=(write_fd,))
    finally:
        os.close(write_fd)
        thread.join()
    text = out.stdout.decode(errors="replace")
    if out.returncode != 0:
        error = [line for line in (text + out.stderr.decode(errors="replace")).splitlines() if "ERROR" in line]
        raise RuntimeError("gst-launch: " + (error[0] if error else f"exit {out.returncode}")[:300])
    frames, segment = [], None
    for line in text.splitlines():
        if "GstIdentity:frames: last-message = " not in line:
            continue
        if "type: segment" in line:
            fields = dict(re.findall(r"(\w[\w-]*)=\(\w+\)([^,;\"]+)", line))
            segment = (int(fields["start"]), int(fields["time"]), float(fields["rate"]))
        elif "chain " in line:
            found = re.search(r"\((\d+) bytes, dts: [^,]+, pts: ([^,]+), duration: ([^,]+),", line)
            size_, pts, duration = int(found.group(1)), gst_clock(found.group(2)), gst_clock(found.group(3))
            if size_ != frame_bytes or pts is None or segment is None or segment[2] != 1.0:
                raise RuntimeError(f"GStreamer buffer of {size_} bytes (expected {frame_bytes}), pts {pts}, "
                                   f"segment {segment}")
            start = pts - segment[0] + segment[1]
            frames.append((start / 1e9, (duration or 0) / 1e9))
    if len(frames) != len(hashes):
        raise RuntimeError(f"GStreamer reported {len(frames)} frames and wrote {len(hashes)}")
    return [(start, duration, md5) for (start, duration), md5 in zip(frames, hashes)]


def gst_has_decoder(codec):
    names = GST_DECODERS.get(codec)
    if names is None:
        return True
    return any(run("gst-inspect-1.0", name).returncode == 0 for name in names)


def bound_in(spans, i, fractions):
    """A time inside frame i, at the first of `fractions` of it that lies MARGIN from every
    frame edge; None if none does."""
    start, end, _ = spans[i]
    edges = [t for s, e, _ in spans for t in (s, e)]
    for fraction in fractions:
        t = start + (end - start) * fraction
        if all(abs(t - edge) >= MARGIN for edge in edges):
            return t
    return None


def nudge(spans, t):
    """A time in the middle of the frame presented at `t` (at least MARGIN from every frame
    edge, as every bound here), or `t` itself when none is."""
    for i, (start, end, _) in enumerate(spans):
        if start <= t < end:
            return bound_in(spans, i, (0.5, 0.3, 0.7)) or t
    return t


def sync_times(path, stream):
    """Presentation times (seconds) of the sync samples of a stream, as FFmpeg's demuxer
    gives them (the frames' timeline: edit lists applied, not shifted)."""
    out = run("ffprobe", "-v", "error", "-select_streams", str(stream), "-show_entries", "packet=pts_time,flags",
              "-of", "csv=p=0", path, timeout=120)
    times = []
    for line in out.stdout.decode().splitlines():
        fields = line.split(",")
        if len(fields) >= 2 and fields[1].startswith("K") and fields[0] not in ("", "N/A"):
            times.append(float(fields[0]))
    return times


def pick_ranges(spans, syncs):
    """Two ranges (A, B) of the source frames, or a reason why there are none.
    Range 1 starts in the middle of the frame a third in (usually deep in a GOP: the cut
    then starts at an earlier sync sample and its edit's media_time is large). Range 2
    starts in the frame after the first sync sample from 55 % on (or at 55 % when there is
    none before the last frames), so that its media_time is small: GStreamer 1.22's early
    end by media_time (allowed) then leaves most of the range to check."""
    n = len(spans)
    ranges = []
    second = round(0.55 * n)
    starts = {round(s, 6): i for i, (s, _, _) in enumerate(spans)}
    after_sync = sorted(starts[round(t, 6)] + 1 for t in syncs if round(t, 6) in starts)
    after_sync = [i for i in after_sync if second <= i <= n - RANGE_FRAMES]
    if after_sync:
        second = after_sync[0]
    # Each as far as a third/half or 85 % of the file, or about 2 s of video, whichever
    # comes first, and at least 3 frames.
    for first, last, fa, fb in ((n // 3, n // 2, (0.5, 0.4, 0.6), (0.5, 0.4, 0.6)),
                                (second, max(round(0.85 * n), second + RANGE_FRAMES), (0.3, 0.5, 0.7),
                                 (0.7, 0.5, 0.3))):
        first = min(first, n - RANGE_FRAMES)
        j = first + RANGE_FRAMES - 1
        while j + 1 < n and j + 1 <= last and spans[j + 1][1] - spans[first][0] <= RANGE_SECONDS:
            j += 1
        a, b = bound_in(spans, first, fa), bound_in(spans, j, fb)
        if a is None or b is None:
            return None, f"no bound 1 ms from every frame edge in frames {first}..{j}"
        ranges.append((a, b))
    return ranges, None


def expected_frames(spans, a, b):
    """The frames presented in [a, b): those whose interval meets it."""
    return [(s, e, md5) for s, e, md5 in spans if s < b and e > a]


def qtdemux_unpushed(cut, a):
    """Source times (A + presentation time in the cut) of the cut's video samples that
    GStreamer 1.22's qtdemux never pushes. gst_qtdemux_advance_sample ends an edit's
    segment at the first sample whose decode time (QTSAMPLE_DTS) reaches the segment's
    media_stop (media_time + duration), although media_stop is a composition time: a
    sample with a negative composition offset (ctts version 1) there, and every sample
    after it in decode order, is dropped though it is presented inside the edit. Our cut
    of a source with negative offsets keeps them, so its last pictures in decode order
    (say P228, B226, b225 with b225 decoded at or after the edit's end) can be lost.
    Only for a cut of one edit; [] when nothing is lost."""
    try:
        scale, movie_scale, edits, samples, _ = video_timing(cut)
    except (ValueError, KeyError, IndexError, struct.error, OSError):
        return []
    if not edits or len(edits) != 1 or edits[0][1] < 0:
        return []
    duration, media_time = edits[0][:2]
    media_stop = media_time + duration * scale / movie_scale
    first = next((k for k in range(1, len(samples)) if samples[k][0] >= media_stop), None)
    if first is None:
        return []
    return [a + (dts + offset - media_time) / scale for dts, offset in samples[first:]]


def where(decoded, spans, want):
    """Where a decode differs: which source frames it shows (indexes, ? for none) and
    where it first departs from the frames wanted."""
    index = {}
    for i, (_, _, md5) in enumerate(spans):
        index.setdefault(md5, i)
    shown = [str(index.get(md5, "?")) for md5 in decoded]
    text = ",".join(shown[:12]) + (",…" if len(shown) > 12 else "")
    for i, (got, wanted) in enumerate(zip(decoded, want)):
        if got != wanted:
            return f"{text} (from its frame {i}: {','.join(shown[i:i + 4])}, not source frame {index.get(wanted)})"
    return text


def check_ffmpeg(report, label, cut, stream_pix_fmt, spans, a, b):
    began = time.monotonic()
    frames, _, error = ffmpeg_frames(cut, "v:0", stream_pix_fmt)
    decoded = [md5 for _, _, md5 in frames]
    expected = expected_frames(spans, a, b)
    want = [md5 for _, _, md5 in expected]
    first = spans.index(expected[0])
    # FFmpeg 5.1 drops the frame that starts before the edit: the demuxer marks its packet
    # discard although the edit presents the rest of it. Allowed for that one frame only.
    dropped = expected[0][0] < a and decoded == want[1:]
    ok = decoded == want or dropped
    name = (f"{label}: FFmpeg decodes source frames {first}..{first + len(want) - 1}"
            + (" (FFmpeg 5.1 drops the first, which starts before the edit)" if dropped else ""))
    report.check(ok, name, f"decoded {len(decoded)} frames, source frames {where(decoded, spans, want)}"
                 + (f"; {error.splitlines()[-1]}" if error else ""), time.monotonic() - began)


def check_gstreamer(report, label, cut, fmt, size, spans, a, b, reference):
    """Checks GStreamer's frames of `cut` against `spans` over [a, b). Returns the cut's
    media_time when GStreamer showed nothing and its early end allows that (nothing was
    checked), else None."""
    began = time.monotonic()
    try:
        frames = gst_frames(cut, fmt, size)
    except (RuntimeError, subprocess.TimeoutExpired) as error:
        report.check(False, f"{label}: GStreamer decodes the cut", str(error), time.monotonic() - began)
        return
    decoded = [md5 for _, _, md5 in frames]
    expected = expected_frames(spans, a, b)
    want = [md5 for _, _, md5 in expected]
    first = spans.index(expected[0])
    # GStreamer 1.22 ends a stream early by up to its first edit's media_time (fixed
    # upstream): its segment stops at the edit's duration counted in media time, so a frame
    # is shown only when it is presented (from `a` on, for the one presented at `a`) before
    # b - media_time. With a range shorter than media_time, none is.
    media_time = mp4box.first_edit_media_time(cut, b"vide")
    required = sum(1 for s, _, _ in expected if max(s, a) < b - media_time - 1e-6)
    ok = decoded == want[:len(decoded)] and len(decoded) >= required
    # GStreamer 1.22's qtdemux ends the edit at the first sample decoded at or after its
    # end, although that sample may be presented inside it (see qtdemux_unpushed): the
    # frames of those samples may be missing, and only they.
    unpushed = qtdemux_unpushed(cut, a)
    lost = [f for f in expected if any(f[0] <= t + 0.0005 < f[1] for t in unpushed)]
    if not ok and lost:
        kept = [f for f in expected if f not in lost]
        required = sum(1 for s, _, _ in kept if max(s, a) < b - media_time - 1e-6)
        ok = decoded == [md5 for _, _, md5 in kept][:len(decoded)] and len(decoded) >= required
        lost = lost if ok else []
    else:
        lost = []
    if ok and not decoded:
        # The allowance covers the whole range (a cut deep in a long GOP): nothing was
        # checked here, so nothing is counted; the caller checks a longer cut from `a`.
        return media_time
    short = ""
    if lost:
        numbers = ",".join(str(spans.index(f)) for f in lost)
        short += (f" (GStreamer 1.22's qtdemux drops frame(s) {numbers}: decoded at or after the edit's end, "
                  f"presented inside it)")
    if ok and len(decoded) + len(lost) < len(want):
        short += (f" (GStreamer 1.22 ends {len(want) - len(lost) - len(decoded)} frame(s) early: the edit's media_time is "
                 f"{media_time * 1000:.1f} ms)")
    report.check(ok, f"{label}: GStreamer decodes {reference} source frames {first}..{first + len(want) - 1}{short}",
                 f"decoded {len(decoded)} frames, source frames {where(decoded, spans, want)}, at least {required} "
                 f"needed (media_time {media_time * 1000:.1f} ms)", time.monotonic() - began)


def cut_file(tool, path, tmp):
    name = os.path.basename(path)
    report = Report(tally, detail_if_ok=False)
    began = time.monotonic()
    streams, error = probe(path)
    if streams is None:
        report.skip(name, "ffprobe cannot open it alone" + (f": {error[0]}" if error else "")
                    + ("; a media segment needs its init segment" if name.endswith(".m4s") else ""))
        return report
    videos = [s for s in streams if s.get("codec_type") == "video"
              and not s.get("disposition", {}).get("attached_pic")]
    if not videos:
        report.skip(name, "no video stream")
        return report
    video = videos[0]
    entries = video_entries(path) or set()
    if entries & ENCRYPTED_ENTRIES or video.get("codec_tag_string") in ("encv", "drmi"):
        kinds = ", ".join(sorted(e.decode("latin-1") for e in entries & ENCRYPTED_ENTRIES))
        report.skip(name, f"encrypted video ({kinds}): no player here can decode it")
        return report
    source_format = video.get("pix_fmt")
    pix_fmt = source_format if source_format in SHARED_FORMATS else "yuv420p"
    gst_format = SHARED_FORMATS.get(pix_fmt, "I420")
    frames, size, ff_error = ffmpeg_frames(path, video["index"], pix_fmt)
    if len(frames) < MIN_FRAMES:
        report.skip(name, f"FFmpeg decodes {len(frames)} video frame(s), fewer than {MIN_FRAMES}"
                    + (f": {ff_error.splitlines()[-1][:120]}" if ff_error else ""))
        return report
    # FFmpeg 5.1 shows every frame of a fragmented track with a negative composition
    # offset and no edit list late by its dts_shift (see ffmpeg_dts_shift): its source
    # frames are put back at their ISO times, the times of the cut (and of GStreamer).
    try:
        shift = ffmpeg_dts_shift(path, frames)
    except ValueError as error:
        report.check(False, f"{name}: FFmpeg's source times", str(error))
        return report
    frames = [(start - shift, duration, md5) for start, duration, md5 in frames]
    spans = intervals(frames)
    ranges, why = pick_ranges(spans, [t - shift for t in sync_times(path, video["index"])])
    if ranges is None:
        report.check(False, f"{name}: two ranges", why)
        return report
    codec = video.get("codec_name")
    gst_spans, gst_skip, gst_error = None, None, None
    if not gst_has_decoder(codec):
        gst_skip = f"GStreamer has no {codec} decoder here (" + " or ".join(GST_DECODERS[codec]) + ")"
    else:
        try:
            gst_spans = intervals(gst_frames(path, gst_format, size))
        except (RuntimeError, subprocess.TimeoutExpired) as error:
            gst_error = str(error)
    source_seconds = time.monotonic() - began
    report.lines.append(f"--   {name}: {len(frames)} frames ({codec}, {size[0]}x{size[1]} {pix_fmt}), "
                        f"sources decoded ({source_seconds:.1f} s)"
                        + (f"; FFmpeg's times less its dts_shift, {shift * 1000:.1f} ms" if shift else ""))
    if gst_error:
        report.check(False, f"{name}: GStreamer decodes the source", gst_error)
    for n, (a, b) in enumerate(ranges):
        label = f"{name} [{a:.6f}, {b:.6f})"
        cut = os.path.join(tmp, f"{n}-{name}.mp4")
        step = time.monotonic()
        out = run(tool, "remux", path, cut, "--from", f"{a:.9f}", "--to", f"{b:.9f}", "--overwrite", "--quiet",
                  timeout=300)
        line = out.stderr.decode(errors="replace").strip()
        errors = [l for l in line.splitlines() if "error" in l]
        if not report.check(out.returncode == 0, f"{label}: remux",
                            f"exit {out.returncode}: " + (errors or [line])[0], time.monotonic() - step):
            continue
        check_ffmpeg(report, label, cut, pix_fmt, spans, a, b)
        if gst_skip:
            report.skip(f"{label}: GStreamer", gst_skip)
        elif gst_spans is not None:
            def gstreamer(label, cut, a, b):
                covered = gst_spans and gst_spans[0][0] <= a + 1e-6 and gst_spans[-1][1] >= b
                if covered:
                    return check_gstreamer(report, label, cut, gst_format, size, gst_spans, a, b, "GStreamer's")
                if source_format in SHARED_FORMATS:
                    # GStreamer 1.22's own decode of the source ends before B (its early end
                    # by media_time): judge its decode of the cut by FFmpeg's frames of the
                    # source, the same bytes (see the docstring).
                    return check_gstreamer(report, label, cut, gst_format, size, spans, a, b, "FFmpeg's")
                report.skip(f"{label}: GStreamer", "GStreamer's decode of the source ends before B and the "
                            f"source's {source_format} frames are not the same bytes in both players")
                return None
            media_time = gstreamer(label, cut, a, b)
            if media_time is not None:
                # GStreamer 1.22 showed nothing, as its early end by the edit's media_time
                # allows (a range deep in a long GOP). So that its start is still checked
                # (the frame presented at A, decoded from the sync sample before it), the
                # range is cut again lengthened by that media_time, where the file has it.
                longer = a + (b - a) + media_time
                end = spans[-1][1]
                if longer > end - MARGIN:
                    report.skip(f"{label}: GStreamer", f"it shows none of the range, and GStreamer 1.22 may end "
                                f"that early (the cut's edit media_time, {media_time * 1000:.1f} ms, covers it); "
                                f"the file ends before a range lengthened by it")
                else:
                    b2 = nudge(spans, longer)
                    label2 = f"{name} [{a:.6f}, {b2:.6f}) (lengthened by GStreamer's early end)"
                    cut2 = os.path.join(tmp, f"{n}-long-{name}.mp4")
                    out = run(tool, "remux", path, cut2, "--from", f"{a:.9f}", "--to", f"{b2:.9f}", "--overwrite",
                              "--quiet", timeout=300)
                    if report.check(out.returncode == 0, f"{label2}: remux", out.stderr.decode(errors="replace")):
                        if gstreamer(label2, cut2, a, b2) is not None:
                            report.skip(f"{label2}: GStreamer", "it still shows none of the range")
                        os.remove(cut2)
        os.remove(cut)
    return report


def main():
    tool = extract_audio_and_corpus()
    if tool is None:
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        print_reports(cut_file, [(tool, os.path.join(CORPUS, n), tmp) for n in corpus_names()])
    return tally.finish()


if __name__ == "__main__":
    sys.exit(main())
