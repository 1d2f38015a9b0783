#!/usr/bin/env python3
"""Conformance of `extract-audio concat` as players play it (issue 27, after issue 23).

Makes short parts with ffmpeg in a temporary folder: pink-noise "music" (a different seed
each part), each part starting with a 30 ms 3 kHz marker burst about 19 dB above it; mono,
1.0-2.0 s of varied non-round lengths from a seeded generator (and a run of identical lengths).
Joins them with our CLI and judges the joins with FFmpeg, GStreamer, ffprobe and mutagen, never
with our own parser (a small box walker here reads brands and edit lists):
  1. packets: ffprobe's packets (size, CRC-32) of the output's audio (and video) are the
     inputs' packets in order, none repeated or altered, at most 2 dropped per seam and only
     at a part's start or end (none before the first part or after the last); video packets
     all kept, from each input's first sync sample;
  2. dips: at every seam, in FFmpeg's and GStreamer's decodes, the longest stretch whose 1 ms
     RMS is more than 20 dB below the median of the 100 ms around the seam is at most 12 ms
     (Scripts/seams.py, the measure of issue 23), at the seam the --json report predicts and
     at the seam measured in the decode (3);
  3. start error: where each part's sound lands in the decode, found by cross-correlating
     the part decoded alone (see `locate` for why it is unbiased), is within one audio frame
     + 2 ms of its place, the sum of the earlier parts' presented lengths (ffprobe's duration
     of each part): 1024/44100 s for AAC LC, 2048/44100 s for HE-AAC, 960/48000 s for Opus,
     one sample for ALAC and FLAC; the 100th part as the first. A part's length is the sound
     the generator made (ffprobe's duration, from FFmpeg's edits in milliseconds, is checked
     to be within 1 ms of it). Where the tool warns that no layout is both under 12 ms of dip
     and within the bound (issue 27 ranks the dip first; docs/concat.md shows why runs of
     parts with little sound in their last packet force it), the start errors are printed as
     `known` and every part must land where --json predicts, within 1 ms. Video joins: the
     audio of each clip within half an audio frame of where its video starts (the command's
     promise);
  4. length: FFmpeg decodes the sum of the parts' presented lengths within one audio frame
     per part; GStreamer the same, less at most the first edit's media_time (its 1.22 bug);
  5. ALAC and FLAC: the decoded PCM is the parts' decoded PCM concatenated, sample for sample;
  6. the cases: 2, 10 and 100 parts of AAC LC (varied lengths, and 100 identical), HE-AAC
     (explicit SBR signalling on AAC-LC cores, as Scripts/make-fixtures.sh makes it, and cuts
     of the corpus's sp_bear_he_aac.mp4), Opus, ALAC and FLAC; 3 phone-like clips, H.264 + AAC
     and HEVC (hvc1) + AAC; an audiobook (.m4b, --chapters, ffprobe -show_chapters and
     mutagen's Nero chapters, each at its place within the rule-3 bound); refusals of differing
     sample rate, channels, codec, picture size, SPS/PPS, and of one input with video and one
     without (exit 69, the input and what differs named, nothing left in OUT's folder); exit 73
     and 64; --file-list (FFmpeg's concat grammar, which FFmpeg itself must read; `duration`
     and `inpoint` exit 64).
Also: one audio track with one edit and brand `M4A ` (`M4B ` for .m4b), iTunSMPB matching the
edit (required for AAC), one edit per track for video; the --json report against the file
(packets, bytes, parts' places and lengths within 1 ms of ffprobe's), its predicted landings,
dips and start errors printed beside the measured ones.

Each player is calibrated on each set's parts decoded alone, against the reference the locator
correlates (FFmpeg's decode of the part alone; for HE-AAC, FFmpeg's decode of a copy without
edit or iTunSMPB, the edit applied here, as FFmpeg 5.1 skips an HE-AAC part's media_time twice
where GStreamer 1.22 skips it once): GStreamer decodes AAC one sample late, FFmpeg HE-AAC early
by the part's media_time; part 1's offset, whose media_time a join's one edit carries, is the
player's zero.

With --report (not in CI), prints instead a Markdown table of the measured seams, start
errors and lengths for 2/10/100 AAC LC and HE-AAC parts and 2/10 Opus parts, for our concat and for
FFmpeg's concat demuxer (`ffmpeg -f concat -safe 0 -i list.txt -c copy`) on the same parts.

Prints one `ok`/`FAIL` line per check (`skipped (reason): name` for what could not be
checked and `known …` for the start errors of 3 above, both counted neither way) and a final "N passed, M failed"; exits 1 on failure. A
missing oracle is a failure when CI=true or REQUIRE_ORACLES=1, a skip otherwise. Set
EXTRACT_AUDIO to a built binary to skip the release build.
"""
import array
import json
import os
import random
import re
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from operator import mul

sys.dont_write_bytecode = True
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Scripts"))
import variants  # noqa: E402
from seams import audio_edits, decode_ffmpeg, decode_gstreamer, seam_dip  # noqa: E402
from oracle import ffprobe, mutagen_reader  # noqa: E402
from oracle.binary import extract_audio  # noqa: E402
from oracle.ffprobe import stream_duration  # noqa: E402
from oracle.gst import has as gst_has  # noqa: E402
from oracle.report import Checks  # noqa: E402
from oracle.run import run as oracle_run  # noqa: E402

CORPUS = os.environ.get("CORPUS_DIR") or os.path.join(ROOT, "..", "shared", "corpus")
JOBS = max(os.cpu_count() or 1, 2)
DIP_LIMIT_MS = 12.0          # rule 2 (issue 27's priority 2)
SEAM_DROPS = 2               # rule 1: packets dropped at one seam, at most
# Check lines go to checks.out: stdout, or stderr under --report, whose stdout is the table.
checks = Checks(limit=300)
check, skip = checks.check, checks.skip


def run(*args, **kw):
    return oracle_run(*args, text=True, **kw)


def note(text):
    print("     " + text, file=checks.out, flush=True)


def known(name, detail):
    """A check that does not hold, for a reason documented in docs/concat.md: printed as
    `known`, with what was measured, and counted neither way (never a pass)."""
    print(f"known {name}: {detail}", file=checks.out, flush=True)


def oracle(name, present, why):
    """True when the oracle is here. A missing one fails under CI=true / REQUIRE_ORACLES=1
    and is a printed skip otherwise (never a pass)."""
    if not present:
        checks.missing(f"oracle {name} present", why, why, f"everything that needs {name}")
    return bool(present)


def ffmpeg_has_encoder(name):
    return f" {name} " in run("ffmpeg", "-hide_banner", "-encoders").stdout


def ffmpeg(*args):
    out = run("ffmpeg", "-v", "error", "-y", *args)
    if out.returncode != 0:
        raise RuntimeError(" ".join(args)[:200] + ": " + out.stderr[:400])


# --- The codecs and their parts -----------------------------------------------------------

# name: sample rate; samples per packet as decoded; the rule-3 bound in samples; samples of the
# part decoded alone that the locator skips before correlating (see `locate`); the encoder;
# the container; whether it is lossless (rule 5); the GStreamer decoders that must exist.
# FFmpeg's AAC encoder runs without PNS: a PNS band is drawn from a random generator that
# carries across frames, so a part decoded inside a join would differ from it decoded alone
# for as long as it lasts, blurring the correlation that finds it.
CODECS = {
    "aac": dict(rate=44100, frame=1024, bound=1024 + 88.2, settle=3 * 1024, ext="m4a", lossless=False,
                encode=["-c:a", "aac", "-aac_pns", "0", "-b:a", "96k"], gst=["avdec_aac"]),
    "he-aac": dict(rate=44100, frame=2048, bound=2048 + 88.2, settle=3 * 2048, ext="m4a", lossless=False,
                   encode=None, gst=["avdec_aac"]),
    "opus": dict(rate=48000, frame=960, bound=960 + 96, settle=3 * 960, ext="mp4", lossless=False,
                 encode=["-c:a", "libopus", "-b:a", "64k"], gst=["opusdec", "avdec_opus"], encoder="libopus"),
    "alac": dict(rate=44100, frame=4096, bound=1, settle=2 * 4096, ext="m4a", lossless=True,
                 encode=["-c:a", "alac", "-sample_fmt", "s16p"], gst=["avdec_alac"], encoder="alac"),
    "flac": dict(rate=44100, frame=4608, bound=1, settle=2 * 4608, ext="mp4", lossless=True,
                 encode=["-c:a", "flac", "-sample_fmt", "s16", "-strict", "-2"], gst=["flacdec", "avdec_flac"],
                 encoder="flac"),
}


def music(rate, seconds, seed):
    """A part's sound: pink noise (its own seed, RMS about -28 dBFS) with a 30 ms 3 kHz burst
    at amplitude 0.5 (-9 dBFS RMS) from its first sample, the marker of rule 3."""
    return (f"anoisesrc=color=pink:amplitude=0.2:seed={seed}:sample_rate={rate}:duration={seconds:.4f}[n];"
            f"aevalsrc=0.5*sin(2*PI*3000*t):s={rate}:d=0.03[b];[n][b]amix=inputs=2:duration=first:normalize=0")


