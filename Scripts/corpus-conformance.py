#!/usr/bin/env python3
"""Every command over every file of the real-world corpus, judged by independent oracles
only (FFmpeg, ffprobe, GStreamer, Scripts/mp4box.py), never by our own parser.

The corpus is `../shared/corpus/` beside the project ($CORPUS_DIR overrides); MANIFEST.tsv
is context only: every decision below is taken from a file's properties as ffprobe and
mp4box.py see them, never from its name. The cut checks are Scripts/corpus-cuts.py's; this
script covers the other commands, over every file (the two together cover the corpus).

Inputs. Each file is an input. A media segment (top-level moof, no moov) also gets its
init segment, found by class: a file with moov+mvex, no samples in its tables and no moof
of its own, whose track IDs are the segment's tfhd track IDs, and whose media timescale
makes the segment's trun durations last what the segment's sidx says they last (track IDs
alone do not tell the corpus' inits apart). The init and the segment, concatenated, are
then one more input, "INIT+SEGMENT", as players get them. A segment without an init found
is still run alone (no moov: every command must refuse it, exit 65).

The class of a file (what each command must do), from the oracles:
  - no moov (mp4box.py finds no top-level moov, or cannot walk the file) -> 65 everywhere;
  - truncated: a track's sample (sample table or trun, mp4box.py) lies past the end of the
    file, or, fragmented, a top-level box other than mfra (placed last by the format) runs
    past it (the later fragments are lost); a regular file whose cut box holds no listed
    sample past the end is whole;
  - audio tracks: mp4box.py's traks with handler `soun`; the first is FFmpeg's a:0;
  - encrypted: that track's sample entry is enca/drms or holds a sinf;
  - unsupported: ffprobe names no codec for it ("unknown"), or FFmpeg cannot stream-copy it
    into an MP4 (`ffmpeg -map 0:a:0 -c:a copy -f ipod`, else `-f mp4`, both refuse);
  - empty: that track has no sample (an init segment alone).

extraction (`extract-audio IN OUT.m4a`), in this order of precedence:
  no moov -> 65; no audio track -> 79; the audio track truncated (a sample past the end, or
  a fragmented file cut) or empty -> 65 (damaged: nothing to extract
  without --salvage; this comes before the codec, as the README's "truncated with nothing
  salvageable" moov-only PCM recordings need); encrypted or unsupported -> 69; else exit 0
  and the packets of OUT equal those of `ffmpeg -i IN -map 0:a:0 -c:a copy -f ipod` (or
  `-f mp4` where the ipod muxer refuses the codec): ffprobe's pts, dts, duration, size,
  CRC-32 and flags of every packet (edit lists applied, as players see them). A refusal
  must be one line on stderr.
  Listed differences, each verified where it is allowed:
  - FFmpeg 5.1 gives the last sample of a fragmented track its fragment's default duration,
    not its trun's (Scripts/expectations.py's known_deviations): allowed for the last
    packet's duration only, and ours must be the trun's (mp4box.py).
  - FFmpeg's edit list counts milliseconds and ignores the iTunSMPB valid count; FFmpeg gives
    the iTunSMPB priming to the last stream read, not the audio; FFmpeg's copy counts in the
    sample rate where the input's media timescale is another; FFmpeg 5.1 hides an Opus
    fragment's last sample of unknown duration. Each by class, checked over every packet
    (extraction_allowance).

probe --packets --json: Scripts/packets-conformance.py's compare(), imported, with its
  FFmpeg 5.1 exceptions and damaged tracks' {"track_id", "problem", "reason"} objects. A
  file of which nothing can be listed (no moov, or no sample of any track inside the file)
  must exit 65.

probe --json: exits 0 on every file with a moov and agrees with ffprobe
  (Scripts/probe_check.py's check: tracks, kinds, formats, durations); a file without
  moov must exit 65.

remux (`remux IN OUT.mp4`, `.mov` when the input is QuickTime: brand `qt  ` or no ftyp):
  no moov or truncated -> 65 (a remux has no --salvage: a partial copy must not pass for a
  whole one); else exit 0, and every track it keeps has the same packets (ffprobe
  -ignore_editlist 1, CRC-32 per packet, in track order; attached pictures aside); a track
  it drops must be named in a warning on stderr. PCM tracks are compared as a whole (first
  pts, total duration, CRC-32 of all their bytes): FFmpeg makes PCM packets of the chunks.
  Listed differences:
  - negative composition offsets are written non-negative (README: every offset and the
    edit's media_time moved together): a track's pts may all be shifted by one constant S,
    checked: dts unchanged, every pts + S, and the output's first edit media_time is the
    input's + S.
  - a track FFmpeg's stream probe did not meet in one of the files gets the file's
    duration: its last packet "file duration - dts" there (unprobed_last_duration).
  Then both players decode OUT to as many video frames and audio samples as they decode of
  IN (first audio and first video stream; FFmpeg: every audio and video stream it has a
  decoder for): FFmpeg with `-f framecrc` (a line per frame; audio durations in samples),
  GStreamer 1.22 with qtdemux ! decodebin into a filesink (video as 8x8 GRAY8, 64 bytes a
  frame; audio as S16 mono, bytes / 2). Allowed, exactly: GStreamer 1.22 ends a stream
  early by up to its first edit's media_time (fixed upstream) - OUT may lack at most that
  many frames/samples of what IN gives (in OUT's first edit of that track, converted to
  frames or samples);
  FFmpeg applies an edit to PCM at packet ends (less than a packet apart, each file's own);
  GStreamer 1.22 drops B-frames presented past the end of a media without edits, which
  OUT's edit keeps, and plays an lpcm track held in several chunks whole. A
  decoder a player lacks here (AV1, DTS:X, IAMF, AC-4 in GStreamer), and encrypted tracks,
  skip that player's half with the reason, not counted.

Truncated variants (issue 32): every corpus file whose moov lies before the cut is also run
  cut at 25, 50 and 75 % of its bytes (NAME@P%), through every command above; the oracles
  class it truncated, so extraction and remux must refuse it (65), probe must agree with
  ffprobe, and probe --packets must list exactly ffprobe's packets less its partial last one.

damaged (issue 32): a regular (not fragmented, not truncated) input with a video track and
  another track holding sample entries gets that other track's `stsd` renamed `free` (same
  length: it has no sample description, its tables intact), and `remux --json` of it must
  exit 0, list exactly that track (its tkhd ID) in `dropped_tracks` with one warning naming
  it, and hold one track fewer for ffprobe; its first video stream decodes to as many
  frames in FFmpeg (framecrc) and in GStreamer (qtdemux ! decodebin) as the plain remux's
  (itself checked against the input above), each player a check of its own. `mux
  --keep-original-audio --json` of it under Fixtures/meta-itunes.m4a must do the same
  (exit 0, the track in `dropped_tracks` and one warning, the first video's frame counts
  the plain remux's), and `tag --set title=…` must edit it (exit 0, ffprobe reads the
  title and as many streams as before). Skipped without the plain remux's output; a
  player's half skipped when it cannot decode the plain remux's video.

Prints one line per input and command, `ok`/`FAIL`/`skipped (reason)` with the time the step
took, and `N passed, M failed` last; exits 1 on any failure. Set EXTRACT_AUDIO to a built
binary to skip the release build; inputs run two at a time. To run part of it: CORPUS_FILES,
comma-separated globs matched against the input names (`sp_bear_*,*.mov`; an init and its
segment are "INIT+SEGMENT"), and CORPUS_ONLY, a comma-separated list of the commands to
check (extract, packets, probe, remux, damaged).
"""
import fnmatch
import importlib.util
import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from fractions import Fraction

sys.dont_write_bytecode = True
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Scripts"))
import mp4box  # noqa: E402
from oracle import CORPUS, corpus_names, gst  # noqa: E402
from oracle.binary import extract_audio_and_corpus  # noqa: E402
from oracle.ffprobe import ffprobe, packets as ffprobe_packets  # noqa: E402
from oracle.report import Report, Tally, fail_before_start, print_reports  # noqa: E402
from oracle.run import run as oracle_run  # noqa: E402
import probe_check  # noqa: E402

_spec = importlib.util.spec_from_file_location("packets_conformance",
                                               os.path.join(ROOT, "Scripts", "packets-conformance.py"))
packets_conformance = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(packets_conformance)

ENCRYPTED_ENTRIES = {b"encv", b"drmi", b"enca", b"drms", b"encs", b"enct"}
STATUS = {"damaged": 65, "unsupported": 69, "no audio": 79}

# Failures of ours that are understood and not fixed yet (an issue stays open for them).
# Empty now (issue 20's last three are fixed); kept for the next one. Each names the input and the check it fails; such a failure is printed KNOWN and listed
# before the closing line, counted neither as passed nor as failed; once the check passes
# it counts as a pass. Never a player's fault: those are allowances, by class, above.
KNOWN_OPEN = {
}
tally = Tally(KNOWN_OPEN)


def run(*args, **kw):
    kw.setdefault("timeout", 300)
    return oracle_run(*args, **kw)


# --- The oracle's view of a file ------------------------------------------------------

def walk_file(path):
    data = open(path, "rb").read()
    try:
        boxes = mp4box.read_tree(data, trailing_ok=True, truncated_ok=True)
    except (ValueError, struct.error) as error:
        return data, None, str(error)
    return data, boxes, None


def entries_of(trak):
    try:
        return mp4box.stbl_of(trak).child(b"stsd").children
    except ValueError:
        return []


def encrypted(trak):
    return any(e.kind in ENCRYPTED_ENTRIES or any(c.kind == b"sinf" for c in e.children) for e in entries_of(trak))


def samples_of(data, boxes, trak):
    """mp4box.py's samples of a track (table, then fragments): [(offset, size)], or None
    when its tables cannot be read."""
    try:
        samples = [(o, s) for o, s, _ in mp4box.table_samples(data, trak)]
        if mp4box.is_fragmented(boxes):
            samples += [(s["offset"], s["size"]) for s in
                        mp4box.fragment_samples(data, boxes, mp4box.track_id(data, trak))]
        return samples
    except (ValueError, KeyError, IndexError, struct.error):
        return None


def ffprobe_streams(path):
    out = ffprobe(path, "-show_streams", timeout=120)
    if out.returncode != 0:
        return None
    return json.loads(out.stdout or b"{}").get("streams", [])


