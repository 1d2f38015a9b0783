"""The seam measure of issue 23 and what it needs, shared by mux-conformance.py and
concat-conformance.py: the players' decodes (FFmpeg, and GStreamer's qtdemux ! decodebin) as
16-bit mono PCM, the first audio track's edit list read from the file's boxes, and the dip at a
seam (the longest stretch whose 1 ms RMS is more than 20 dB below the median of the 100 ms
around it)."""

import array
import math
import os
from itertools import accumulate
from operator import mul

import mp4box
from oracle.run import run as oracle_run

RATE = 44100


def run(*args):
    return oracle_run(*args, text=True)


def decode_ffmpeg(path, raw, rate=RATE):
    """FFmpeg's decode of the first audio stream, mono at `rate`, and what it said on stderr."""
    out = run("ffmpeg", "-v", "error", "-y", "-i", path, "-map", "0:a:0", "-f", "s16le", "-ac", "1", "-ar", str(rate),
              raw)
    return array.array("h", open(raw, "rb").read()), out.stderr.strip()


def decode_gstreamer(path, raw, rate=RATE):
    """GStreamer's decode of the first audio stream (qtdemux's audio_0), mono at `rate`; empty
    when it decodes nothing."""
    if os.path.exists(raw):
        os.remove(raw)
    run("gst-launch-1.0", "-q", "filesrc", f"location={path}", "!", "qtdemux", "name=d", "d.audio_0", "!",
        "decodebin", "!", "audioconvert", "!", "audioresample", "!",
        f"audio/x-raw,format=S16LE,channels=1,rate={rate}", "!", "filesink", f"location={raw}")
    return array.array("h", open(raw, "rb").read()) if os.path.exists(raw) else array.array("h")


def audio_edits(path):
    """The first audio track's edit list: [(duration, media_time)] and the media timescale;
    ([], 0) without one, or when mp4box cannot read the file's boxes."""
    data = open(path, "rb").read()
    try:
        traks = mp4box.audio_traks(data, mp4box.read_tree(data))
    except ValueError:
        return [], 0
    if not traks:
        return [], 0
    timescale, _ = mp4box.timescale_and_duration(data, traks[0].child(b"mdia").child(b"mdhd"))
    return [(d, m) for d, m, _, _ in mp4box.edit_list(data, traks[0]) or []], timescale


def seam_dip(samples, seam, rate=None):
    """The longest stretch (ms) around a seam whose RMS over 1 ms windows is more than 20 dB
    below the median 1 ms RMS of the 100 ms around the seam (issue 23): the union of the
    quiet windows, each window sliding by one sample. Also the quietest window, in dB
    relative to that median."""
    rate = rate or RATE
    width = int(round(rate * 0.001))
    lo, hi = max(seam - int(0.05 * rate), 0), min(seam + int(0.05 * rate), len(samples))
    window = samples[lo:hi]
    sums = [0] + list(accumulate(map(mul, window, window)))
    rms = [math.sqrt((b - a) / width) for a, b in zip(sums, sums[width:])]
    if not rms:
        return float("inf"), 0.0
    median = sorted(rms)[len(rms) // 2]
    longest = current = 0
    quiet = median * 0.1
    for value in rms:
        if value < quiet:
            current += 1
            if current > longest:
                longest = current
        else:
            current = 0
    stretch = (longest + width - 1) / rate * 1000 if longest else 0.0
    return stretch, 20 * math.log10(max(min(rms), 1e-9) / max(median, 1e-9))