def batches(items, size=25):
    return [items[i:i + size] for i in range(0, len(items), size)]


def encode_parts(jobs):
    """jobs: [(lavfi source, encoder args, output)], encoded 25 to an ffmpeg process, two
    processes at a time."""
    def one(batch):
        args = []
        for source, _, _ in batch:
            args += ["-f", "lavfi", "-i", source]
        for k, (_, encode, out) in enumerate(batch):
            args += ["-map", f"{k}:a", "-ac", "1", *encode, out]
        ffmpeg(*args)
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(one, batches(jobs)))


def make_he_aac(tmp, lengths, seed):
    """HE-AAC as Scripts/make-fixtures.sh makes it (FFmpeg cannot encode it): an AAC-LC core
    at 22.05 kHz gets the explicit SBR AudioSpecificConfig (variants.py), then FFmpeg
    stream-copies it as a muxer of HE-AAC writes it (timescale 44100, 2048-sample packets)."""
    cores = [os.path.join(tmp, f"he-core-{k}.m4a") for k in range(len(lengths))]
    encode_parts([(music(22050, d, seed + k), ["-c:a", "aac", "-aac_pns", "0", "-b:a", "32k"], c)
                  for k, (d, c) in enumerate(zip(lengths, cores))])
    paths = []
    for k, core in enumerate(cores):
        signalled = os.path.join(tmp, f"he-sbr-{k}.m4a")
        with open(core, "rb") as f:
            data = f.read()
        with open(signalled, "wb") as f:
            f.write(bytes(variants.he_aac(data)))
        paths.append(os.path.join(tmp, f"he-aac-{k:03d}.m4a"))
    for batch in batches(list(enumerate(paths))):
        args = []
        for k, _ in batch:
            args += ["-i", os.path.join(tmp, f"he-sbr-{k}.m4a")]
        for i, (_, path) in enumerate(batch):
            args += ["-map", f"{i}:a", "-c", "copy", "-f", "mp4", path]
        ffmpeg(*args)
    return paths


class Parts:
    """A set of parts of one codec and what the oracles say of each: the presented length,
    the packets (size, CRC-32, as ffprobe -show_data_hash CRC32 gives them), and FFmpeg's
    decode alone (the reference the locator correlates).

    The presented length is the sound the generator made (`lengths`, seconds, as samples at
    `core_rate`: HE-AAC's core runs at half the output rate) when it is known, else ffprobe's
    duration. FFmpeg writes its edits in milliseconds, truncated, so ffprobe's duration of a
    part is up to 1 ms short of its sound (the stts holds it exactly): summed over 100 parts
    that would move the places by up to 100 ms. `probed` keeps ffprobe's, checked against
    the generator's within that millisecond."""

    def __init__(self, codec, paths, tmp, label, rate=None, lengths=None, core_rate=None):
        self.codec, self.paths, self.info = codec, paths, dict(CODECS[codec], rate=rate or CODECS[codec]["rate"])
        self.rate = self.info["rate"]
        with ThreadPoolExecutor(JOBS) as pool:
            self.probed = list(pool.map(lambda p: stream_duration(p, "a:0"), paths))
        if lengths is None:
            self.durations = list(self.probed)
        else:
            core = core_rate or self.rate
            self.durations = [round(seconds * core) / core for seconds in lengths]
        self.packets = packets_of_many(paths, os.path.join(tmp, label))
        if codec == "he-aac":
            # FFmpeg 5.1 skips an HE-AAC part's priming twice (GStreamer once, as the edit says,
            # ISO/IEC 14496-12 § 8.6.6): a reference it decoded would start each part late by
            # that part's own media_time, which differs between cuts. So FFmpeg decodes a copy
            # that says nothing of the priming, from the first packet, and the edit is applied
            # here.
            self.refs = []
            raws = decode_many([from_first_packet(p, tmp) for p in paths],
                               os.path.join(tmp, label), self.rate)
            for path, raw in zip(paths, raws):
                edits, timescale = audio_edits(path)
                media_time = next((m for _, m in edits if m >= 0), 0)
                self.refs.append(raw[round(media_time * self.rate / timescale):] if timescale else raw)
        else:
            self.refs = decode_many(paths, os.path.join(tmp, label), self.rate)
        # Per player: where a part decoded alone starts in its decode against the reference
        # (`calibrate`); part 1's, whose media_time a join's one edit carries, is its zero.
        self.offsets = {"ffmpeg": 0, "GStreamer": 0}


def ffprobe_packets(path, stream="a:0", with_sync=False):
    """The stored packets of a stream (no edit list applied) as (size, CRC-32), and whether
    each is a sync sample when `with_sync`."""
    out = ffprobe.packets(path, select=stream, ignore_editlist=True, entries="packet=size,data_hash,flags", text=True)
    try:
        packets = json.loads(out.stdout).get("packets", [])
    except ValueError:
        return []
    return [(int(p["size"]), p["data_hash"].split(":")[-1].lower()) + (("K" in p.get("flags", ""),) if with_sync
                                                                        else ()) for p in packets]


def packets_of_many(paths, stem):
    """Every part's stored packets as (size, CRC-32): FFmpeg's framehash muxer (CRC32 as
    ffprobe's -show_data_hash computes it) over each input stream-copied, many inputs to one
    process, as one ffprobe per part would take seconds. `Parts` checks on the first part
    that this and ffprobe agree."""
    lists = []
    for n, batch in enumerate(batches(paths, 50)):
        args = []
        for path in batch:
            args += ["-ignore_editlist", "1", "-i", path]
        outs = []
        for k in range(len(batch)):
            outs.append(f"{stem}-{n}-{k}.hash")
            args += ["-map", f"{k}:a:0", "-c", "copy", "-f", "framehash", "-hash", "CRC32", outs[-1]]
        ffmpeg(*args)
        for out in outs:
            rows = [line.split(",") for line in open(out) if line.strip() and not line.startswith("#")]
            lists.append([(int(r[4]), r[5].strip().lower()) for r in rows])
    return lists


def from_first_packet(path, folder):
    """A copy of `path` in `folder` that says nothing of its priming, so that FFmpeg decodes it
    from the first packet: its `edts` boxes renamed `free`, and iTunSMPB (which FFmpeg also
    skips by, even with -ignore_editlist) renamed. Same size, same packets."""
    data = bytearray(open(path, "rb").read())
    for box in variants.mp4box.walk(variants.mp4box.read_tree(bytes(data))):
        if box.kind == b"edts":
            data[box.offset + 4:box.offset + 8] = b"free"
    out = os.path.join(folder, "raw-" + os.path.basename(path))
    with open(out, "wb") as f:
        f.write(bytes(data).replace(b"iTunSMPB", b"iTunSMPX"))
    return out


def decode_many(paths, stem, rate):
    """FFmpeg's decode of each path alone (mono, 16-bit, at `rate`), 50 to a process."""
    refs = []
    for n, batch in enumerate(batches(paths, 50)):
        args, outs = [], []
        for path in batch:
            args += ["-i", path]
        for k in range(len(batch)):
            outs.append(f"{stem}-{n}-{k}.raw")
            args += ["-map", f"{k}:a:0", "-f", "s16le", "-ac", "1", "-ar", str(rate), outs[-1]]
        ffmpeg(*args)
        refs += [array.array("h", open(out, "rb").read()) for out in outs]
    return refs


# --- Finding a part in a decode -------------------------------------------------------------

def energies(samples, start, count, block):
    """Sum of squares of `count` blocks of `block` samples from `start` (zeros off the ends)."""
    out = []
    for b in range(count):
        lo = start + b * block
        chunk = samples[max(lo, 0):max(lo + block, 0)]
        out.append(float(sum(map(mul, chunk, chunk))))
    return out


def prefix_sums(values):
    sums, squares = [0.0], [0.0]
    for v in values:
        sums.append(sums[-1] + v)
        squares.append(squares[-1] + v * v)
    return sums, squares