def facts(path):
    """The class of a file as the oracles see it (see the docstring)."""
    data, boxes, error = walk_file(path)
    f = {"size": len(data), "moov": False, "why": error or "", "brand": None}
    if boxes is None:
        return f
    kinds = [b.kind for b in boxes]
    if b"ftyp" in kinds:
        ftyp = boxes[kinds.index(b"ftyp")]
        f["brand"] = data[ftyp.payload:ftyp.payload + 4]
    cut = [b for b in boxes if b.truncated]
    f["cut_box"] = f"{cut[0].kind.decode('latin-1')} at byte {cut[0].offset} runs past the end" if cut else None
    moovs = [b for b in boxes if b.kind == b"moov"]
    if not moovs or moovs[0].truncated:
        f["why"] = "no moov" if not moovs else "moov runs past the end of the file"
        return f
    f["moov"] = True
    moov = moovs[0]
    f["tracks"] = []
    for trak in (c for c in moov.children if c.kind == b"trak"):
        try:
            handler = mp4box.handler_type(data, trak)
        except ValueError:
            handler = b"????"
        samples = samples_of(data, boxes, trak)
        past = samples is not None and any(o + s > len(data) for o, s in samples)
        f["tracks"].append({"handler": handler, "encrypted": encrypted(trak), "samples": samples,
                            "past_end": past, "entries": [e.kind for e in entries_of(trak)],
                            "trak": trak})
    # A track is cut short when one of its samples runs past the end of the file, or, in a
    # fragmented file, when any top-level box is cut (the fragments after the cut, of every
    # track, are lost with it). A regular file whose cut box holds no sample past the end
    # (a trailing box, or an mdat whose listed samples all lie before the cut) still holds
    # every sample its tables list (a box cut inside moov was handled above).
    f["fragmented"] = mp4box.is_fragmented(boxes)
    for t in f["tracks"]:
        t["cut"] = t["past_end"] or (f["fragmented"] and bool(cut) and cut[0].kind != b"mfra")
    f["truncated"] = any(t["cut"] for t in f["tracks"])
    f["nothing_listable"] = all(not [1 for o, s in (t["samples"] or []) if o + s <= len(data)]
                                for t in f["tracks"])
    f["audio"] = [t for t in f["tracks"] if t["handler"] == b"soun"]
    return f


def reference_copy(path, out):
    """FFmpeg's copy of a:0 into an M4A (ipod), else an MP4; (ok, format, message)."""
    said = ""
    for fmt in ("ipod", "mp4"):
        r = run("ffmpeg", "-nostdin", "-v", "error", "-y", "-i", path, "-map", "0:a:0", "-c:a", "copy", "-strict", "experimental",
                "-f", fmt, out)
        if r.returncode == 0:
            return True, fmt, ""
        said = r.stderr.decode(errors="replace").strip().splitlines()[-1:] or [f"exit {r.returncode}"]
        said = said[0]
    return False, None, said


def extraction_class(f, streams, path, tmp):
    """(expected status, reason)."""
    if not f["moov"]:
        return 65, f["why"]
    if not f["audio"]:
        return 79, "no track with handler soun"
    audio = f["audio"][0]
    if audio["cut"]:
        return 65, "truncated: " + ("its samples run past the end of the file" if audio["past_end"]
                                    else f["cut_box"])
    if audio["samples"] is not None and not audio["samples"]:
        return 65, "empty: the audio track has no sample (an init segment alone)"
    if audio["encrypted"]:
        return 69, "encrypted (" + ", ".join(e.decode("latin-1") for e in audio["entries"]) + ")"
    first = next((s for s in streams or [] if s.get("codec_type") == "audio"), None)
    if first is None or first.get("codec_name") in (None, "unknown"):
        return 69, "ffprobe names no codec for it (" + (first or {}).get("codec_tag_string", "?") + ")"
    ok, _, said = reference_copy(path, os.path.join(tmp, "probe-copy.m4a"))
    if not ok:
        return 69, f"FFmpeg cannot stream-copy {first.get('codec_name')} into an MP4: {said[:100]}"
    return 0, ""


# --- ffprobe packets ------------------------------------------------------------------

def packets(path, select=None, ignore_editlist=False):
    """{stream index: [(pts, dts, duration, size, crc, flags)]} and the streams."""
    out = ffprobe_packets(path, select=select, ignore_editlist=ignore_editlist, streams=True, timeout=300)
    data = json.loads(out.stdout or b"{}")
    found = {}
    bases = {s["index"]: Fraction(s["time_base"]) for s in data.get("streams", []) if s.get("time_base")}

    def t(value, index):
        return None if value in (None, "N/A") else int(value) * bases.get(index, 1)
    for p in data.get("packets", []):
        i = p["stream_index"]
        found.setdefault(i, []).append((t(p.get("pts"), i), t(p.get("dts"), i), t(p.get("duration"), i),
                                        p.get("size"), p.get("data_hash"), p.get("flags")))
    return found, data.get("streams", [])


def refuses(report, command, out, want, why, began):
    said = (out.stderr.decode(errors="replace").strip() or out.stdout.decode(errors="replace").strip()).splitlines()
    lines = [l for l in said if "warning" not in l]
    ok = out.returncode == want and len(lines) == 1
    report.check(ok, f"{command} refused, exit {want} ({why})",
                 "" if ok else f"exit {out.returncode}, {len(lines)} error line(s): {(lines or said or [''])[0][:200]}",
                 time.monotonic() - began)


# --- The commands ---------------------------------------------------------------------

def check_extraction(report, tool, path, f, streams, tmp):
    began = time.monotonic()
    want, why = extraction_class(f, streams, path, tmp)
    ours = os.path.join(tmp, "ours.m4a")
    out = run(tool, path, ours, "--overwrite", "--quiet")
    if want != 0:
        refuses(report, "extract", out, want, why, began)
        return
    if out.returncode != 0:
        report.check(False, "extract", f"exit {out.returncode}: {out.stderr.decode(errors='replace').strip()[:200]}",
                     time.monotonic() - began)
        return
    ref = os.path.join(tmp, "ref.m4a")
    ok, fmt, said = reference_copy(path, ref)
    theirs, _ = packets(ref, "a:0")
    mine, _ = packets(ours, "a:0")
    theirs, mine = theirs.get(0, []), mine.get(0, [])
    problems, notes = [], []
    if len(theirs) != len(mine):
        problems.append(f"{len(mine)} packets, FFmpeg's copy {len(theirs)}")
    for i, (a, b) in enumerate(zip(theirs, mine)):
        if a == b:
            continue
        fields = [n for n, x, y in zip(("pts", "dts", "duration", "size", "crc", "flags"), a, b) if x != y]
        if fields == ["duration"] and i == len(theirs) - 1 and f["audio"] and fragmented(path):
            # FFmpeg 5.1: the last sample of a fragmented track gets its fragment's default
            # duration; ours must be the trun's, read by mp4box.py.
            trun = last_trun_duration(path, f["audio"][0]["trak"])
            if trun is not None and last_trun_seconds(path, f["audio"][0]["trak"]) == b[2]:
                notes.append(f"known difference: FFmpeg 5.1 gives the last packet of a fragmented track "
                             f"duration {a[2]} (the fragment default); ours {b[2]} is the trun's")
                continue
        problems.append(f"packet {i} {','.join(fields)}: FFmpeg {a}, ours {b}")
        break
    if problems:
        # The listed differences of FFmpeg's copy (see extraction_allowance): each applies
        # by class, and then checks the whole of both packet lists itself.
        allowed = extraction_allowance(path, f, streams, ref, ours, theirs, mine)
        if allowed is not None:
            problems, notes = allowed
    report.check(not problems, f"extract: {len(mine)} packets as `ffmpeg -c:a copy -f {fmt}`",
                 "; ".join(problems), time.monotonic() - began)
    for n in notes:
        report.note(n)


def extraction_allowance(path, f, streams, ref, ours, theirs, mine):
    """The listed differences between FFmpeg's copy and ours, by class; (problems, notes) of
    the class that applies, or None when none does. Each checks every packet of both lists.

    1. FFmpeg's edit lists count milliseconds: movenc writes every edit in MOV_TIMESCALE
       (1000), the empty edit rounded down (av_rescale_rnd(..., AV_ROUND_DOWN)), the rest
       from its own packet span rounded up; FFmpeg reads only the iTunSMPB priming, never
       its valid count (mov_read_custom). Ours keeps the input's presentation exactly: its
       elst in seconds, or where it has none, the iTunSMPB priming and valid count (README).
       Checked: ours' edit list equals that presentation (mp4box.py on both files); the
       packets are the same bytes and durations, ours' times FFmpeg's + one constant (the
       starts' difference), each last packet ending where its own file's edit ends, the
       discard flag exactly on the packets ending by the start.
    2. FFmpeg gives the iTunSMPB priming to the last stream read before the ilst
       (mov_read_custom: c->fc->streams[c->fc->nb_streams-1]), so where the audio trak is
       not that one, its copy starts at the priming (media_time 0); ours skips it as the
       item says. Checked as 1, with FFmpeg's media_time 0.
    3. FFmpeg's copy has the sample rate as its audio timescale (movenc: track->timescale =
       sample_rate) and re-derives copied audio timestamps on the sample clock
       (av_rescale_delta); ours keeps the media timescale (README). Checked where the
       input's media timescale is not the sample rate: ours' times and durations are the
       input's samples exactly (mp4box.py), FFmpeg's within 2 sample periods of them, the
       same bytes and flags (FFmpeg's last duration, a fragment's default, is not compared).
    4. An Opus fragmented track whose last duration FFmpeg 5.1 does not know: its copy
       holds the sample with an stts duration of 0, outside its own edit, so ffprobe lists
       one packet less. Checked: FFmpeg's copy holds that sample (mp4box.py: same count,
       last duration 0, same bytes as ours' last packet), the other packets equal, ours'
       last duration the trun's."""
    if not f["audio"]:
        return None
    trak = f["audio"][0]["trak"]
    for allowance in (unknown_last_allowance, edit_allowance, timescale_allowance):
        found = allowance(path, f, streams, trak, ref, ours, theirs, mine)
        if found is not None:
            return found
    return None


def audio_file(path):
    data, boxes, _ = walk_file(path)
    moov = mp4box.top(boxes, b"moov")
    trak = next(t for t in moov.children if t.kind == b"trak" and mp4box.handler_type(data, t) == b"soun")
    movie, _ = mp4box.timescale_and_duration(data, moov.child(b"mvhd"))
    media, _ = mp4box.timescale_and_duration(data, trak.child(b"mdia").child(b"mdhd"))
    return data, boxes, moov, trak, movie, media


def smpb_of(data, boxes):
    """(priming, valid count) of the file's iTunSMPB item, or None."""
    items = mp4box.freeform_items(data, boxes, "iTunSMPB")
    if len(items) != 1 or not items[0]["data"]:
        return None
    words = items[0]["data"][0][2].decode("latin-1").split()
    try:
        return int(words[1], 16), int(words[3], 16)
    except (IndexError, ValueError):
        return None


def seconds_edits(data, trak, movie, media):
    """An edit list as [(duration in seconds, media_time in seconds or None)]."""
    return [(Fraction(d, movie), None if t == -1 else Fraction(t, media))
            for d, t, _, _ in mp4box.edit_list(data, trak) or []]


def edit_allowance(path, f, streams, trak, ref, ours, theirs, mine):
    data, boxes, moov, itrak, movie, media = audio_file(path)
    smpb = smpb_of(data, boxes)
    last_before_ilst = None
    if mp4box.edit_list(data, itrak):
        want = seconds_edits(data, itrak, movie, media)
        how = "the input's edit list"
    elif smpb and smpb[0] > 0:
        want = [(Fraction(smpb[1], media), Fraction(smpb[0], media))]
        how = f"the iTunSMPB (priming {smpb[0]}, valid {smpb[1]})"
        # The trak FFmpeg gives the item to: the last one before the udta that holds it.
        udta = next((i for i, c in enumerate(moov.children) if c.kind == b"udta"), len(moov.children))
        before = [c for c in moov.children[:udta] if c.kind == b"trak"]
        last_before_ilst = before[-1] if before else None
    else:
        return None
    odata, oboxes, _, otrak, omovie, omedia = audio_file(ours)
    rdata, rboxes, _, rtrak, rmovie, rmedia = audio_file(ref)
    mine_edits = seconds_edits(odata, otrak, omovie, omedia)
    theirs_edits = seconds_edits(rdata, rtrak, rmovie, rmedia)
    problems = []
    if omedia != media or mine_edits != want:
        problems.append(f"our edit list {mp4box.edit_list(odata, otrak)} (timescales {omovie}/{omedia}) "
                        f"is not {how}")
    if rmovie != 1000 or not theirs_edits:
        return None  # not FFmpeg's millisecond edit list: this class does not apply
    priming_elsewhere = last_before_ilst is not None and last_before_ilst is not itrak
    if priming_elsewhere and theirs_edits[-1][1] != 0:
        problems.append(f"FFmpeg's media_time {theirs_edits[-1][1]} although its priming went to another stream")
    if not priming_elsewhere and theirs_edits[-1][1] != want[-1][1]:
        problems.append(f"FFmpeg's media_time {theirs_edits[-1][1]}, ours {want[-1][1]}")
    # FFmpeg's empty edit: the input's rounded down to a millisecond (movenc's delay).
    want_empty = sum((d for d, t in want if t is None), Fraction(0))
    their_empty = sum((d for d, t in theirs_edits if t is None), Fraction(0))
    if their_empty != Fraction(int(want_empty * 1000), 1000):
        problems.append(f"FFmpeg's empty edit {their_empty} s is not ours {want_empty} s rounded down to a ms")
    if len(theirs) != len(mine) or not mine:
        problems.append(f"{len(mine)} packets, FFmpeg's copy {len(theirs)}")
        return problems[:1] + problems[1:], []
    shift = mine[0][0] - theirs[0][0]
    want_shift = (want_empty - want[-1][1]) - (their_empty - theirs_edits[-1][1])
    if abs(shift - want_shift) >= Fraction(1, media):
        problems.append(f"ours start {shift} s after FFmpeg's, the edits say {want_shift}")
    my_end = want_empty + sum((d for d, t in want if t is not None), Fraction(0))
    their_end = their_empty + sum((d for d, t in theirs_edits if t is not None), Fraction(0))
    last = len(mine) - 1
    for i, (a, b) in enumerate(zip(theirs, mine)):
        if a[3:5] != b[3:5] or b[0] != a[0] + shift or b[1] != a[1] + shift \
                or (i < last and a[2] != b[2]):
            problems.append(f"packet {i}: FFmpeg {a}, ours {b} (ours should be FFmpeg's + {shift})")
            break
        for (p, fl, start, who) in ((b, b[5], want_empty, "ours"), (a, a[5], their_empty, "FFmpeg's")):
            if (fl[1:2] == "D") != (p[0] + p[2] <= start):
                problems.append(f"packet {i}: {who} discard flag {fl} where it ends at {p[0] + p[2]}, the start {start}")
        if a[5][:1] != b[5][:1]:
            problems.append(f"packet {i} flags: FFmpeg {a[5]}, ours {b[5]}")
        if problems:
            break
    a, b = theirs[-1], mine[-1]
    # ffprobe trims the last packet at the edit's end, or (an edit ending inside the last
    # sample after an empty edit) gives it whole: then it must be the whole sample.
    whole = Fraction(mp4box.table_samples(odata, otrak)[-1][2], omedia)
    if b[0] + b[2] != my_end and not (b[2] == whole and b[0] < my_end < b[0] + b[2]):
        problems.append(f"our last packet ends at {b[0] + b[2]}, {how} at {my_end}")
    if abs(a[0] + a[2] - their_end) >= Fraction(1, media) and not a[0] + a[2] < their_end:
        problems.append(f"FFmpeg's last packet ends at {a[0] + a[2]}, its edit list at {their_end}")
    why = ("FFmpeg gave the iTunSMPB priming to the file's last stream, not the audio (mov_read_custom)"
           if priming_elsewhere else "FFmpeg's edit list counts milliseconds"
           + (" and ignores the iTunSMPB valid count" if how.startswith("the iTunSMPB") else ""))
    return problems, [f"known difference: {why}; ours is {how} exactly "
                      f"(start {want_empty - want[-1][1]} s, end {my_end} s; FFmpeg's "
                      f"{their_empty - theirs_edits[-1][1]} s, {their_end} s)"]


def timescale_allowance(path, f, streams, trak, ref, ours, theirs, mine):
    data, boxes, moov, itrak, movie, media = audio_file(path)
    first = next((s for s in streams or [] if s.get("codec_type") == "audio"), {})
    rate = int(first.get("sample_rate") or 0)
    if not rate or media == rate or mp4box.edit_list(data, itrak):
        return None
    odata, _, _, otrak, _, omedia = audio_file(ours)
    rdata, _, _, rtrak, _, rmedia = audio_file(ref)
    if rmedia != rate:
        return None
    samples = [d for _, _, d in mp4box.table_samples(data, itrak)]
    if mp4box.is_fragmented(boxes):
        samples += [s["duration"] for s in mp4box.fragment_samples(data, boxes, mp4box.track_id(data, itrak))]
    problems = []
    if omedia != media:
        problems.append(f"our media timescale {omedia}, the input's {media}")
    if not (len(theirs) == len(mine) == len(samples)):
        return [f"{len(mine)} packets, FFmpeg's copy {len(theirs)}, the input {len(samples)} samples"], []
    # ffprobe's durations: the sample's, or (its parser's, e.g. AC-3's frame) the one it
    # gives the input's same packet.
    inputs = next(iter(packets(path, "a:0")[0].values()), [])
    if len(inputs) != len(samples):
        return [f"ffprobe lists {len(inputs)} packets of the input, mp4box.py {len(samples)} samples"], []
    start = mine[0][1]
    if theirs[0][1] != start:
        problems.append(f"ours start at {start}, FFmpeg's at {theirs[0][1]}")
    for i, (a, b, d, c) in enumerate(zip(theirs, mine, samples, inputs)):
        # The input's times as ffprobe reads them (a tfdt may differ from the runs' sum).
        dts, pts = start + c[1] - inputs[0][1], start + c[0] - inputs[0][0]
        if b[1] != dts or b[0] != pts or b[2] not in (Fraction(d, media), c[2]):
            problems.append(f"our packet {i} {b} is not the input's {c} (mp4box.py: duration {d}/{media})")
        elif a[3:] != b[3:]:
            problems.append(f"packet {i} size, CRC or flags: FFmpeg {a}, ours {b}")
        elif abs(a[0] - b[0]) > Fraction(2, rate) or abs(a[1] - b[1]) > Fraction(2, rate):
            problems.append(f"packet {i}: FFmpeg {a} more than 2 samples of {rate} Hz from ours {b}")
        if problems:
            break
    return problems, [f"known difference: FFmpeg's copy counts in the sample rate ({rate}) and puts the packets "
                      f"on the sample clock; ours keeps the media timescale {media}, each packet the input's "
                      f"(ffprobe, mp4box.py), FFmpeg's within 2 samples of it"]


def unknown_last_allowance(path, f, streams, trak, ref, ours, theirs, mine):
    if len(mine) != len(theirs) + 1 or not fragmented(path):
        return None
    rdata, rboxes, _, rtrak, _, rmedia = audio_file(ref)
    table = mp4box.table_samples(rdata, rtrak)
    if len(table) != len(mine) or table[-1][2] != 0:
        return None
    offset, size, _ = table[-1]
    crc = f"CRC32:{zlib.crc32(rdata[offset:offset + size]):08x}"
    problems = []
    if mine[:-1] != theirs:
        i = next(i for i, (a, b) in enumerate(zip(theirs, mine)) if a != b)
        problems.append(f"packet {i}: FFmpeg {theirs[i]}, ours {mine[i]}")
    b = mine[-1]
    if b[3] != str(size) and b[3] != size or b[4] != crc:
        problems.append(f"our last packet {b} is not the sample FFmpeg's copy holds ({size} bytes, {crc})")
    if last_trun_seconds(path, trak) != b[2]:
        problems.append(f"our last duration {b[2]}, the trun's {last_trun_seconds(path, trak)}")
    return problems, ["known difference: FFmpeg 5.1 does not know the last sample's duration; its copy holds "
                      "it with duration 0, past its own edit list, so ffprobe lists one packet less; ours "
                      f"lists it with the trun's duration {b[2]}"]


def fragmented(path):
    data, boxes, _ = walk_file(path)
    try:
        return boxes is not None and mp4box.is_fragmented(boxes)
    except ValueError:
        return False