def locate(decode, ref, center, rate, settle, reach):
    """Where the part decoded alone (`ref`, its sample 0 the part's first presented sample,
    the marker's onset) begins in `decode`, searched within `reach` samples of `center`:
    (position in samples, correlation), or (None, best correlation) when nothing matches.

    Unbiased by construction: it correlates the part's sound from `settle` samples on (three
    packets in for a lossy codec, two for a lossless one), never its first packets. Those are
    what a seam changes (the previous part's last frame overlaps them, or the part's priming
    packets were dropped, so they decode as a crossfade); an onset detector reading them reads
    late (issue 23's note: about 11 ms).
    From `settle` on a decoder has forgotten the seam, so the part decodes as it does alone
    and the correlation peaks where its samples really are. Coarse (1 ms energy envelopes,
    over ±reach) then fine (samples, ±2 ms around the coarse peak)."""
    block = rate // 1000
    blocks = 150
    if settle + blocks * block + 1024 > len(ref):
        settle = max(len(ref) - blocks * block - 1024, 0)
    # Coarse: Pearson correlation of the 1 ms energy envelopes, the reference's normalised once
    # and each candidate's mean and spread from prefix sums.
    ref_env = energies(ref, settle, blocks, block)
    mean = sum(ref_env) / blocks
    spread = sum((e - mean) ** 2 for e in ref_env) ** 0.5 or 1.0
    ref_env = [(e - mean) / spread for e in ref_env]
    lo = center + settle - reach
    span = (2 * reach) // block + 1
    env = energies(decode, lo, span + blocks, block)
    sums, squares = prefix_sums(env)
    best_block, best_score = 0, -2.0
    for b in range(span):
        variance = squares[b + blocks] - squares[b] - (sums[b + blocks] - sums[b]) ** 2 / blocks
        if variance <= 0:
            continue
        score = sum(map(mul, ref_env, env[b:b + blocks])) / variance ** 0.5
        if score > best_score:
            best_block, best_score = b, score
    coarse = lo + best_block * block - settle          # where ref[0] would sit
    # Fine: normalised correlation of 512 samples, every lag within 2 ms of the coarse one.
    window = ref[settle:settle + 512]
    energy_ref = float(sum(map(mul, window, window))) or 1.0
    first = max(coarse - 2 * block + settle, 0)
    region = decode[first:coarse + 2 * block + settle + len(window) + 1]
    _, energy = prefix_sums(region)
    best, best_pos = -2.0, None
    for offset in range(0, len(region) - len(window) + 1):
        e = energy[offset + len(window)] - energy[offset]
        if e <= 0:
            continue
        score = sum(map(mul, window, region[offset:offset + len(window)])) / (energy_ref * e) ** 0.5
        if score > best:
            best, best_pos = score, first + offset - settle
    if best_pos is None or best < 0.5:
        return None, best
    return best_pos, best


def landings(decode, parts, indexes, offset=0, reach_ms=100):
    """Where each part lands in a decode of their join, each searched where the previous one
    landed plus its presented length (so a join that drifts is followed, not lost): sample
    positions, None where a part is not found. `offset`: where a part decoded alone by this
    player starts relative to FFmpeg's decode of it (GStreamer's calibration)."""
    rate, settle = parts.rate, parts.info["settle"]
    reach = int(reach_ms * rate / 1000)
    found, previous = [], None
    for n, i in enumerate(indexes):
        if n == 0:
            center = offset
        elif previous is not None:
            center = previous + round(parts.durations[indexes[n - 1]] * rate)
        else:
            center = offset + round(sum(parts.durations[j] for j in indexes[:n]) * rate)
        position, _ = locate(decode, parts.refs[i], center, rate, settle, reach if previous is not None or n == 0
                             else 3 * reach)
        found.append(position)
        previous = position
    return found


# --- Judging a join ---------------------------------------------------------------------------

def match_packets(out, parts_packets):
    """Whether `out` is the parts' packets in order, each part kept as one contiguous run with
    at most SEAM_DROPS packets dropped per seam (the next part's head and/or the previous
    part's tail) and none before the first part or after the last: (ok, [(head, tail)] per
    part, or the detail of the furthest mismatch)."""
    n = len(parts_packets)
    states = {(0, 0): []}     # (position in out, tail dropped from the previous part) -> drops
    furthest = (0, 0)
    for i, packets in enumerate(parts_packets):
        new = {}
        for (p, prev_tail), drops in states.items():
            heads = [0] if i == 0 else range(0, SEAM_DROPS - prev_tail + 1)
            for head in heads:
                tails = [0] if i == n - 1 else range(0, SEAM_DROPS + 1)
                for tail in tails:
                    k = len(packets) - head - tail
                    if k <= 0:
                        continue
                    if out[p:p + k] == packets[head:head + k]:
                        new.setdefault((p + k, tail), drops + [(head, tail)])
                    else:
                        same = next((j for j in range(k) if p + j >= len(out) or out[p + j] != packets[head + j]), k)
                        furthest = max(furthest, (i, same))
        if not new:
            i, same = furthest
            return False, f"part {i + 1} of {n} does not continue the output (packets matched up to {same} of it)"
        states = new
    done = [drops for (p, _), drops in states.items() if p == len(out)]
    if not done:
        return False, f"{len(out) - min(p for p, _ in states)} output packet(s) after the last part's"
    return True, done[0]


def output_tracks(path):
    out = ffprobe.ffprobe(path, "-show_entries", "stream=index,codec_type,codec_name,duration,nb_frames"
                          ":stream_disposition=attached_pic:format=duration:format_tags", text=True)
    try:
        return json.loads(out.stdout)
    except ValueError:
        return {}


def concat(tool, inputs, output, extra=(), cwd=None, as_json=True):
    r = run(tool, "concat", *(("--json",) if as_json else ()), *extra, *inputs, output, cwd=cwd)
    try:
        report = json.loads(r.stdout) if as_json and r.stdout.strip() else {}
    except ValueError:
        report = {}
    return r, report


def failure(r, report):
    """What a failed run said: stderr, or with --json the error object's message."""
    message = (report.get("error") or {}).get("message") if isinstance(report.get("error"), dict) else None
    return f"exit {r.returncode}: {(message or r.stderr.strip())[:240]}"


def smpb_matches(tags, edit, media_scale, movie_scale, media_samples):
    """Whether iTunSMPB's priming / valid samples / padding say what the one edit says."""
    value = tags.get("iTunSMPB")
    if value is None:
        return None, "no iTunSMPB"
    fields = value.split()
    try:
        priming, padding, total = int(fields[1], 16), int(fields[2], 16), int(fields[3], 16)
    except (IndexError, ValueError):
        return False, f"unreadable iTunSMPB {value!r}"
    duration, media_time = edit
    # The edit's duration is in the movie's timescale, rounded there: up to one movie tick.
    want_total = duration * media_scale / movie_scale
    ok = priming == media_time and abs(total - want_total) <= media_scale / movie_scale \
        and priming + total + padding == media_samples
    return ok, (f"iTunSMPB priming {priming}, samples {total}, padding {padding}; edit media_time {media_time}, "
                f"{want_total:.0f} samples; media {media_samples} samples")


def mvhd_timescale(path):
    data = open(path, "rb").read()
    boxes = variants.mp4box.read_tree(data)
    moov = variants.mp4box.top(boxes, b"moov")
    return variants.mp4box.timescale_and_duration(data, moov.child(b"mvhd"))[0]


def track_layout(path):
    """Each track's handler, edit count, media duration (ticks) and media timescale, and the
    file's major brand."""
    data = open(path, "rb").read()
    mp4box = variants.mp4box
    boxes = mp4box.read_tree(data)
    moov = mp4box.top(boxes, b"moov")
    tracks = []
    for trak in (c for c in moov.children if c.kind == b"trak"):
        scale, duration = mp4box.timescale_and_duration(data, trak.child(b"mdia").child(b"mdhd"))
        tracks.append((mp4box.handler_type(data, trak).decode("latin-1"), len(mp4box.edit_list(data, trak) or []),
                       duration, scale))
    ftyp = mp4box.top(boxes, b"ftyp")
    return tracks, data[ftyp.payload:ftyp.payload + 4].decode("latin-1")


def measure(path, parts, indexes, tmp, gst):
    """What the players make of a join of `parts` (those at `indexes`): their decodes, where
    each part lands in each (sample positions, relative to the player's own start of a part
    decoded alone), the length."""
    rate = parts.rate
    got = {"ffmpeg": decode_ffmpeg(path, os.path.join(tmp, "join-f.raw"), rate)[0]}
    if gst:
        got["GStreamer"] = decode_gstreamer(path, os.path.join(tmp, "join-g.raw"), rate)
    places = [0]
    for i in indexes[:-1]:
        places.append(places[-1] + parts.durations[i])
    found = {}
    for player, decode in got.items():
        offset = parts.offsets[player]
        found[player] = [None if p is None else p - offset
                         for p in landings(decode, parts, indexes, offset)]
    return got, places, found


def dips_at(decode, positions, rate, cache=None):
    """seam_dip at each position: [(index, ms or None)], None where there is no position or
    the 100 ms around it is not all in the decode. `cache` (a dict) keeps the measures of one
    decode by position, as the reported and the measured seams are often the same sample."""
    cache = {} if cache is None else cache
    out = []
    for k, position in enumerate(positions):
        if position is None or position + int(0.05 * rate) > len(decode) or position < int(0.05 * rate):
            out.append((k, None))
            continue
        if position not in cache:
            cache[position] = seam_dip(decode, position, rate)[0]
        out.append((k, cache[position]))
    return out