def last_trun_duration(path, trak):
    data, boxes, _ = walk_file(path)
    try:
        samples = mp4box.fragment_samples(data, boxes, mp4box.track_id(data, trak))
        return samples[-1]["duration"] if samples else None
    except (ValueError, KeyError):
        return None


def last_trun_seconds(path, trak):
    """The trun's duration of a fragmented track's last sample, in seconds (mp4box.py)."""
    data, boxes, _ = walk_file(path)
    try:
        samples = mp4box.fragment_samples(data, boxes, mp4box.track_id(data, trak))
        scale, _ = mp4box.timescale_and_duration(data, trak.child(b"mdia").child(b"mdhd"))
        return Fraction(samples[-1]["duration"], scale) if samples else None
    except (ValueError, KeyError):
        return None


def check_packets(report, tool, path, f):
    began = time.monotonic()
    kind = "exit" if not f["moov"] or f.get("nothing_listable") else "packets"
    try:
        ok, message, notes = packets_conformance.compare(os.path.basename(path), kind, path, tool)
    except Exception as error:  # a crash of the comparison is a failure
        ok, message, notes = False, f"script error: {error!r}", []
    report.check(ok, "probe --packets --json vs ffprobe -ignore_editlist 1" +
                 (" (nothing listable: exit 65)" if kind == "exit" else ""),
                 "" if ok else message, time.monotonic() - began)
    for n in notes:
        report.note("known difference: " + n)


def check_probe(report, tool, path, f):
    began = time.monotonic()
    if not f["moov"]:
        out = run(tool, "probe", "--json", path)
        refuses(report, "probe --json", out, 65, f["why"], began)
        return
    try:
        notes = probe_check.check(tool, path)
        report.check(True, "probe --json vs ffprobe streams", "", time.monotonic() - began)
        for n in notes:
            report.note(n)
    except probe_check.CheckFailed as error:
        if str(error).startswith("ffprobe exited") and f.get("truncated"):
            # FFmpeg cannot read the header of some files cut short (a fragmented file cut
            # before its first whole fragment): then probe must still describe every track
            # mp4box.py finds, by ID, and exit 0.
            out = run(tool, "probe", "--json", path)
            try:
                ids = sorted(t.get("id") for t in json.loads(out.stdout or b"{}").get("tracks", []))
            except ValueError:
                ids = None
            want = sorted(mp4box.track_id(open(path, "rb").read(), t["trak"]) for t in f["tracks"])
            report.check(out.returncode == 0 and ids == want,
                         "probe --json of a file FFmpeg cannot open: the tracks mp4box.py finds",
                         f"{str(error)[:120]}; ours: exit {out.returncode}, tracks {ids}, mp4box.py {want}",
                         time.monotonic() - began)
            return
        report.check(False, "probe --json vs ffprobe streams", str(error)[:300], time.monotonic() - began)
    except Exception as error:
        report.check(False, "probe --json vs ffprobe streams", f"script error: {error!r}", time.monotonic() - began)


def first_media_time(path, index_in_kind, handler):
    """The first non-empty edit's media_time (media ticks) and the media timescale of the
    n-th track with this handler, from mp4box.py."""
    data, boxes, _ = walk_file(path)
    traks = [t for t in mp4box.top(boxes, b"moov").children if t.kind == b"trak"
             and mp4box.handler_type(data, t) == handler]
    trak = traks[index_in_kind]
    scale, _ = mp4box.timescale_and_duration(data, trak.child(b"mdia").child(b"mdhd"))
    for entry in mp4box.edit_list(data, trak) or []:
        if entry[1] >= 0:
            return entry[1], scale
    return 0, scale


def ffmpeg_counts(path, streams):
    """{(kind, n): frames or samples} FFmpeg decodes, per audio/video stream it has a
    decoder for (attached pictures aside), and FFmpeg's messages."""
    counts, messages = {}, []
    n = {"audio": 0, "video": 0}
    for s in streams:
        kind = s.get("codec_type")
        if kind not in n or (s.get("disposition") or {}).get("attached_pic"):
            continue
        key = (kind, n[kind])
        n[kind] += 1
        if s.get("codec_name") in (None, "unknown"):
            continue
        # Video frames are only counted: wrapped_avframe passes each decoded frame on as it
        # is, where rawvideo with -pix_fmt yuv420p converted every one first (a GoPro's
        # 4332 yuvj420p frames: 5.2 s of CPU, 2.6 s without the conversion).
        opts = ["-c:a", "pcm_s16le"] if kind == "audio" else ["-c:v", "wrapped_avframe"]
        out = run("ffmpeg", "-nostdin", "-v", "error", "-i", path, "-map", f"0:{s['index']}", *opts,
                  "-f", "framecrc", "-")
        total = 0
        for line in out.stdout.decode(errors="replace").splitlines():
            if line and not line.startswith("#"):
                fields = [x.strip() for x in line.split(",")]
                total += int(fields[3]) if kind == "audio" else 1
        counts[key] = total
        if out.returncode != 0:
            messages.append(f"{kind} {key[1]}: exit {out.returncode}")
    return counts, messages


def gst_counts(path, kinds):
    """{(kind, 0): frames or samples} GStreamer 1.22 decodes of the first video and first
    audio stream (qtdemux's video_0 / audio_0), or raises RuntimeError with its message.
    Each stream decodes into a file, counted once it is written: audio as S16 mono (bytes /
    2), video scaled to 8x8 GRAY8 (bytes / 64 per frame). Not fakesink's `last-message`
    under `gst-launch-1.0 -v`: gst-launch reads that property when it handles the notify
    on its bus, after later buffers may have replaced it, so the count of "chain" lines
    varied from run to run on the same file (sio_quicktime_hint_tracks.mp4: 451741 then
    460957 audio samples; ft_mjpeg_pcm_no_ftyp.mov's remux: 0, where a filesink gets all
    12000)."""
    with tempfile.TemporaryDirectory() as tmp:
        sinks = {kind: os.path.join(tmp, kind + ".raw") for kind in kinds}
        pipeline = ["gst-launch-1.0", "filesrc", "location=" + path, "!", "qtdemux", "name=d"]
        queue = ["queue", "max-size-buffers=0", "max-size-bytes=0", "max-size-time=0"]
        if "video" in kinds:
            # Scaled first, then converted: videoconvert to GRAY8 at full size cost more
            # than the decode (imu_gopro_hero8_gpmd_reencoded.mp4: 7.8 s of CPU, 3.4 s for
            # the decode alone); the same 64 bytes a frame either way.
            pipeline += ["d.video_0", "!", *queue, "!", "decodebin", "!", "videoscale", "!",
                         "video/x-raw,width=8,height=8,pixel-aspect-ratio=1/1", "!", "videoconvert", "!",
                         "video/x-raw,format=GRAY8,width=8,height=8", "!",
                         "filesink", "location=" + sinks["video"], "sync=false"]
        if "audio" in kinds:
            pipeline += ["d.audio_0", "!", *queue, "!", "decodebin", "!", "audioconvert", "!",
                         "audio/x-raw,format=S16LE,channels=1", "!", "filesink", "location=" + sinks["audio"],
                         "sync=false"]
        returncode, text, err = gst.launch_watched(pipeline, tmp)
        err += text
        if returncode != 0 or "ERROR" in err:
            line = next((l for l in err.splitlines() if "ERROR" in l or "missing" in l.lower()), err.strip()[-200:])
            raise RuntimeError(line.strip()[:240])
        counts = {}
        if "video" in kinds:
            counts[("video", 0)] = os.path.getsize(sinks["video"]) // 64
        if "audio" in kinds:
            counts[("audio", 0)] = os.path.getsize(sinks["audio"]) // 2
        return counts


def composition_offsets(path, track_id):
    """The composition offsets of the track with this tkhd ID: its `ctts` entries
    [(count, offset)] and every trun sample's offset in file order (flag 0x800; 0 without),
    read as signed whatever the box version, as FFmpeg reads them and as QuickTime writes
    them (negative offsets in a version 0 ctts); mp4box.py's box tree."""
    data, boxes, _ = walk_file(path)
    trak = next(t for t in mp4box.top(boxes, b"moov").children
                if t.kind == b"trak" and mp4box.track_id(data, t) == track_id)
    entries, runs = [], []
    ctts = next((c for c in mp4box.stbl_of(trak).children if c.kind == b"ctts"), None)
    if ctts is not None:
        entries = [struct.unpack_from(">Ii", data, ctts.payload + 8 + 8 * i)
                   for i in range(mp4box.u32(data, ctts.payload + 4))]
    for moof in (b for b in boxes if b.kind == b"moof"):
        for traf in (c for c in moof.children if c.kind == b"traf"):
            if mp4box.u32(data, traf.child(b"tfhd").payload + 4) != track_id:
                continue
            for trun in (c for c in traf.children if c.kind == b"trun"):
                flags = mp4box.full_box_flags(data, trun)
                pos = trun.payload + 8 + 4 * bool(flags & 0x1) + 4 * bool(flags & 0x4)
                for _ in range(mp4box.u32(data, trun.payload + 4)):
                    pos += 4 * (bool(flags & 0x100) + bool(flags & 0x200) + bool(flags & 0x400))
                    value = 0
                    if flags & 0x800:
                        value = struct.unpack_from(">i", data, pos)[0]
                        pos += 4
                    runs.append(value)
    return entries, runs


def in_file_frame(ff_packets, path, stream):
    """FFmpeg 5.1's packets of a stream with the times of the file itself (dts from
    stts or tfdt+trun, pts = dts + the sample's composition offset), or None when the
    offsets cannot be read. mov.c keeps one dts_shift per track, the largest negated
    negative offset: of the ctts entries but the last two (mov_read_ctts: `if (i+2<entries)
    mov_update_dts_shift`) and of every trun sample (mov_read_trun). It lowers the dts of
    the table's samples by the ctts part (mov_build_index: `current_dts -= sc->dts_shift`),
    not those of trun samples, and gives every packet pts = dts + dts_shift + offset
    (mov_read_packet). So FFmpeg reports a table track with negative offsets with pts and
    dts lowered from the file's (dts by the shift), and a fragmented one with pts raised."""
    try:
        entries, runs = composition_offsets(path, int(stream["id"], 0))
    except (ValueError, KeyError, TypeError, StopIteration, struct.error):
        return None
    tick = Fraction(stream["time_base"])
    table = len(ff_packets) - len(runs)
    ctts_shift = max([0] + [-v for i, (_, v) in enumerate(entries) if v < 0 and i + 2 < len(entries)])
    shift = max([ctts_shift] + [-v for v in runs if v < 0])
    out = []
    for i, (pts, dts, *rest) in enumerate(ff_packets):
        lowered = ctts_shift if i < table else 0
        out.append((None if pts is None else pts + (lowered - shift) * tick,
                    None if dts is None else dts + lowered * tick, *rest))
    return out



def fragment_starts(path):
    """{track ID: the first tfdt of its fragments, in seconds} of a fragmented file whose
    tracks have no sample in their tables and no edit list (mp4box.py's tree); {} else."""
    data, boxes, _ = walk_file(path)
    starts, scales = {}, {}
    try:
        for trak in (t for t in mp4box.top(boxes, b"moov").children if t.kind == b"trak"):
            if mp4box.edit_list(data, trak) is not None or mp4box.table_samples(data, trak):
                return {}
            scales[mp4box.track_id(data, trak)] = mp4box.timescale_and_duration(
                data, trak.child(b"mdia").child(b"mdhd"))[0]
        for moof in (b for b in boxes if b.kind == b"moof"):
            for traf in (c for c in moof.children if c.kind == b"traf"):
                tid = mp4box.u32(data, traf.child(b"tfhd").payload + 4)
                tfdt = next((c for c in traf.children if c.kind == b"tfdt"), None)
                if tid in starts or tid not in scales:
                    continue
                time = 0
                if tfdt is not None:
                    time = struct.unpack_from(">Q" if data[tfdt.payload] else ">I", data, tfdt.payload + 4)[0]
                starts[tid] = Fraction(time, scales[tid])
    except (ValueError, KeyError, IndexError, struct.error):
        return {}
    return starts


def container_ext(f):
    return ".mov" if f.get("brand") in (None, b"qt  ") else ".mp4"


def check_remux(report, tool, path, f, tmp):
    began = time.monotonic()
    out_path = os.path.join(tmp, "remux" + container_ext(f))
    out = run(tool, "remux", path, out_path, "--overwrite", "--quiet")
    if not f["moov"] or f.get("truncated"):
        why = f["why"] if not f["moov"] else ("truncated: " + (f["cut_box"] or "samples past the end of the file"))
        refuses(report, "remux", out, 65, why, began)
        return
    stderr = out.stderr.decode(errors="replace").strip()
    if out.returncode != 0:
        report.check(False, "remux", f"exit {out.returncode}: {stderr[:200]}", time.monotonic() - began)
        return
    theirs, in_streams = packets(path, ignore_editlist=True)
    mine, out_streams = packets(out_path, ignore_editlist=True)
    tracks_in = [s for s in in_streams if not (s.get("disposition") or {}).get("attached_pic")]
    tracks_out = [s for s in out_streams if not (s.get("disposition") or {}).get("attached_pic")]
    dropped = [l for l in stderr.splitlines() if "dropped" in l]
    problems, notes = [], []
    # Map kept tracks in order: the input's streams, less those a warning names as dropped.
    kept = list(tracks_in)
    if len(tracks_out) != len(tracks_in):
        named = len(dropped)
        if named != len(tracks_in) - len(tracks_out):
            problems.append(f"{len(tracks_out)} tracks out of {len(tracks_in)}, {named} named as dropped")
        else:
            notes.append("dropped with a warning: " + "; ".join(l.split(": ", 2)[-1] for l in dropped))
            drop_tags = [re.search(r"\(([^)]*)\)", l).group(1) for l in dropped if re.search(r"\(([^)]*)\)", l)]
            kept = []
            for s in tracks_in:
                tag = s.get("codec_tag_string", "").strip()
                if tag in [t.strip() for t in drop_tags]:
                    drop_tags.remove(next(t for t in drop_tags if t.strip() == tag))
                    continue
                kept.append(s)
    compared = 0
    in_fragmented = fragmented(path)
    frag_durations = 0
    debug_probes = {}  # unprobed_last_duration's ffprobe -v debug runs, one per file
    for a, b in zip(kept, tracks_out):
        pa, pb = theirs.get(a["index"], []), mine.get(b["index"], [])
        label = f"track {a.get('id')} ({a.get('codec_tag_string')})"
        if a.get("codec_tag_string") != b.get("codec_tag_string") and not (
                a.get("codec_type") == "audio" and b.get("codec_name") == a.get("codec_name")):
            problems.append(f"{label} became {b.get('codec_tag_string')}")
            continue
        if (a.get("codec_name") or "").startswith("pcm_") and b.get("codec_name") == a.get("codec_name"):
            # PCM: FFmpeg makes its packets of the chunks (mov.c, a chunk cut into packets of
            # at most 1024 samples), so the writer's chunking gives other packets of the same
            # samples (an iPhone Live Photo's lpcm in 89 packets, 91 remuxed). Compared as a
            # whole: the first pts, the total duration and the CRC-32 of every byte in order.
            whole = [(p[0][0] if p else None, sum((x[2] or 0) for x in p), stream_crc(f_, s["index"]))
                     for p, f_, s in ((pa, path, a), (pb, out_path, b))]
            if whole[0] != whole[1] or whole[0][2] is None:
                problems.append(f"{label}: PCM as a whole (first pts, duration, CRC-32): input {whole[0]}, "
                                f"ours {whole[1]}")
            else:
                notes.append(f"{label}: PCM compared as a whole ({len(pa)} packets, ours {len(pb)}: FFmpeg makes "
                             f"them of the chunks): first pts {whole[0][0]}, {whole[0][1]} s, {whole[0][2]}")
                compared += 1
            continue
        if len(pa) != len(pb):
            problems.append(f"{label}: {len(pb)} packets, the input {len(pa)}")
            continue
        # Compared in the file's frame: FFmpeg reads the same times differently by where
        # the negative composition offsets are (in_file_frame), and ours has none where
        # the input had them (the writer's shift, below).
        fa, fb = in_file_frame(pa, path, a), in_file_frame(pb, out_path, b)
        if fa is None or fb is None:
            problems.append(f"{label}: its composition offsets cannot be read")
            continue
        if (fa, fb) != (pa, pb):
            notes.append(f"{label}: compared in the file's own times (FFmpeg 5.1 moves pts and dts by its "
                         "dts_shift where composition offsets are negative)")
        pa, pb = fa, fb
        # A fragmented input starting later than 0 (its first tfdt; no edit list): the copy
        # starts at 0, every time earlier by that start, as FFmpeg's own `-c copy` does
        # (sp_pkg_ac3_frag.mp4: tfdt 3394/90000; FFmpeg's copy starts at 0 too, elst
        # media_time 0). Allowed only where every track starts there, so that the tracks
        # keep their places relative to one another; else the packets differ.
        starts = fragment_starts(path) if in_fragmented else {}
        start = starts.get(int(a["id"], 0)) if starts else None
        if start and len(set(starts.values())) == 1 and pa and pb and pa[0][1] is not None \
                and pa[0][1] - pb[0][1] == start:
            pa = [(None if x[0] is None else x[0] - start, None if x[1] is None else x[1] - start, *x[2:])
                  for x in pa]
            notes.append(f"known difference: {label}: the input's fragments start at {start} s (tfdt), every track "
                         "alike; the copy starts at 0, every pts and dts earlier by that")
        shift = None
        for i, (x, y) in enumerate(zip(pa, pb)):
            if x == y:
                continue
            same_but_pts = x[1:] == y[1:] and x[0] is not None and y[0] is not None
            if same_but_pts and (shift is None or y[0] - x[0] == shift):
                shift = y[0] - x[0]
                continue
            fields = [n for n, p, q in zip(("pts", "dts", "duration", "size", "crc", "flags"), x, y) if p != q]
            if fields == ["duration"] and in_fragmented:
                # FFmpeg 5.1's packet durations in fragments are not always the trun's
                # (packets-conformance.py): the input's is then its next dts minus this one.
                derived = pa[i + 1][1] - x[1] if i + 1 < len(pa) else None
                if derived is None or y[2] == derived:
                    frag_durations += 1
                    continue
            if fields == ["duration"] and i == len(pa) - 1:
                unprobed = unprobed_last_duration(path, out_path, a, b, theirs[a["index"]][-1],
                                                  mine[b["index"]][-1], debug_probes)
                if unprobed:
                    notes.append(f"known difference: {label}: {unprobed}")
                    continue
            problems.append(f"{label} packet {i} {','.join(fields)}: input {x}, ours {y}")
            break
        else:
            if shift:
                # Negative composition offsets written non-negative (README): every pts
                # moved by the same S, and the first edit's media_time with them.
                kind = {"video": b"vide", "audio": b"soun"}.get(a.get("codec_type"))
                try:
                    n_in = [s for s in tracks_in if s.get("codec_type") == a.get("codec_type")].index(a)
                    n_out = [s for s in tracks_out if s.get("codec_type") == b.get("codec_type")].index(b)
                    mt_in = Fraction(*first_media_time(path, n_in, kind))
                    mt_out = Fraction(*first_media_time(out_path, n_out, kind))
                except (ValueError, IndexError, TypeError, ZeroDivisionError):
                    mt_in, mt_out = None, None
                entries, runs = composition_offsets(path, int(a["id"], 0))
                least = min([v for _, v in entries] + runs + [0])
                expected = -least * Fraction(a["time_base"])
                if mt_in is None or mt_out != mt_in + shift:
                    problems.append(f"{label}: every pts moved by {shift} but the edit's media_time went "
                                    f"{mt_in} -> {mt_out}")
                elif shift != expected:
                    problems.append(f"{label}: every pts moved by {shift}, not by its most negative composition "
                                    f"offset negated ({expected})")
                else:
                    notes.append(f"known difference: {label}: composition offsets written non-negative, every pts "
                                 f"+{shift} and the edit's media_time {mt_in} -> {mt_out}")
        compared += 1
    if frag_durations:
        notes.append(f"known difference: {frag_durations} packet duration(s) of the fragmented input that FFmpeg 5.1 "
                     "does not give as the trun's; checked against its next dts")
    report.check(not problems, f"remux{container_ext(f)}: {compared} track(s) with the input's packets "
                 "(ffprobe -ignore_editlist 1, CRC-32)", "; ".join(problems[:3]), time.monotonic() - began)
    for n in notes:
        report.note(n)
    if problems:
        return
    decode_checks(report, path, out_path, f, in_streams, out_streams)