def median(values):
    values = sorted(values)
    return values[len(values) // 2] if values else 0.0


def fmt(value):
    return f"{value:.2f}" if isinstance(value, (int, float)) else str(value)


def predicted_landings(report, n, rate):
    """Where the --json report says each part lands: parts[i].start + start_error_ms, in
    samples; None without a usable report."""
    parts = report.get("parts") or []
    if len(parts) != n:
        return None
    try:
        return [round((p["start"] + p.get("start_error_ms", 0) / 1000) * rate) for p in parts]
    except (KeyError, TypeError):
        return None


def dip_check(name, player, decode, landed, predicted, offset, rate):
    """Rule 2 at every seam of one decode: at the seam the --json report predicts and at the
    seam found in the decode (`landed`, from part 2 on), each at most DIP_LIMIT_MS."""
    cache = {}
    measured = dips_at(decode, [None if p is None else p + offset for p in landed[1:]], rate, cache)
    at_json = dips_at(decode, [p + offset for p in predicted[1:]], rate, cache) if predicted else []
    bad = [(k + 2, d) for k, d in measured + at_json if d is None or d > DIP_LIMIT_MS]
    values = [d for _, d in measured if d is not None]
    json_values = [d for _, d in at_json if d is not None]
    detail = (f"worst {max(values, default=0):.2f} ms, median {median(values):.2f} ms at the measured seams"
              + (f"; worst {max(json_values, default=0):.2f} ms, median {median(json_values):.2f} ms at "
                 f"the reported seams" if predicted else "; no seam positions in --json")
              + (f"; over {DIP_LIMIT_MS:g} ms or unmeasurable at part(s) "
                 f"{sorted({k for k, _ in bad})[:10]}" if bad else ""))
    check(f"{name}: no dip over {DIP_LIMIT_MS:g} ms at {len(landed) - 1} seam(s) ({player})",
          not bad and predicted is not None, detail)


def judge_audio_join(name, tool, parts, indexes, tmp, gst, extra=(), output_name=None, expect_brand=None,
                     chapters=0):
    """Runs concat on the parts at `indexes` and makes every check of rules 1-5 on it."""
    info, rate = parts.info, parts.rate
    inputs = [parts.paths[i] for i in indexes]
    # The brand extraction gives the codec: Apple's M4A for AAC and ALAC, isom (with Opus or
    # fLaC compatible brands) for Opus and FLAC, which Apple's M4A does not list.
    expect_brand = expect_brand or ("isom" if parts.codec in ("opus", "flac") else "M4A ")
    out = os.path.join(tmp, output_name or f"{name.replace(' ', '-')}.{parts.info['ext']}")
    r, report = concat(tool, inputs, out, ("--overwrite",) + tuple(extra))
    if not check(f"{name}: concat succeeds", r.returncode == 0 and os.path.exists(out),
                 failure(r, report) if r.returncode else ""):
        return None
    n = len(indexes)
    probe = output_tracks(out)
    streams = [s for s in probe.get("streams", []) if s.get("codec_type") in ("audio", "video")]
    tracks, brand = track_layout(out)
    audio = [t for t in tracks if t[0] == "soun"]
    edits, timescale = audio_edits(out)
    check(f"{name}: one audio track, one edit, brand {expect_brand!r}",
          len(streams) == 1 and streams[0]["codec_type"] == "audio" and len(audio) == 1 and len(edits) == 1
          and brand == expect_brand,
          f"streams {[(s['codec_type'], s.get('codec_name')) for s in streams]}, edits {edits}, brand {brand!r}")
    tags = probe.get("format", {}).get("tags", {})
    if edits and audio:
        ok, detail = smpb_matches(tags, edits[0], timescale, mvhd_timescale(out), audio[0][2])
        if ok is None and parts.codec not in ("aac", "he-aac"):
            note(f"{name}: no iTunSMPB (as extraction writes none for {parts.codec})")
        else:
            check(f"{name}: iTunSMPB matches the edit", bool(ok), detail)

    # Rule 1: packets.
    out_packets = ffprobe_packets(out)
    ok, drops = match_packets(out_packets, [parts.packets[i] for i in indexes])
    total_in = sum(len(parts.packets[i]) for i in indexes)
    check(f"{name}: packets are the parts' in order, at most {SEAM_DROPS} dropped per seam, none altered", ok,
          drops if not ok else "", detail_if_ok=False)
    if ok:
        dropped = total_in - len(out_packets)
        note(f"{name}: {len(out_packets)} packets of {total_in}, {dropped} dropped at {n - 1} seam(s)"
             + (f" (heads/tails: {sum(h for h, _ in drops)}/{sum(t for _, t in drops)})" if n > 1 else ""))

    # Rules 2-4 in each player.
    got, places, found = measure(out, parts, indexes, tmp, gst)
    want = sum(parts.durations[i] for i in indexes)
    bound = info["bound"]
    json_parts = report.get("parts") or []
    predicted = predicted_landings(report, n, rate)
    declared = any("no layout of whole packets is both" in w for w in report.get("warnings") or [])
    for player, decode in got.items():
        offset = parts.offsets[player]
        landed = found[player]
        # Rule 3: start error against the place.
        errors = [None if p is None else p - place * rate for p, place in zip(landed, places)]
        missing = [k + 1 for k, e in enumerate(errors) if e is None]
        where = max(range(n), key=lambda k: abs(errors[k]) if errors[k] is not None else -1)
        worst = abs(errors[where]) if errors[where] is not None else 0.0
        last = errors[-1]
        bound_text = "1 sample" if info["lossless"] else f"one frame + 2 ms ({bound / rate * 1000:.2f} ms)"
        def ms(error):
            return "not found" if error is None else f"{error / rate * 1000:+.2f} ms"

        title = f"{name}: every part starts within {bound_text} of its place ({player})"
        detail = ((f"part(s) {missing[:8]} not found; " if missing else "")
                  + f"worst part {where + 1}: {ms(errors[where])}, part {n}: {ms(last)}")
        over = [k + 1 for k, e in enumerate(errors) if e is not None and abs(e) > bound]
        if over and not missing and declared and predicted:
            # Issue 27's priority 2 over 3: where no layout of whole packets is both under
            # 12 ms of dip and within the bound (docs/concat.md: a run of parts whose last
            # packet holds little sound forces it), the tool keeps the short dip and says so.
            # What it says must then be what the players do: every part where it predicts.
            off = max(abs(p - q) for p, q in zip(landed, predicted))
            known(title, f"{detail}; {len(over)} part(s) over, as the tool warns")
            check(f"{name}: every part lands where --json predicts, within 1 ms ({player})", off <= rate / 1000,
                  f"worst {off / rate * 1000:.2f} ms")
        else:
            check(title, not missing and worst <= bound, detail)
        # Rule 2: dips at every seam, where the report predicts it and where it was found.
        if n > 1:
            dip_check(name, player, decode, landed, predicted, offset, rate)
            if player == "ffmpeg" and predicted:
                diffs = [abs(p - q) for p, q in zip(landed, predicted) if p is not None]
                seams = report.get("seams", {})
                note(f"{name}: --json predicts landings within {max(diffs, default=0) / rate * 1000:.2f} ms of "
                     f"FFmpeg's; it predicts worst dip {fmt(seams.get('worst_dip_ms'))} ms, median "
                     f"{fmt(seams.get('median_dip_ms'))} ms, worst start error "
                     f"{fmt(seams.get('worst_start_error_ms'))} ms")
        # Rule 4: length.
        seconds = len(decode) / rate
        tolerance = n * info["frame"] / rate
        if player == "ffmpeg":
            check(f"{name}: FFmpeg decodes the parts' total length within one frame per part",
                  abs(seconds - want) <= tolerance,
                  f"{seconds:.4f} s vs {want:.4f} s (±{tolerance * 1000:.1f} ms)")
        else:
            media_time = next((m for _, m in edits if m >= 0), 0)
            # GStreamer 1.22's qtdemux ends the stream early by the first edit's media_time
            # (issue 12's note; fixed upstream in 1.24, "qtdemux: Determine EOS based on the
            # stream segment"): that shortfall, and only that, is allowed.
            shortfall = media_time / timescale if timescale else 0
            check(f"{name}: GStreamer decodes the parts' total length within one frame per part "
                  "(less the first media_time)",
                  want - tolerance - shortfall <= seconds <= want + tolerance,
                  f"{seconds:.4f} s vs {want:.4f} s (±{tolerance * 1000:.1f} ms, shortfall allowed "
                  f"{shortfall * 1000:.1f} ms)")
        # Rule 5: lossless joins are the parts' PCM.
        if info["lossless"]:
            joined = array.array("h")
            for i in indexes:
                joined += parts.refs[i]
            if player == "ffmpeg":
                same = decode == joined
            else:
                # GStreamer 1.22 may end early by the first media_time (above): no more.
                media_time = next((m for _, m in edits if m >= 0), 0)
                same = decode == joined[:len(decode)] and 0 <= len(joined) - len(decode) <= media_time
            detail = f"{len(decode)} samples, as the parts' {len(joined)}"
            if not same:
                first = next((k for k, (a, b) in enumerate(zip(decode, joined)) if a != b),
                             min(len(decode), len(joined)))
                detail = f"{len(decode)} vs {len(joined)} samples, first difference at sample {first}"
            check(f"{name}: {'FFmpeg' if player == 'ffmpeg' else 'GStreamer'}'s PCM is the parts' decoded PCM "
                  "concatenated", same, detail)

    # The --json report against the file.
    problems = []
    if report.get("status") != "ok":
        problems.append(f"status {report.get('status')!r}")
    if report.get("inputs") != inputs:
        problems.append("inputs differ")
    if report.get("output") != out:
        problems.append(f"output {report.get('output')!r}")
    if report.get("kind") != "audio":
        problems.append(f"kind {report.get('kind')!r}")
    if report.get("packets") != len(out_packets):
        problems.append(f"packets {report.get('packets')} (file {len(out_packets)})")
    if report.get("dropped_packets") != total_in - len(out_packets):
        problems.append(f"dropped_packets {report.get('dropped_packets')} (file {total_in - len(out_packets)})")
    if report.get("bytes") != os.path.getsize(out):
        problems.append(f"bytes {report.get('bytes')} (file {os.path.getsize(out)})")
    if report.get("chapters") != chapters:
        problems.append(f"chapters {report.get('chapters')} (want {chapters})")
    if (report.get("seams") or {}).get("count") != n - 1:
        problems.append(f"seams.count {(report.get('seams') or {}).get('count')}")
    stream_duration = float(streams[0].get("duration", 0)) if streams else 0
    # The report's duration against ffprobe's within 1 ms: FFmpeg writes its edits in
    # milliseconds.
    if not isinstance(report.get("duration"), (int, float)) or abs(report["duration"] - stream_duration) > 0.001:
        problems.append(f"duration {report.get('duration')} (ffprobe {stream_duration})")
    if len(json_parts) != n:
        problems.append(f"{len(json_parts)} parts")
    elif not all(isinstance(p.get("start"), (int, float)) and isinstance(p.get("duration"), (int, float))
                 for p in json_parts):
        problems.append("parts without start or duration")
    else:
        if [p.get("path") for p in json_parts] != inputs:
            problems.append("parts' paths differ from the inputs")
        # Each start is the sum of the reported lengths before it; each length is the
        # part's within 1 ms (a part whose media does not hold its sound's end exactly has
        # only FFmpeg's edit, in milliseconds, to say where it ends).
        sums = [sum(p["duration"] for p in json_parts[:k]) for k in range(n)]
        starts = [abs(p["start"] - place) for p, place in zip(json_parts, sums)]
        lengths = [abs(p["duration"] - parts.durations[i]) for p, i in zip(json_parts, indexes)]
        k, j = max(range(n), key=starts.__getitem__), max(range(n), key=lengths.__getitem__)
        if starts[k] > 1e-6 or lengths[j] > 0.001 + 1 / rate:
            problems.append(f"parts[].start off the sum of the lengths before it by up to "
                            f"{starts[k] * 1000:.2f} ms (part {k + 1}: {json_parts[k]['start']:.6f} vs "
                            f"{sums[k]:.6f}), parts[].duration off its length by up to {lengths[j] * 1000:.2f} ms "
                            f"(part {j + 1}: {json_parts[j]['duration']:.6f} vs {parts.durations[indexes[j]]:.6f})")
    check(f"{name}: --json agrees with the file", not problems, "; ".join(problems))
    return out


def calibrate(name, parts, tmp, gst):
    """The locator on the parts decoded alone: it must find each where it is, to the sample,
    also when the part's first packet decodes as a crossfade (the case that biased an onset
    detector) and when its first frame is lost; and where each player's decode of part 1
    alone starts against the reference (that player's zero for the start errors of a join)."""
    rate, frame, info = parts.rate, parts.info["frame"], parts.info
    errors = []
    for i in (0, 1, len(parts.paths) - 1):
        a, b = parts.refs[i - 1 if i else 1], parts.refs[i]
        cut = len(a) - 777
        for kind in ("butted", "crossfade", "lost"):
            head = array.array("h", b[:frame])
            if kind == "crossfade":
                tail = a[cut:cut + frame] if cut + frame <= len(a) else array.array("h", [0]) * frame
                head = array.array("h", (int((x * k + y * (frame - k)) / frame) for k, (x, y) in
                                         enumerate(zip(head, tail))))
            elif kind == "lost":
                head = array.array("h", [0]) * frame
            joined = a[:cut] + head + b[frame:]
            position, _ = locate(joined, b, cut + 300, rate, info["settle"], int(0.1 * rate))
            errors.append((i + 1, kind, None if position is None else position - cut))
    bad = [e for e in errors if e[2] != 0]
    check(f"{name}: the locator finds parts decoded alone to the sample (butted, crossfaded, first frame lost)",
          not bad, f"misses {bad}", detail_if_ok=False)
    # A player may decode a part alone at an offset from the reference (HE-AAC: FFmpeg 5.1 early
    # by the file's first media_time, as it skips it twice; GStreamer 1.22 on it). In a join
    # only the first edit (part 1's priming) is applied, so part 1's offset is that player's
    # zero for the whole join.
    for player in ("ffmpeg", "GStreamer") if gst else ("ffmpeg",):
        offsets = []
        for i in (0, 1, len(parts.paths) - 1):
            if player == "ffmpeg":
                alone = decode_ffmpeg(parts.paths[i], os.path.join(tmp, "calib-f.raw"), rate)[0]
            else:
                alone = decode_gstreamer(parts.paths[i], os.path.join(tmp, "calib-g.raw"), rate)
            position, _ = locate(alone, parts.refs[i], 0, rate, info["settle"], int(0.3 * rate))
            offsets.append(position)
        label = "FFmpeg" if player == "ffmpeg" else player
        if check(f"{name}: {label}'s decode of part 1 alone is found against the reference", offsets[0] is not None,
                 f"offsets {offsets} (parts 1, 2, last)"):
            parts.offsets[player] = offsets[0]
            if any(offsets):
                note(f"{name}: {label} decodes parts 1, 2 and the last alone {offsets} sample(s) from the "
                     f"reference; part 1's is its zero for the start errors")


def probe_parts_check(name, parts):
    """ffprobe and the batched framehash agree on the first part's packets; ffprobe's
    durations are the generator's lengths, less at most FFmpeg's truncation to 1 ms."""
    check(f"{name}: ffprobe and FFmpeg's framehash list the same packets (part 1)",
          ffprobe_packets(parts.paths[0]) == parts.packets[0],
          f"{len(ffprobe_packets(parts.paths[0]))} vs {len(parts.packets[0])}")
    short = [d - p for d, p in zip(parts.durations, parts.probed)]
    check(f"{name}: ffprobe's durations are the generated lengths within 1 ms (its edits' unit)",
          all(abs(x) <= 0.001 + 1 / parts.rate for x in short),
          f"{min(short) * 1000:+.3f} to {max(short) * 1000:+.3f} ms")


# --- Cases ------------------------------------------------------------------------------------

def lengths_varied(count, seed):
    rng = random.Random(seed)
    return [round(rng.uniform(1.0, 2.0), 4) for _ in range(count)]


def make_parts(codec, tmp, lengths, seed, label):
    folder = os.path.join(tmp, label)
    os.makedirs(folder, exist_ok=True)
    info = CODECS[codec]
    if codec == "he-aac":
        paths = make_he_aac(folder, lengths, seed)
    else:
        paths = [os.path.join(folder, f"{label}-{k:03d}.{info['ext']}") for k in range(len(lengths))]
        encode_parts([(music(info["rate"], d, seed + k), info["encode"], p)
                      for k, (d, p) in enumerate(zip(lengths, paths))])
    return Parts(codec, paths, folder, label, lengths=lengths, core_rate=22050 if codec == "he-aac" else None)


def audio_cases(tool, tmp, gst_ok):
    sets = [("aac", "AAC LC", lengths_varied(100, 27), 1000, (2, 10, 100)),
            ("aac", "AAC LC identical", [1.2345] * 100, 2000, (100,)),
            ("he-aac", "HE-AAC", lengths_varied(100, 28), 3000, (2, 10, 100)),
            ("opus", "Opus", lengths_varied(100, 29), 4000, (2, 10, 100)),
            ("alac", "ALAC", lengths_varied(100, 30), 5000, (2, 10, 100)),
            ("flac", "FLAC", lengths_varied(100, 31), 6000, (2, 10, 100))]
    wanted = []
    for codec, label, lengths, seed, counts in sets:
        encoder = CODECS[codec].get("encoder")
        if encoder and not ffmpeg_has_encoder(encoder):
            oracle(f"FFmpeg's {encoder} encoder", False, f"ffmpeg has no {encoder} encoder")
            continue
        wanted.append((codec, label, lengths, seed, counts))
    # The next sets are made (encoded, probed, decoded alone: mostly other processes) while
    # this one is judged (mostly this one), so that both cores work.
    with ThreadPoolExecutor(1) as maker:
        made = [maker.submit(make_parts, codec, tmp, lengths, seed, label.replace(" ", "-").lower())
                for codec, label, lengths, seed, _ in wanted]
        for (codec, label, _, _, counts), future in zip(wanted, made):
            parts = future.result()
            gst = gst_ok and any(gst_has(e) for e in CODECS[codec]["gst"])
            if gst_ok and not gst:
                gst = oracle(f"GStreamer's {codec} decoder", False, f"none of {CODECS[codec]['gst']}")
            if gst and len(decode_gstreamer(parts.paths[0], os.path.join(tmp, "probe-g.raw"), parts.rate)) == 0:
                # Rule 5's exception: a player that cannot play the container's codec is named.
                why = run("gst-launch-1.0", "-q", "filesrc", f"location={parts.paths[0]}", "!", "qtdemux",
                          "name=d", "d.audio_0", "!", "decodebin", "!", "fakesink").stderr.strip()[:160]
                skip(f"{label}: the GStreamer half", f"GStreamer cannot play {codec} in MP4 here: {why}")
                gst = False
            probe_parts_check(label, parts)
            calibrate(label, parts, tmp, gst)
            for n in counts:
                judge_audio_join(f"{label} x{n}", tool, parts, list(range(n)), tmp, gst)


def bear_case(tool, tmp, gst):
    """Real HE-AAC: three cuts of the corpus's sp_bear_he_aac.mp4 by our extraction."""
    source = os.path.join(CORPUS, "sp_bear_he_aac.mp4")
    if not os.path.exists(source):
        skip("HE-AAC corpus cuts", f"{source} is missing")
        return
    folder = os.path.join(tmp, "bear")
    os.makedirs(folder, exist_ok=True)
    paths = []
    for k, (a, b) in enumerate(((0.0, 0.93), (0.93, 1.87), (1.87, 2.76))):
        path = os.path.join(folder, f"bear-{k}.m4a")
        r = run(tool, "--overwrite", "-q", source, path, "--from", str(a), "--to", str(b))
        if r.returncode != 0:
            check("HE-AAC corpus cuts: extraction --from/--to", False, r.stderr.strip())
            return
        paths.append(path)
    parts = Parts("he-aac", paths, folder, "bear")
    calibrate("HE-AAC corpus cuts", parts, tmp, gst)
    judge_audio_join("HE-AAC corpus cuts x3", tool, parts, [0, 1, 2], tmp, gst)


# --- Video joins --------------------------------------------------------------------------------

def make_clip(path, seconds, seed, video_args, size="64x64", with_video=True, rate=48000, channels=1,
              audio_args=("-c:a", "aac", "-aac_pns", "0", "-b:a", "64k")):
    """A phone-like clip: 30 fps, keyframe every 0.5 s, B-frames, 48 kHz AAC with the marker."""
    args = []
    if with_video:
        args += ["-f", "lavfi", "-i", f"testsrc=size={size}:rate=30:duration={seconds:.4f}"]
    args += ["-f", "lavfi", "-i", music(rate, seconds, seed)]
    if with_video:
        args += ["-map", "0:v", "-map", "1:a", *video_args, "-g", "15", "-pix_fmt", "yuv420p"]
    args += ["-ac", str(channels), *audio_args, path]
    ffmpeg(*args)


VIDEO = {
    "H.264 + AAC": ["-c:v", "libx264", "-bf", "2"],
    "HEVC + AAC": ["-c:v", "libx265", "-tag:v", "hvc1", "-x265-params", "bframes=2:log-level=error"],
}


def video_frames_ffmpeg(path):
    """FFmpeg's decoded video frames' presentation times (seconds)."""
    out = run("ffmpeg", "-v", "error", "-i", path, "-map", "0:v:0", "-fps_mode", "passthrough", "-f", "framecrc", "-")
    base = None
    times = []
    for line in out.stdout.splitlines():
        if line.startswith("#tb 0:"):
            num, den = line.split(":")[1].strip().split("/")
            base = int(num) / int(den)
        elif line and not line.startswith("#"):
            times.append(int(line.split(",")[2]) * base)
    return times


def video_frames_gstreamer(path, raw, pixels):
    if os.path.exists(raw):
        os.remove(raw)
    run("gst-launch-1.0", "-q", "filesrc", f"location={path}", "!", "qtdemux", "name=d", "d.video_0", "!",
        "decodebin", "!", "videoconvert", "!", "video/x-raw,format=GRAY8", "!", "filesink", f"location={raw}")
    return os.path.getsize(raw) // pixels if os.path.exists(raw) else 0


def video_cases(tool, tmp, gst_ok):
    for label, video_args in VIDEO.items():
        encoder = video_args[1]
        if not ffmpeg_has_encoder(encoder):
            oracle(f"FFmpeg's {encoder} encoder", False, f"ffmpeg has no {encoder} encoder")
            continue
        gst = gst_ok and gst_has("avdec_h264" if "264" in encoder else "avdec_h265")
        if gst_ok and not gst:
            gst = oracle(f"GStreamer's {encoder} decoder", False, "no avdec_h264/avdec_h265")
        folder = os.path.join(tmp, label.split()[0].lower().replace(".", ""))
        os.makedirs(folder, exist_ok=True)
        clips = []
        for k, seconds in enumerate((1.62, 2.07, 1.85)):
            clips.append(os.path.join(folder, f"clip-{k}.mp4"))
            make_clip(clips[-1], seconds, 7000 + 10 * len(clips) + len(label), video_args)
        judge_video_join(label, tool, clips, folder, gst)


def judge_video_join(label, tool, clips, tmp, gst):
    parts = Parts("aac", clips, tmp, "clips", rate=48000)
    name = f"video {label} x{len(clips)}"
    out = os.path.join(tmp, "joined.mp4")
    r, report = concat(tool, clips, out, ("--overwrite",))
    if not check(f"{name}: concat succeeds", r.returncode == 0 and os.path.exists(out),
                 failure(r, report) if r.returncode else ""):
        return
    tracks, _ = track_layout(out)
    kinds = sorted(t[0] for t in tracks)
    check(f"{name}: one video and one audio track, one edit each", kinds == ["soun", "vide"]
          and all(t[1] == 1 for t in tracks), str(tracks))
    # Rule 1: audio packets (at most 2 dropped per seam) and video packets (all of them,
    # each clip from its first sync sample).
    ok, drops = match_packets(ffprobe_packets(out), parts.packets)
    check(f"{name}: audio packets are the clips' in order, at most {SEAM_DROPS} dropped per seam", ok,
          drops if not ok else "", detail_if_ok=False)
    want_video = []
    for clip in clips:
        packets = ffprobe_packets(clip, "v:0", with_sync=True)
        first_sync = next((k for k, p in enumerate(packets) if p[2]), 0)
        want_video += [p[:2] for p in packets[first_sync:]]
    got_video = ffprobe_packets(out, "v:0")
    check(f"{name}: video packets are the clips' from their first sync sample, in order", got_video == want_video,
          f"{len(got_video)} vs {len(want_video)} packets")
    # Decoded frames: FFmpeg and GStreamer decode the clips' frames, all of them.
    clip_times = [video_frames_ffmpeg(c) for c in clips]
    times = video_frames_ffmpeg(out)
    check(f"{name}: FFmpeg decodes the clips' frame count", len(times) == sum(map(len, clip_times)),
          f"{len(times)} vs {sum(map(len, clip_times))}")
    if gst:
        pixels = 64 * 64
        got = video_frames_gstreamer(out, os.path.join(tmp, "v.raw"), pixels)
        want = sum(video_frames_gstreamer(c, os.path.join(tmp, "v.raw"), pixels) for c in clips)
        check(f"{name}: GStreamer decodes the clips' frame count", got == want, f"{got} vs {want}")
    # Where each clip's video starts, from FFmpeg's decoded frames: its first frame follows
    # the previous clips' frames; the places are the sums of the clips' video durations.
    video_durations = [stream_duration(c, "v:0") for c in clips]
    starts, k = [], 0
    for ts in clip_times:
        starts.append(times[k] if k < len(times) else None)
        k += len(ts)
    places = [sum(video_durations[:i]) for i in range(len(clips))]
    frame_time = video_durations[0] / len(clip_times[0])
    check(f"{name}: each clip's video starts at its place (within half a video frame)",
          all(s is not None and abs(s - p) <= frame_time / 2 for s, p in zip(starts, places)),
          f"starts {[None if s is None else round(s, 4) for s in starts]} vs places "
          f"{[round(p, 4) for p in places]}")
    # Audio in sync with the video: each clip's marker within half an audio frame of where its
    # video starts (the command's promise), not accumulating.
    calibrate(name, parts, tmp, gst)
    got, _, found = measure(out, parts, list(range(len(clips))), tmp, gst)
    rate = parts.rate
    for player, landed in found.items():
        errors = [None if p is None or s is None else p / rate - s for p, s in zip(landed, starts)]
        check(f"{name}: each clip's audio within half an audio frame of its video ({player})",
              all(e is not None and abs(e) <= 512 / rate for e in errors),
              "errors " + ", ".join("not found" if e is None else f"{e * 1000:+.2f} ms" for e in errors)
              + f" (limit {512 / rate * 1000:.2f} ms)")
        offset = parts.offsets[player]
        dip_check(name, player, got[player], landed, predicted_landings(report, len(clips), rate), offset, rate)
    total = sum(video_durations)
    seconds = len(got["ffmpeg"]) / rate
    check(f"{name}: FFmpeg decodes the clips' total length within one audio frame per clip",
          abs(seconds - total) <= len(clips) * 1024 / rate, f"{seconds:.4f} s vs {total:.4f} s")
    check(f"{name}: --json says video, {len(clips)} parts",
          report.get("status") == "ok" and report.get("kind") == "video" and len(report.get("parts") or []) == 3,
          json.dumps(report)[:200])


# --- Audiobook, refusals, lists, exit codes ---------------------------------------------------

def mutagen_chapters(path):
    """mutagen's Nero chapters as [(start seconds, title)], or an error text. mutagen 1.46
    (_parse_chpl) divides chpl's start, in 100 ns units, by 10,000 and then by mvhd's
    timescale, as if it counted timescale units of a millisecond; undo exactly that error:
    its start x timescale / 1000 is the start in seconds."""
    code = ("import json, sys\nfrom mutagen.mp4 import MP4\nc = MP4(sys.argv[1]).chapters\n"
            "print(json.dumps(None if c is None else [[x.start, x.title] for x in c] + [c._timescale]))")
    out = mutagen_reader.run_code(code, path, text=True)
    if out.returncode != 0:
        return out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "mutagen failed"
    listed = json.loads(out.stdout)
    if listed is None:
        return []
    scale = listed.pop()
    return [(start * scale / 1000, title) for start, title in listed]


def audiobook_case(tool, tmp, gst, mutagen_ok):
    folder = os.path.join(tmp, "book")
    os.makedirs(folder, exist_ok=True)
    titles = ["Chapter One", "Kapitel zwei – Über Brücken", None]
    names = ["01.m4a", "02.m4a", "03 Epilogue.m4a"]
    paths = [os.path.join(folder, n) for n in names]
    for k, (seconds, title, path) in enumerate(zip((1.73, 1.21, 1.48), titles, paths)):
        meta = ["-metadata", f"title={title}"] if title else []
        ffmpeg("-f", "lavfi", "-i", music(44100, seconds, 8000 + k), "-ac", "1", *CODECS["aac"]["encode"], *meta,
               path)
    parts = Parts("aac", paths, folder, "book")
    calibrate("audiobook", parts, tmp, gst)
    out = judge_audio_join("audiobook x3", tool, parts, [0, 1, 2], tmp, gst, extra=("--chapters",),
                           output_name="book.m4b", expect_brand="M4B ", chapters=3)
    if out is None:
        return
    want_titles = ["Chapter One", "Kapitel zwei – Über Brücken", "03 Epilogue"]
    places = [0, parts.durations[0], parts.durations[0] + parts.durations[1]]
    bound = CODECS["aac"]["bound"] / 44100
    listed = json.loads(ffprobe.ffprobe(out, "-show_chapters", text=True).stdout or "{}")
    chapters = [(float(c["start_time"]), float(c["end_time"]), c.get("tags", {}).get("title")) for c in
                listed.get("chapters", [])]
    total = sum(parts.durations)
    check("audiobook: ffprobe lists one chapter per part, titled, each at its place (QuickTime chapter track)",
          [c[2] for c in chapters] == want_titles
          and all(abs(c[0] - p) <= bound for c, p in zip(chapters, places))
          and all(abs(a[1] - b[0]) <= 0.001 for a, b in zip(chapters, chapters[1:]))
          and chapters and abs(chapters[-1][1] - total) <= bound,
          f"{chapters} vs titles {want_titles}, places {[round(p, 4) for p in places]}, end {total:.4f}")
    if mutagen_ok:
        nero = mutagen_chapters(out)
        check("audiobook: mutagen lists the same chapters (Nero chpl)",
              isinstance(nero, list) and [t for _, t in nero] == want_titles
              and all(abs(s - p) <= bound for (s, _), p in zip(nero, places)),
              f"{nero} vs {want_titles} at {[round(p, 4) for p in places]}")


def left_behind(folder, before):
    return sorted(set(os.listdir(folder)) - set(before))


def refusal_cases(tool, tmp):
    folder = os.path.join(tmp, "refuse")
    os.makedirs(folder, exist_ok=True)

    def p(name):
        return os.path.join(folder, name)

    aac = ["-c:a", "aac", "-b:a", "64k"]
    ffmpeg("-f", "lavfi", "-i", music(44100, 1.1, 1), "-ac", "1", *aac, p("a44.m4a"))
    ffmpeg("-f", "lavfi", "-i", music(44100, 1.2, 2), "-ac", "1", *aac, p("b44.m4a"))
    ffmpeg("-f", "lavfi", "-i", music(48000, 1.3, 3), "-ac", "1", *aac, p("c48.m4a"))
    ffmpeg("-f", "lavfi", "-i", music(44100, 1.3, 4), "-ac", "2", *aac, p("d-stereo.m4a"))
    ffmpeg("-f", "lavfi", "-i", music(44100, 1.3, 5), "-ac", "1", "-c:a", "alac", p("e-alac.m4a"))
    make_clip(p("v1.mp4"), 1.2, 6, VIDEO["H.264 + AAC"])
    make_clip(p("v2-wide.mp4"), 1.2, 7, VIDEO["H.264 + AAC"], size="96x64")
    make_clip(p("v3.mp4"), 1.2, 8, VIDEO["H.264 + AAC"])
    make_clip(p("v4-baseline.mp4"), 1.2, 10, ["-c:v", "libx264", "-profile:v", "baseline"])
    ffmpeg("-f", "lavfi", "-i", music(48000, 1.2, 9), "-ac", "1", *aac, p("f48-audio.mp4"))
    # Each refusal must name the input that differs and say what differs: its value (48000
    # Hz, 2 channels, ALAC) or, for the video configuration, the term for it.
    cases = [("differing sample rate", [p("a44.m4a"), p("c48.m4a")], "c48", (r"48\s*000|48 ?khz",)),
             ("differing channels", [p("a44.m4a"), p("d-stereo.m4a")], "d-stereo", (r"\b2 ?ch", "stereo")),
             ("differing codec", [p("a44.m4a"), p("e-alac.m4a")], "e-alac", ("alac",)),
             ("differing picture size", [p("v1.mp4"), p("v2-wide.mp4")], "v2-wide",
              ("96", "size", "width", "dimension")),
             ("differing SPS/PPS (same size, another H.264 profile)", [p("v1.mp4"), p("v4-baseline.mp4")],
              "v4-baseline", ("sps", "pps", "parameter set", "avcc", "profile", "configuration")),
             ("one with video, one without", [p("v3.mp4"), p("f48-audio.mp4")], "f48-audio", ("video",))]
    for label, inputs, culprit, patterns in cases:
        out_dir = os.path.join(folder, "out-" + culprit)
        os.makedirs(out_dir, exist_ok=True)
        out = os.path.join(out_dir, "joined.mp4" if inputs[0].endswith(".mp4") else "joined.m4a")
        r, _ = concat(tool, inputs, out, as_json=False)
        message = r.stderr.strip()
        left = left_behind(out_dir, [])
        check(f"refusal, {label}: exit 69 naming the input and what differs, nothing left behind",
              r.returncode == 69 and culprit in message and any(re.search(w, message.lower()) for w in patterns)
              and not left, f"exit {r.returncode}, stderr {message[:200]!r}" + (f", left {left}" if left else ""))

    # An existing output without --overwrite: 73, untouched.
    out = p("exists.m4a")
    with open(out, "wb") as f:
        f.write(b"keep me")
    before = os.listdir(folder)
    r, _ = concat(tool, [p("a44.m4a"), p("b44.m4a")], out, as_json=False)
    check("existing output without --overwrite: exit 73, untouched, nothing left behind",
          r.returncode == 73 and open(out, "rb").read() == b"keep me" and not left_behind(folder, before),
          f"exit {r.returncode}: {r.stderr.strip()[:120]}", detail_if_ok=False)
    # Usage errors: 64.
    for label, args in (("no inputs", ["concat"]),
                        ("an unknown option", ["concat", "--bogus", p("a44.m4a"), p("b44.m4a"), p("u.m4a")]),
                        ("inputs beside --file-list", ["concat", "--file-list", p("list.txt"), p("a44.m4a"),
                                                       p("u.m4a")])):
        if label == "inputs beside --file-list":
            with open(p("list.txt"), "w") as f:
                f.write("file 'a44.m4a'\nfile 'b44.m4a'\n")
        r = run(tool, *args)
        check(f"usage error, {label}: exit 64, nothing written", r.returncode == 64 and not os.path.exists(p("u.m4a")),
              f"exit {r.returncode}: {r.stderr.strip()[:120]}", detail_if_ok=False)


def file_list_cases(tool, tmp):
    folder = os.path.join(tmp, "lists")
    os.makedirs(os.path.join(folder, "parts"), exist_ok=True)
    names = ["parts/one.m4a", "part two.m4a", "it's three.m4a"]
    paths = [os.path.join(folder, n) for n in names]
    for k, (seconds, path) in enumerate(zip((1.31, 1.17, 1.44), paths)):
        ffmpeg("-f", "lavfi", "-i", music(44100, seconds, 9000 + k), "-ac", "1", *CODECS["aac"]["encode"], path)
    listing = os.path.join(folder, "list.txt")
    with open(listing, "w") as f:
        f.write("ffconcat version 1.0\n"
                "# three parts, paths relative to this list\n"
                "\n"
                "file 'parts/one.m4a'\n"
                "file 'part two.m4a'\n"
                "# a quote inside a quoted name\n"
                "file 'it'\\''s three.m4a'\n")
    # The list is FFmpeg's grammar: FFmpeg's concat demuxer reads it.
    r = run("ffmpeg", "-v", "error", "-f", "concat", "-safe", "0", "-i", listing, "-c", "copy", "-f", "null", "-")
    check("--file-list: FFmpeg's concat demuxer reads the same list", r.returncode == 0, r.stderr.strip()[:200],
          detail_if_ok=False)
    out = os.path.join(tmp, "from-list.m4a")
    # Run from another folder, naming the list relative to it: the paths in the list are the
    # list's folder's, not the working folder's.
    r, report = concat(tool, [], out, ("--file-list", os.path.join("..", "list.txt")),
                       cwd=os.path.join(folder, "parts"))
    ok = r.returncode == 0 and os.path.exists(out)
    check("--file-list: concat succeeds (comment, blank line, header, relative path, quoted names)", ok,
          f"exit {r.returncode}: {r.stderr.strip()[:200]}", detail_if_ok=False)
    if ok:
        parts = Parts("aac", paths, folder, "list")
        # The report's paths may be relative to the working folder the tool ran in.
        got = [os.path.realpath(os.path.join(folder, "parts", p)) for p in report.get("inputs", [])]
        check("--file-list: the inputs are the listed files, in order", got == [os.path.realpath(p) for p in paths],
              str(report.get("inputs")))
        good, drops = match_packets(ffprobe_packets(out), parts.packets)
        check("--file-list: packets are the listed parts' in order", good, drops if not good else "",
              detail_if_ok=False)
    for directive in ("duration 3", "inpoint 0.5"):
        bad = os.path.join(folder, "bad.txt")
        with open(bad, "w") as f:
            f.write(f"ffconcat version 1.0\nfile 'parts/one.m4a'\n{directive}\nfile 'part two.m4a'\n")
        out = os.path.join(tmp, "bad-list.m4a")
        r, _ = concat(tool, [], out, ("--file-list", bad))
        check(f"--file-list with `{directive}`: exit 64, nothing written",
              r.returncode == 64 and not os.path.exists(out),
              f"exit {r.returncode}: {r.stderr.strip()[:120]}", detail_if_ok=False)


# --- The report (--report) ------------------------------------------------------------------------

def report_row(label, path, parts, indexes, tmp, gst):
    rate = parts.rate
    got, places, found = measure(path, parts, indexes, tmp, gst)
    row = [label]
    for player in ("ffmpeg", "GStreamer"):
        if player not in got:
            row += ["–", "–"]
            continue
        offset = parts.offsets[player]
        dips = [d for _, d in dips_at(got[player], [None if p is None else p + offset for p in found[player][1:]],
                                      rate) if d is not None]
        row += [f"{max(dips, default=0):.1f}", f"{median(dips):.1f}"]
    errors = []
    for player in ("ffmpeg", "GStreamer"):
        if player in found:
            e = [abs(p - place * rate) for p, place in zip(found[player], places) if p is not None]
            missing = sum(p is None for p in found[player])
            errors.append(f"{max(e, default=0) / rate * 1000:.1f}" + (f" ({missing} lost)" if missing else ""))
    row.append(" / ".join(errors))
    want = sum(parts.durations[i] for i in indexes)
    row.append(" / ".join(f"{(len(got[p]) / rate - want) * 1000:+.1f}" for p in ("ffmpeg", "GStreamer") if p in got))
    return row


def report(tool, tmp, gst):
    rows = []
    for codec, label, counts, seed, lengths_seed in (("aac", "AAC LC", (2, 10, 100), 1000, 27),
                                                     ("he-aac", "HE-AAC", (2, 10, 100), 3000, 28),
                                                     ("opus", "Opus", (2, 10), 4000, 29)):
        parts = make_parts(codec, tmp, lengths_varied(max(counts), lengths_seed), seed, f"report-{codec}")
        calibrate(label, parts, tmp, gst)
        for n in counts:
            indexes = list(range(n))
            ours = os.path.join(tmp, f"ours-{codec}-{n}.{CODECS[codec]['ext']}")
            r, _ = concat(tool, [parts.paths[i] for i in indexes], ours, ("--overwrite",))
            if r.returncode == 0:
                rows.append(report_row(f"{label} × {n}, ours", ours, parts, indexes, tmp, gst))
            else:
                rows.append([f"{label} × {n}, ours", f"failed: exit {r.returncode}"] + [""] * 6)
            listing = os.path.join(tmp, f"list-{codec}-{n}.txt")
            with open(listing, "w") as f:
                f.write("".join(f"file '{parts.paths[i]}'\n" for i in indexes))
            theirs = os.path.join(tmp, f"ffmpeg-{codec}-{n}.{CODECS[codec]['ext']}")
            ffmpeg("-f", "concat", "-safe", "0", "-i", listing, "-c", "copy", theirs)
            rows.append(report_row(f"{label} × {n}, FFmpeg concat demuxer", theirs, parts, indexes, tmp, gst))
    versions = (run("ffmpeg", "-version").stdout.split("\n")[0].split(" Copyright")[0],
                run("gst-launch-1.0", "--version").stdout.split("\n")[1] if gst else "no GStreamer")
    print("Seams of `extract-audio concat` and of FFmpeg's concat demuxer (`ffmpeg -f concat -safe 0 -i list.txt "
          "-c copy`) on the same parts, measured by `python3 Scripts/concat-conformance.py --report` "
          f"({versions[0]}; {versions[1]}). The parts: pink noise with a 30 ms 3 kHz marker at each start, mono, "
          "1.0-2.0 s of seeded varied lengths; AAC LC from FFmpeg's encoder (44.1 kHz, 96 kb/s), HE-AAC as "
          "FFmpeg's AAC-LC cores (22.05 kHz, 32 kb/s) with SBR signalled, Opus from libopus (48 kHz, 64 kb/s).")
    print()
    print("| join | dip FFmpeg worst (ms) | dip FFmpeg median (ms) | dip GStreamer worst (ms) "
          "| dip GStreamer median (ms) | worst start error FFmpeg / GStreamer (ms) "
          "| length error FFmpeg / GStreamer (ms) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print()
    print("Dips: the longest stretch whose 1 ms RMS is more than 20 dB below the median of the 100 ms around "
          "the seam, at the seam found in the decode (Scripts/seams.py). Start error: where each part's sound "
          "lands (cross-correlated with the part decoded alone; HE-AAC from its first packet, its edit applied by "
          "the script) minus the sum of the earlier parts' presented lengths. Length error: the decode's length "
          "minus the parts' total (GStreamer 1.22 ends early by the first edit's media_time; FFmpeg 5.1 skips an "
          "HE-AAC file's media_time twice).")


# --- main ---------------------------------------------------------------------------------------------

def main():
    want_report = "--report" in sys.argv[1:]
    unknown = [a for a in sys.argv[1:] if a != "--report"]
    if unknown:
        sys.exit(f"usage: {sys.argv[0]} [--report]")
    have_ffmpeg = shutil.which("ffmpeg") is not None and shutil.which("ffprobe") is not None
    if not oracle("ffmpeg and ffprobe", have_ffmpeg, "not on PATH"):
        checks.finish()
    gst = shutil.which("gst-launch-1.0") is not None and gst_has("qtdemux")
    gst = oracle("GStreamer (gst-launch-1.0, qtdemux)", gst, "gst-launch-1.0 or qtdemux missing")
    tool = extract_audio(ROOT)
    if tool is None:
        sys.exit(1)
    help_text = run(tool, "concat", "--help")
    if help_text.returncode != 0 or "concat" not in help_text.stdout:
        note(f"`extract-audio concat --help` exits {help_text.returncode} and does not describe concat: "
             "the checks below run against it anyway")
    with tempfile.TemporaryDirectory() as tmp:
        if want_report:
            checks.out = sys.stderr
            report(tool, tmp, gst)
            return
        mutagen_ok = oracle("mutagen (/usr/bin/python3)", mutagen_reader.available(),
                            "/usr/bin/python3 cannot import mutagen")
        for section, step in (("audio joins", lambda: audio_cases(tool, tmp, gst)),
                              ("HE-AAC corpus cuts", lambda: bear_case(tool, tmp, gst)),
                              ("video joins", lambda: video_cases(tool, tmp, gst)),
                              ("audiobook", lambda: audiobook_case(tool, tmp, gst, mutagen_ok)),
                              ("refusals and exit codes", lambda: refusal_cases(tool, tmp)),
                              ("--file-list", lambda: file_list_cases(tool, tmp))):
            started = time.monotonic()
            step()
            note(f"{section}: {time.monotonic() - started:.1f} s")
    checks.finish()


if __name__ == "__main__":
    main()