def stream_crc(path, index):
    """The CRC-32 of every packet's bytes of a stream, concatenated in order (FFmpeg's copy
    to raw data, edit lists ignored), or None when FFmpeg cannot copy it."""
    out = run("ffmpeg", "-nostdin", "-v", "error", "-ignore_editlist", "1", "-i", path, "-map", f"0:{index}",
              "-c", "copy", "-f", "data", "-")
    return f"CRC32:{zlib.crc32(out.stdout):08x}" if out.returncode == 0 else None


def probe_end_and_starts(path):
    """What `ffprobe -v debug -ignore_editlist 1` says of a file: the position where FFmpeg's
    stream probe stopped ("After avformat_find_stream_info() pos: N"), the file's duration
    in microseconds, and {stream index: (position of its first packet, time base)}."""
    out = run("ffprobe", "-v", "debug", "-ignore_editlist", "1", "-show_format", "-show_streams",
              "-show_entries", "packet=stream_index,pos", "-of", "json", path)
    said = re.search(r"After avformat_find_stream_info\(\) pos: (\d+)", out.stderr.decode(errors="replace"))
    data = json.loads(out.stdout or b"{}")
    firsts = {}
    for p in data.get("packets", []):
        firsts.setdefault(p["stream_index"], int(p["pos"]))
    bases = {s["index"]: Fraction(s["time_base"]) for s in data.get("streams", [])}
    duration = (data.get("format") or {}).get("duration")
    if said is None or duration in (None, "N/A"):
        return None
    return (int(said.group(1)), Fraction(duration) * 1_000_000,
            {i: (pos, bases.get(i)) for i, pos in firsts.items()})


def unprobed_last_duration(path, out_path, a, b, last_in, last_out, probed):
    """A note when the last packets of a track differ in duration only by FFmpeg's
    artefact of a stream its probe did not meet; else None.

    FFmpeg 5.1 (libavformat/demux.c) probes the streams in avformat_find_stream_info until
    each has enough frames (about 20 video frames here), then estimate_timings ->
    fill_all_stream_timings gives every stream without a start time (one of which no
    packet was read) the file's start and duration, rescaled to its time base; mov.c then
    gives a track's last packet the stream duration minus its dts. So a track whose first
    packet lies past where the probe stopped gets "file duration - dts" as its last
    duration, whatever its mdhd says (cml_gopro_hero4_240fps.mp4: its fdsc samples last 0
    ticks; the input's fdsc chunk is first in the file, the remux's 0-tick track goes
    last, at byte 1056935, past the 126991 the probe read: last duration 8/15 s, the
    file's 0.533333 s, where the input's is its mdhd 123123/240000 s; an iPhone Live
    Photo's mebx behind a 0.5 s video chunk did the same, before the interleaver put
    chunks starting together lowest rate first). Allowed only when the track's mdhd is
    the same in both files, its first packet lies past the probe's end in exactly one of
    them, and there the last duration is exactly the file's duration (microseconds,
    rescaled to the time base as av_rescale_q rounds) minus the packet's dts. `probed` keeps
    each file's `ffprobe -v debug` for the next track of the same pair (a QuickTime file
    with hint tracks has three such tracks)."""
    try:
        mdhds = []
        for p, s in ((path, a), (out_path, b)):
            data, boxes, _ = walk_file(p)
            trak = next(t for t in mp4box.top(boxes, b"moov").children
                        if t.kind == b"trak" and mp4box.track_id(data, t) == int(s["id"], 0))
            mdhds.append(mp4box.timescale_and_duration(data, trak.child(b"mdia").child(b"mdhd")))
        if mdhds[0] != mdhds[1]:
            return None
        for p in (path, out_path):
            if p not in probed:
                probed[p] = probe_end_and_starts(p)
        probes = [probed[path], probed[out_path]]
    except (ValueError, KeyError, TypeError, StopIteration, struct.error):
        return None
    if None in probes:
        return None
    past = [probe[2].get(s["index"], (0, None))[0] > probe[0] for probe, s in zip(probes, (a, b))]
    if past.count(True) != 1:
        return None
    which = past.index(True)
    end, microseconds, starts = probes[which]
    base = starts[(a, b)[which]["index"]][1]
    last = (last_in, last_out)[which]
    if base is None or last[1] is None or last[2] is None:
        return None
    exact = microseconds / 1_000_000 / base  # av_rescale_q: to nearest, halves away from 0
    ticks = math.floor(exact + Fraction(1, 2))
    if last[2] != ticks * base - last[1]:
        return None
    return (f"FFmpeg's probe stopped at byte {end} of the {('input', 'output')[which]}, before the track's first "
            f"packet: it got the file's duration and its last packet {last[2]} s = {ticks * base} s - dts "
            f"{last[1]} s (fill_all_stream_timings); same mdhd {mdhds[0]} in both files")


def gapless_edit(path, out_path):
    """(priming, valid, media samples) when the remux turned the input's iTunSMPB into an
    edit list (README: the first audio track without an edit list, its media timescale
    its sample rate), checked in OUT's first audio elst: media_time = priming and a
    duration of exactly `valid` samples; else None."""
    try:
        data, boxes, _ = walk_file(path)
        trak = mp4box.first_audio_trak(data, boxes)
        if mp4box.edit_list(data, trak) is not None:
            return None
        item = mp4box.freeform_items(data, boxes, "iTunSMPB")
        fields = item[0]["data"][0][2].split() if item else []
        if len(fields) < 4:
            return None
        priming, valid = int(fields[1], 16), int(fields[3], 16)
        total = sum(d for _, _, d in mp4box.table_samples(data, trak))
        odata, oboxes, _ = walk_file(out_path)
        otrak = mp4box.first_audio_trak(odata, oboxes)
        edits = mp4box.edit_list(odata, otrak) or []
        movie_scale, _ = mp4box.timescale_and_duration(odata, mp4box.top(oboxes, b"moov").child(b"mvhd"))
        scale, _ = mp4box.timescale_and_duration(odata, otrak.child(b"mdia").child(b"mdhd"))
    except (ValueError, KeyError, IndexError, TypeError, struct.error):
        return None
    if len(edits) != 1 or edits[0][1] != priming or Fraction(edits[0][0], movie_scale) != Fraction(valid, scale):
        return None
    return priming, valid, total


def fragmented_audio_seconds(path):
    """The seconds the first audio track's samples last by its trun durations (mp4box.py),
    when the input is fragmented and that track has no edit list and no table samples;
    else None."""
    data, boxes, _ = walk_file(path)
    try:
        trak = mp4box.first_audio_trak(data, boxes)
        if not mp4box.is_fragmented(boxes) or mp4box.edit_list(data, trak) is not None \
                or mp4box.table_samples(data, trak):
            return None
        scale, _ = mp4box.timescale_and_duration(data, trak.child(b"mdia").child(b"mdhd"))
        samples = mp4box.fragment_samples(data, boxes, mp4box.track_id(data, trak))
    except (ValueError, KeyError, IndexError, TypeError, struct.error):
        return None
    return Fraction(sum(x["duration"] for x in samples), scale) if samples else None


def edit_to_presentation_end(path, out_path):
    """Whether the input's first video track has no edit list and the output's has the one
    edit the writer gives a track presented past its media's end: from media time 0 to
    where its last frame ends (the largest dts + composition offset + duration of the
    output's samples, mp4box.py, in the movie timescale rounded up), past the media's end."""
    try:
        data, boxes, _ = walk_file(path)
        odata, oboxes, _ = walk_file(out_path)
        traks = [[t for t in mp4box.top(b, b"moov").children if t.kind == b"trak"
                  and mp4box.handler_type(d, t) == b"vide"] for d, b in ((data, boxes), (odata, oboxes))]
        if not traks[0] or not traks[1] or mp4box.edit_list(data, traks[0][0]) is not None:
            return False
        trak = traks[1][0]
        edits = mp4box.edit_list(odata, trak) or []
        movie, _ = mp4box.timescale_and_duration(odata, mp4box.top(oboxes, b"moov").child(b"mvhd"))
        media, _ = mp4box.timescale_and_duration(odata, trak.child(b"mdia").child(b"mdhd"))
        entries, _ = composition_offsets(out_path, mp4box.track_id(odata, trak))
        offsets = [v for n, v in entries for _ in range(n)]
        samples = mp4box.table_samples(odata, trak)
        offsets += [0] * (len(samples) - len(offsets))
        dts, end = 0, 0
        for (_, _, d), o in zip(samples, offsets):
            end = max(end, dts + o + d)
            dts += d
    except (ValueError, KeyError, IndexError, TypeError, StopIteration, struct.error):
        return False
    return end > dts and len(edits) == 1 and edits[0][1] == 0 and edits[0][0] == -(-end * movie // media)


def lpcm_in_chunks(path):
    """The samples of the media of the file's first audio track (mp4box.py: its stts
    durations, in samples of its sound v2 entry's rate) when that track has an `lpcm`
    entry and more than one chunk; else None."""
    try:
        data, boxes, _ = walk_file(path)
        trak = mp4box.first_audio_trak(data, boxes)
        stbl = mp4box.stbl_of(trak)
        entries = stbl.child(b"stsd").children
        offsets = next(c for c in stbl.children if c.kind in (b"stco", b"co64"))
        if [e.kind for e in entries] != [b"lpcm"] or mp4box.u32(data, offsets.payload + 4) < 2:
            return None
        scale, _ = mp4box.timescale_and_duration(data, trak.child(b"mdia").child(b"mdhd"))
        # Sound sample description v2 (QuickTime File Format): after reserved and the data
        # reference index (8 bytes), version and revision, vendor, five fixed fields and
        # sizeOfStructOnly (24 bytes), audioSampleRate as a float64.
        entry = entries[0]
        if struct.unpack_from(">H", data, entry.payload + 8)[0] != 2:
            return None
        rate = Fraction(struct.unpack_from(">d", data, entry.payload + 8 + 24)[0])
        total = Fraction(sum(d for _, _, d in mp4box.table_samples(data, trak)), scale) * rate
    except (ValueError, KeyError, IndexError, TypeError, StopIteration, struct.error):
        return None
    return int(total) if total.denominator == 1 else None


def pcm_touched(path, in_streams, key, out_path, out_streams):
    """For the key's stream (kind, n-th of that kind) when it is PCM in both files: (the
    samples of the input's packets ffprobe lists with the edit list applied, the same of
    the output, the largest packet of either in samples); else None."""
    found = []
    largest = 0
    for p, streams in ((path, in_streams), (out_path, out_streams)):
        same = [s for s in streams if s.get("codec_type") == key[0]
                and not (s.get("disposition") or {}).get("attached_pic")]
        if key[1] >= len(same) or not (same[key[1]].get("codec_name") or "").startswith("pcm_"):
            return None
        s = same[key[1]]
        frame = int(s.get("bits_per_sample") or 0) // 8 * int(s.get("channels") or 0)
        if frame <= 0:
            return None
        listed = packets(p, str(s["index"]))[0].get(s["index"], [])
        sizes = [int(x[3]) // frame for x in listed]
        found.append(sum(sizes))
        largest = max([largest] + sizes)
    return found[0], found[1], largest


def decode_checks(report, path, out_path, f, in_streams, out_streams):
    enc = any(t["encrypted"] for t in f["tracks"] if t["handler"] in (b"vide", b"soun"))
    # FFmpeg.
    began = time.monotonic()
    ff_in, ff_out = {}, {}
    if enc:
        report.skip("remux: FFmpeg decode", "encrypted track: no key, nothing to decode")
    else:
        a, ma = ffmpeg_counts(path, in_streams)
        b, mb = ffmpeg_counts(out_path, out_streams)
        ff_in, ff_out = a, b
        if not a:
            report.skip("remux: FFmpeg decode", "FFmpeg has no decoder for any audio or video stream here")
        else:
            ok = a == b
            gapless = gapless_edit(path, out_path)
            if not ok and gapless and ("audio", 0) in a:
                # The remux wrote the input's iTunSMPB as an edit list (README), which
                # FFmpeg 5.1 applies where it read no iTunSMPB in the input: it skips the
                # priming and keeps the last packet whole, so it decodes the media less
                # the priming exactly.
                priming, valid, total = gapless
                ok = {**a, ("audio", 0): total - priming} == b
                if ok:
                    report.note(f"allowed: FFmpeg: audio {b[('audio', 0)]} of {a[('audio', 0)]}: the iTunSMPB "
                                f"(priming {priming}, {valid} valid) written as an edit list, which it applies "
                                f"here: the {total} media samples less the priming")
            if not ok and a.keys() == b.keys():
                # FFmpeg applies an edit to PCM at packet ends: it decodes every packet the edit
                # touches whole, and its PCM packets are the file's chunks cut at 1024 samples
                # (mov.c), which the writer chunks otherwise. Allowed, for PCM streams only:
                # each file decodes exactly its own touched packets, and the two differ by
                # less than one packet (an iPhone Live Photo's edit ends 118 samples into a
                # 1024-sample packet of the input, 50 into one of the remux: 55296 and 55364).
                pcm = {key: pcm_touched(path, in_streams, key, out_path, out_streams)
                       for key in a if a[key] != b[key]}
                if all(v is not None and v[0] == a[k] and v[1] == b[k] and abs(a[k] - b[k]) < v[2]
                       for k, v in pcm.items()):
                    ok = True
                    for (kind, n), v in pcm.items():
                        report.note(f"allowed: FFmpeg: {kind} {n}: {b[(kind, n)]} of {a[(kind, n)]}: PCM cut by its "
                                    f"edit at packet ends, each file's touched packets whole (packets of at most "
                                    f"{v[2]} samples)")
            text = ", ".join(f"{k} {n}: {v}" for (k, n), v in sorted(a.items()))
            report.check(ok, f"remux: FFmpeg decodes as much as of the input ({text})",
                         "" if ok else f"input {a}, output {b}" + (f"; {ma + mb}" if ma or mb else ""),
                         time.monotonic() - began)
    # GStreamer.
    began = time.monotonic()
    kinds = {s.get("codec_type") for s in in_streams if not (s.get("disposition") or {}).get("attached_pic")}
    kinds &= {"audio", "video"}
    if enc:
        report.skip("remux: GStreamer decode", "encrypted track: no key, nothing to decode")
        return
    if not kinds:
        report.skip("remux: GStreamer decode", "no audio or video stream")
        return
    try:
        a = gst_counts(path, kinds)
    except (RuntimeError, subprocess.TimeoutExpired) as error:
        # A decoder GStreamer lacks here (AV1, DTS:X, IAMF, AC-4...): the input itself does
        # not play in it; retry with the stream it can play, else skip. With one kind the
        # retry would be the same pipeline again: skipped at once.
        a, why = None, str(error)
        for kind in sorted(kinds) if len(kinds) > 1 else []:
            try:
                a = gst_counts(path, {kind})
                kinds = {kind}
                report.skip(f"remux: GStreamer decode of the {({'audio', 'video'} - {kind}).pop()}",
                            f"GStreamer cannot play it in the input either: {why[:160]}")
                break
            except (RuntimeError, subprocess.TimeoutExpired):
                continue
        if a is None:
            report.skip("remux: GStreamer decode", f"GStreamer cannot play the input: {why[:160]}")
            return
    try:
        b = gst_counts(out_path, kinds)
    except (RuntimeError, subprocess.TimeoutExpired) as error:
        report.check(False, "remux: GStreamer decodes the output", str(error), time.monotonic() - began)
        return
    problems, allowed = [], []
    gapless = gapless_edit(path, out_path)
    for key, want in sorted(a.items()):
        got = b.get(key, 0)
        if got == want:
            continue
        kind = key[0]
        if key == ("audio", 0) and gapless:
            # GStreamer 1.22 reads no iTunSMPB: the input decodes whole, the output as the
            # edit list made of it says, `valid` samples (one more where its nanosecond
            # segment rounds up), ended early by up to the edit's media_time (below).
            want = gapless[1]
            if want <= got <= want + 1:
                allowed.append(f"audio: {got} of the input's {a[key]}: the iTunSMPB's {want} valid samples, "
                               "written as an edit list")
                continue
        if key == ("audio", 0) and got > want and lpcm_in_chunks(out_path) == got:
            # GStreamer 1.22's qtdemux times every buffer of an `lpcm` (QuickTime sound v2)
            # track held in more than one chunk at 0, so its segment never ends: it plays
            # the whole media and ignores the edit list. Measured on an iPhone Live Photo
            # (lpcm, one chunk of 91,127 samples, an edit of 740/600 s): it decodes 54,391
            # samples; the same file with that chunk split in two (stsc and stco only, the
            # moov after the mdat, nothing else moved) decodes all 91,127, where FFmpeg
            # decodes 55,296 and 54,779 (the edit applied). Allowed, by class: the output's
            # first audio track has an lpcm entry and more than one chunk, and GStreamer
            # decodes exactly its whole media, more than of the input.
            allowed.append(f"audio: {got} of the input's {want}: the output's whole lpcm media, held in more than "
                           "one chunk, which GStreamer 1.22 plays whole, ignoring the edit")
            continue
        if key == ("audio", 0):
            # A fragmented input's audio: GStreamer 1.22 sets no segment stop there and
            # decodes the last frame whole, though its trun duration is shorter
            # (sp_bbb_piff_smooth.ismv: 160000 of 213333 ticks of 1/10^7 s). OUT is a
            # regular file whose media lasts what the truns say, which GStreamer keeps to:
            # exactly those samples (one more where its nanosecond stop rounds up).
            seconds = fragmented_audio_seconds(path)
            rate = next((int(s["sample_rate"]) for s in out_streams if s.get("codec_type") == "audio"), 0)
            if seconds is not None and rate:
                exact = seconds * rate
                if got < want and math.floor(exact) <= got <= math.ceil(exact) + 1:
                    allowed.append(f"audio: {got} of the input's {want}: the {float(exact):.1f} samples its truns last, where "
                                   "GStreamer decodes a fragmented input's last frame whole")
                    continue
        if kind == "video" and got > want and ff_in.get(key) == ff_out.get(key) == got \
                and edit_to_presentation_end(path, out_path):
            # GStreamer 1.22 ends a track without edit list at its media's duration and drops
            # the B-frames presented after it (sp_bear_frag_pasp_trun_v1.mp4: 28 of the 30
            # frames FFmpeg decodes). Our remux gives such a track an edit to where its last
            # frame ends (MovieWriter), so GStreamer decodes them all: more than of the
            # input, exactly what FFmpeg decodes of both.
            allowed.append(f"{kind}: {got} of the input's {want}: every frame FFmpeg decodes of both; GStreamer "
                           "1.22 drops those presented past the input's media end, which the output's edit keeps")
            continue
        # GStreamer 1.22 ends a stream early by up to its first edit's media_time (fixed
        # upstream): allowed in the output, by at most that many frames or samples.
        try:
            media_time, scale = first_media_time(out_path, 0, b"vide" if kind == "video" else b"soun")
        except (ValueError, IndexError):
            media_time, scale = 0, 1
        if kind == "audio":
            rate = next((int(s["sample_rate"]) for s in out_streams if s.get("codec_type") == "audio"), scale)
            slack = -(-media_time * rate // scale)
        else:
            fps = next((s.get("avg_frame_rate") for s in out_streams if s.get("codec_type") == "video"), "0/1")
            num, den = (int(x) for x in fps.split("/")) if "/" in fps else (0, 1)
            slack = -(-media_time * num // (scale * den)) if den and num else 0
        if want - slack <= got < want:
            allowed.append(f"{kind}: {got} of {want} (GStreamer 1.22 ends early by up to the edit's media_time, "
                           f"{media_time}/{scale} s = {slack})")
        else:
            problems.append(f"{kind}: output {got}, input {want}")
    text = ", ".join(f"{k} {n}: {v}" for (k, n), v in sorted(a.items()))
    report.check(not problems, f"remux: GStreamer decodes as much as of the input ({text})",
                 "; ".join(problems), time.monotonic() - began)
    for n in allowed:
        report.note("allowed: " + n)


# --- Inputs ---------------------------------------------------------------------------

def segment_track_ids(data, boxes):
    ids = set()
    for moof in (b for b in boxes if b.kind == b"moof"):
        for traf in (c for c in moof.children if c.kind == b"traf"):
            ids.add(mp4box.u32(data, traf.child(b"tfhd").payload + 4))
    return ids


def init_of(seg_path, names):
    """The init segment of a media segment, by class (see the docstring), or None."""
    data, boxes, _ = walk_file(seg_path)
    if boxes is None or any(b.kind == b"moov" for b in boxes) or not any(b.kind == b"moof" for b in boxes):
        return None
    ids = segment_track_ids(data, boxes)
    indexes = mp4box.segment_indexes(data, boxes)
    found = []
    for name in names:
        path = os.path.join(CORPUS, name)
        if path == seg_path:
            continue
        idata, iboxes, _ = walk_file(path)
        if iboxes is None or any(b.kind == b"moof" for b in iboxes):
            continue
        try:
            moov = mp4box.top(iboxes, b"moov")
            if not any(c.kind == b"mvex" for c in moov.children):
                continue
            traks = [c for c in moov.children if c.kind == b"trak"]
            if {mp4box.track_id(idata, t) for t in traks} != ids or any(mp4box.table_samples(idata, t) for t in traks):
                continue
            # The segment's trun durations, in the init's timescale, last what its sidx
            # says (in the sidx's own timescale).
            joined = idata + data
            jboxes = mp4box.read_tree(joined, trailing_ok=True, truncated_ok=True)
            fits = True
            for x in indexes:
                trak = next(t for t in traks if mp4box.track_id(idata, t) == x["reference_id"])
                scale, _ = mp4box.timescale_and_duration(idata, trak.child(b"mdia").child(b"mdhd"))
                total = sum(s["duration"] for s in mp4box.fragment_samples(joined, jboxes, x["reference_id"]))
                said = sum(x["subsegment_durations"]) / x["timescale"]
                fits &= abs(total / scale - said) <= 1 / x["timescale"] + 0.001
            if fits:
                found.append(name)
        except (ValueError, KeyError, StopIteration, struct.error, IndexError):
            continue
    return found[0] if len(found) == 1 else None


def check_damaged(report, tool, path, f, tmp):
    """Issue 32: one track's stsd removed, remux and mux keep the rest, tag edits the file
    (see the docstring)."""
    if not f["moov"] or f.get("truncated") or fragmented(path):
        return
    video = [t for t in f["tracks"] if t["handler"] == b"vide" and t["entries"]]
    others = [t for t in f["audio"] if t["entries"]]
    if not video or not others:
        return
    plain = os.path.join(tmp, "remux" + container_ext(f))
    if not os.path.exists(plain):
        report.skip("damaged: remux", "no plain remux output to compare with")
        return
    victim = others[0]
    data = bytearray(open(path, "rb").read())
    try:
        stsd = mp4box.stbl_of(victim["trak"]).child(b"stsd")
        victim_id = mp4box.track_id(data, victim["trak"])
    except ValueError as error:
        report.skip("damaged: remux", f"mp4box.py cannot find the stsd: {error}")
        return
    data[stsd.offset + 4:stsd.offset + 8] = b"free"
    damaged = os.path.join(tmp, "damaged" + container_ext(f))
    with open(damaged, "wb") as out:
        out.write(data)
    plain_streams = ffprobe_streams(plain) or []
    plain_counts = decoded_video_frames(plain, plain_streams)
    remuxed = os.path.join(tmp, "damaged-remux" + container_ext(f))
    streams = check_dropped(report, "remux", victim_id, remuxed,
                            run(tool, "remux", "--json", damaged, remuxed, "--overwrite"))
    if streams is not None and len(streams) != len(plain_streams) - 1:
        report.check(False, "damaged: remux streams", f"{len(streams)} streams, the plain remux {len(plain_streams)}")
    elif streams is not None:
        compare_video_frames(report, "remux", plain_counts, decoded_video_frames(remuxed, streams))
    # mux keeps the video's intact tracks: its first video is the plain remux's.
    muxed = os.path.join(tmp, "damaged-mux.mp4")
    streams = check_dropped(report, "mux", victim_id, muxed,
                            run(tool, "mux", "--json", "--keep-original-audio", damaged, "--audio", MUSIC, muxed,
                                "--overwrite"))
    if streams is not None:
        compare_video_frames(report, "mux", plain_counts, decoded_video_frames(muxed, streams))
    check_damaged_tag(report, tool, damaged, f, tmp)


MUSIC = os.path.join(ROOT, "Fixtures", "meta-itunes.m4a")


def check_dropped(report, command, victim_id, out_path, out):
    """One check: the command exited 0, listed exactly the victim in `dropped_tracks` and
    named it in one warning. Returns the output's streams (ffprobe) when it passed."""
    stderr = out.stderr.decode(errors="replace").strip()
    if out.returncode != 0:
        report.check(False, f"damaged: {command}", f"exit {out.returncode}: {stderr[:200]}")
        return None
    try:
        result = json.loads(out.stdout)
    except ValueError:
        result = {}
    problems = []
    dropped = [d.get("track_id") for d in result.get("dropped_tracks", [])]
    if dropped != [victim_id]:
        problems.append(f"dropped_tracks {dropped}, not [{victim_id}]")
    # remux's warnings start with the track; mux's with the video's name first.
    named = [w for w in result.get("warnings", []) if re.search(f"(^|: )track {victim_id} .*was dropped", w)]
    if len(named) != 1:
        problems.append(f"{len(named)} warnings name track {victim_id} as dropped")
    report.check(not problems, f"damaged: {command}", "; ".join(problems) or f"track {victim_id} dropped")
    return None if problems else (ffprobe_streams(out_path) or [])


def decoded_video_frames(path, streams):
    """(FFmpeg's, GStreamer's) frame counts of the first video stream; None for a player
    that decodes none (an attached picture, no decoder), or GStreamer's error text."""
    ffmpeg, _ = ffmpeg_counts(path, [s for s in streams if s.get("codec_type") == "video"][:1])
    try:
        gstreamer = gst_counts(path, ["video"])[("video", 0)]
    except RuntimeError as error:
        gstreamer = str(error)
    return ffmpeg.get(("video", 0)), gstreamer


def compare_video_frames(report, command, plain, out):
    """The output's first video decodes to as many frames as the plain remux's, in each
    player a check of its own; a player that cannot decode the plain remux is skipped."""
    for n, player in enumerate(("FFmpeg", "GStreamer")):
        label = f"damaged: {command} {player} decode"
        if plain[n] is None or isinstance(plain[n], str):
            why = plain[n] or "an attached picture, or no decoder"
            report.skip(label, f"{player} decodes no video of the plain remux ({why})")
        else:
            report.check(out[n] == plain[n], label, f"{out[n]} video frames, the plain remux {plain[n]}")


def check_damaged_tag(report, tool, damaged, f, tmp):
    """Issue 32: `tag` edits a file with a damaged track (it rewrites metadata only): exit 0,
    ffprobe reads the new title, and lists as many streams as in the damaged input."""
    copy = os.path.join(tmp, "damaged-tag" + container_ext(f))
    shutil.copyfile(damaged, copy)
    out = run(tool, "tag", copy, "--set", "title=damaged part")
    if out.returncode != 0:
        report.check(False, "damaged: tag", f"exit {out.returncode}: {out.stderr.decode(errors='replace')[:200]}")
        return
    probed = json.loads(ffprobe(copy, "-show_entries", "format_tags=title", timeout=120).stdout or b"{}")
    title = (probed.get("format", {}).get("tags") or {}).get("title")
    before, after = (len(ffprobe_streams(p) or []) for p in (damaged, copy))
    report.check(title == "damaged part" and before == after, "damaged: tag",
                 f"title {title!r}; {after} streams, the damaged input {before}")


COMMANDS = {"extract", "packets", "probe", "remux", "damaged"}
ONLY = {c.strip() for c in os.environ.get("CORPUS_ONLY", "").split(",") if c.strip()}
FILES = [g.strip() for g in os.environ.get("CORPUS_FILES", "").split(",") if g.strip()]


def wanted(command):
    return not ONLY or command in ONLY


def check_input(tool, label, path, tmp_root):
    report = Report(tally, label)
    with report.guarded(tmp_root) as tmp:
        f = facts(path)
        streams = ffprobe_streams(path)
        if wanted("extract"):
            check_extraction(report, tool, path, f, streams, tmp)
        if wanted("packets"):
            check_packets(report, tool, path, f)
        if wanted("probe"):
            check_probe(report, tool, path, f)
        if wanted("remux"):
            check_remux(report, tool, path, f, tmp)
        if wanted("damaged"):
            check_damaged(report, tool, path, f, tmp)
    return report


CUTS = (25, 50, 75)


def truncated_variants(names, tmp):
    """Each corpus file whose moov (or, fragmented, whose init) lies before the cut, cut at
    25, 50 and 75 % of its bytes: NAME@P%. Their class (truncated) comes from the oracles
    like any input's; a cut that leaves no moov would only repeat the no-moov refusal."""
    variants = []
    for n in names:
        source = os.path.join(CORPUS, n)
        with open(source, "rb") as f:
            data = f.read()
        try:
            boxes = mp4box.read_tree(data, trailing_ok=True, truncated_ok=True)
        except Exception:
            continue  # Not walkable: the whole file is already a damaged input.
        moov = next((b for b in boxes if b.kind == b"moov" and not b.truncated), None)
        if moov is None:
            continue
        for percent in CUTS:
            length = len(data) * percent // 100
            if length < moov.end:
                continue
            path = os.path.join(tmp, f"{n}@{percent}%")
            with open(path, "wb") as out:
                out.write(data[:length])
            variants.append((f"{n}@{percent}%", path))
    return variants


def main():
    tool = extract_audio_and_corpus()
    if tool is None:
        return 1
    if ONLY - COMMANDS:
        return fail_before_start(f"CORPUS_ONLY names no command: {', '.join(sorted(ONLY - COMMANDS))} "
                                 f"(commands: {', '.join(sorted(COMMANDS))})")
    names = corpus_names()
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        inputs = [(n, os.path.join(CORPUS, n)) for n in names]
        for n in names:
            init = init_of(os.path.join(CORPUS, n), names)
            if init:
                joined = os.path.join(tmp, f"{init}+{n}")
                with open(joined, "wb") as out:
                    for part in (init, n):
                        with open(os.path.join(CORPUS, part), "rb") as f:
                            shutil.copyfileobj(f, out)
                inputs.append((f"{init}+{n}", joined))
        inputs += truncated_variants(names, tmp)
        if FILES:
            inputs = [(label, path) for label, path in inputs if any(fnmatch.fnmatch(label, g) for g in FILES)]
        print_reports(check_input, [(tool, label, path, tmp) for label, path in inputs])
    print(f"-- {len(inputs)} inputs in {time.monotonic() - started:.0f} s")
    return tally.finish("-- {n} KNOWN failure(s) of ours, not counted (see KNOWN_OPEN):")


if __name__ == "__main__":
    sys.exit(main())
