#!/usr/bin/env python3
"""`extract-audio probe --json` against ffprobe, for one input file.

usage: probe_check.py EXTRACT_AUDIO FIXTURE

Runs `EXTRACT_AUDIO probe --json FIXTURE` and `ffprobe -show_streams FIXTURE` and
requires:
  - the same number of tracks as ffprobe has streams, with the same track IDs (ffprobe's
    stream "id"); streams with disposition attached_pic are cover art from a covr item,
    not tracks, and are left out (the ok line says how many);
  - per track: format == ffprobe's codec_tag_string; kind "audio"/"video" exactly where
    ffprobe's codec_type is audio/video;
  - audio: sample_rate and channels equal to ffprobe's;
  - duration within one sample of ffprobe's stream duration: 1/sample_rate for audio,
    one frame (1/avg_frame_rate) for video, one tick of the stream's time base for
    other tracks; plus 0.5 µs for ffprobe's six printed decimals.
Prints one reason and exits 1 when something differs; exits 0 otherwise, printing
nothing or the known deviation it allowed. A missing probe subcommand is a failure
("probe not available").

Cover art: ffprobe shows each covr image as a video stream with disposition attached_pic
and no track; those are left out. A chapter track of images (tref/chap to a video track)
is also shown with attached_pic, and timed_thumbnails: it is a track and is compared.

Known differences, each checked exactly (ffprobe's value against FFmpeg 5.1's rule, ours
against the file as Scripts/mp4box.py reads it), printed when allowed:
  - ffprobe's duration is min(media, edit list): the media's duration (mdhd, bounded by
    the samples' total: mov_read_stts), bounded by the edit list's total converted to the
    media timescale (mov_fix_index: edit_list_dts_entry_end - start_dts); it never
    subtracts an edit's media_time, and gives an empty edit's delay as start_time. Ours is
    the presented duration (README: "the edit list's"): the delay counted, each media edit
    lasting its segment or up to the media's end after its media_time. Where the two
    differ, ffprobe's must be FFmpeg's formula and ours the presented duration computed
    here (presented_duration).
  - No edit list and an iTunSMPB item (README: priming and valid samples from iTunSMPB):
    ours is the valid samples' duration, ffprobe's the whole media's.
  - A chapter track (tref/chap): FFmpeg reads it as chapters and discards the stream, so
    no packet gives it a start and avformat's fill_all_stream_timings gives it the
    file's duration (format duration, in the stream's time base). Ours is the media's
    (min(mdhd, the samples' total)).
  - A fragmented track whose first tfdt (or, where a sidx indexes the track, whose first
    sidx's earliest_presentation_time, which FFmpeg takes instead) is not 0, without edit
    list: ffprobe's duration is the last sample's end decode time counted from 0
    (mov_read_trun's track_end); ours the samples' total.
  - A fragmented file (issue 32): its tracks share the decode clock of their tfdt, and ours
    count on the one timeline cuts use: 0 where the first track starts, each track's
    duration where it ends from there (ffprobe's stream duration is FFmpeg's rule above,
    the end decode time from 0, edits ignored). Measured by ffprobe's packets (edits
    applied): a track starts at its first dts_time plus its edit's media_time (FFmpeg 5.1
    shifts a fragmented track by that media_time and so presents an AAC priming the edit
    skips), ends at its latest pts_time + duration_time less the dts_shift FFmpeg adds to
    every pts of a track with negative composition offsets (an audio track's last packet
    lasting what its trun says: FFmpeg gives it a whole frame); the file's start_time and duration
    are checked against the same (format start_time is ffprobe's but for that priming),
    within a movie tick (the edits count in it) and a media tick (where the start lies in
    each track's ticks), and for tracks one sample or frame more.
  - A file cut short: ours is the duration of the samples lying wholly inside the file
    (what --salvage extracts, README), for every kind of track, ffprobe's that of its
    tables.
  - An encrypted sample entry (encv/enca): ours is the entry's type, ffprobe's the
    original format of its sinf/frma.

Known deviation (FFmpeg 5.1): in a fragmented file with sidx boxes (-movflags +dash),
ffprobe may give a track the duration of its last sidx's earliest_presentation_time,
leaving out that last segment's subsegment_duration. Only where ffprobe's duration_ts
is exactly that value, and the track's samples (counted by Scripts/mp4box.py from the
trun boxes) add up to something else, the duration is checked against the samples'
total instead, and the deviation is printed.
"""

import json
import os
import struct
import sys
from fractions import Fraction

sys.dont_write_bytecode = True  # no __pycache__ in Scripts/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mp4box  # noqa: E402
from oracle.ffprobe import ffprobe  # noqa: E402
from oracle.run import run as oracle_run  # noqa: E402


class CheckFailed(Exception):
    pass


def run(args):
    return oracle_run(*args)


def ffprobe_streams(path):
    result = ffprobe(path, "-show_streams")
    if result.returncode != 0:
        raise CheckFailed(f"ffprobe exited {result.returncode}: {result.stderr.decode(errors='replace')}")
    return json.loads(result.stdout)["streams"]


def our_probe(extract, path):
    result = run([extract, "probe", "--json", path])
    said = result.stderr.decode(errors="replace").strip()
    if result.returncode == 64 or "unknown option" in said or "usage" in said.lower():
        raise CheckFailed(f"probe not available: `extract-audio probe --json` exited "
                          f"{result.returncode}: {said[:200]}")
    if result.returncode != 0:
        raise CheckFailed(f"extract-audio probe --json exited {result.returncode}: {said[:300]}")
    try:
        return json.loads(result.stdout)
    except json.JSONDecodeError as error:
        raise CheckFailed(f"probe --json output is not JSON ({error}): "
                          f"{result.stdout[:200].decode(errors='replace')}")


def rate(text):
    """ffprobe's "25/1" as a Fraction, or None for 0/0."""
    if not text or text.startswith("0/"):
        return None
    return Fraction(text)


def sidx_quirk(path, stream):
    """(seconds, note) when ffprobe's duration of this stream is the last sidx's
    earliest_presentation_time rather than the track's real duration; else None."""
    with open(path, "rb") as f:
        data = f.read()
    # A file cut short (its mdat runs past the end) is probed too: the cut box is kept,
    # marked truncated, and not parsed.
    boxes = mp4box.read_tree(data, trailing_ok=True, truncated_ok=True)
    if not mp4box.is_fragmented(boxes):
        return None
    tid = int(stream["id"], 16)
    indexes = [x for x in mp4box.segment_indexes(data, boxes) if x["reference_id"] == tid]
    if not indexes or stream.get("duration_ts") is None:
        return None
    last = indexes[-1]
    if int(stream["duration_ts"]) != last["earliest_presentation_time"]:
        return None
    total = sum(s["duration"] for s in mp4box.fragment_samples(data, boxes, tid))
    if total == last["earliest_presentation_time"]:
        return None
    timescale = last["timescale"]
    note = (f"known deviation: ffprobe's track {tid} duration {stream['duration']} s is the last "
            f"sidx's earliest_presentation_time ({last['earliest_presentation_time']}/{timescale}, "
            f"without its subsegment_duration {sum(last['subsegment_durations'])}); checked "
            f"against the samples' total {total}/{timescale} = {total / timescale:.6f} s")
    return total / timescale, note


def check(extract, path):
    notes = []
    ours = our_probe(extract, path)
    theirs = ffprobe_streams(path)
    # Cover art: ffprobe shows each image of a covr item as a video stream with
    # disposition attached_pic. They are not tracks (no trak, no stream id to match).
    pictures = [s for s in theirs if (s.get("disposition") or {}).get("attached_pic")
                and not (s.get("disposition") or {}).get("timed_thumbnails")]
    if pictures:
        theirs = [s for s in theirs if s not in pictures]
        notes.append(f"{len(pictures)} attached picture(s) (covr images, not tracks) left out")
    tracks = ours.get("tracks")
    if not isinstance(tracks, list):
        raise CheckFailed("probe --json has no \"tracks\" list")
    if len(tracks) != len(theirs):
        raise CheckFailed(f"{len(tracks)} tracks, ffprobe has {len(theirs)} streams "
                          f"({', '.join(s.get('codec_type', '?') for s in theirs)})")
    by_id = {}
    for track in tracks:
        by_id[track.get("id")] = track
    for stream in theirs:
        tid = int(stream["id"], 16)
        track = by_id.get(tid)
        where = f"track {tid}"
        if track is None:
            raise CheckFailed(f"ffprobe's stream {stream['index']} (id {stream['id']}) has no "
                              f"track with that id in probe --json")
        kind = stream.get("codec_type")
        if track.get("format") != stream.get("codec_tag_string"):
            original = original_format(path, tid) if track.get("format") in ("encv", "enca") else None
            if original is not None and original == stream.get("codec_tag_string"):
                notes.append(f"{where}: format {track['format']!r} is the sample entry's type; ffprobe's "
                             f"{original!r} is its sinf/frma original format")
            else:
                raise CheckFailed(f"{where} format {track.get('format')!r}, ffprobe codec_tag_string "
                              f"{stream.get('codec_tag_string')!r}")
        if (kind in ("audio", "video") or track.get("kind") in ("audio", "video")) \
                and track.get("kind") != kind:
            raise CheckFailed(f"{where} kind {track.get('kind')!r}, ffprobe codec_type {kind!r}")
        if kind == "audio":
            for key in ("sample_rate", "channels"):
                if track.get(key) != int(stream[key]):
                    reason = cut_track_channels(path, tid, track) if key == "channels" else None
                    if reason is None:
                        raise CheckFailed(f"{where} {key} {track.get(key)!r}, ffprobe {stream[key]}")
                    notes.append(f"{where}: {reason}")
            unit = Fraction(1, int(stream["sample_rate"]))
            unit_name = "one sample"
        elif kind == "video":
            fps = rate(stream.get("avg_frame_rate")) or rate(stream.get("r_frame_rate"))
            if fps is None:
                raise CheckFailed(f"{where}: ffprobe gives no frame rate")
            unit = 1 / fps
            unit_name = "one frame"
        else:
            unit = Fraction(stream["time_base"])
            unit_name = "one tick"
        if stream.get("duration") in (None, "N/A"):
            raise CheckFailed(f"{where}: ffprobe reports no duration")
        duration = track.get("duration")
        if not isinstance(duration, (int, float)):
            raise CheckFailed(f"{where} duration {duration!r} is not a number")
        reference = float(stream["duration"])
        quirk = sidx_quirk(path, stream)
        if quirk:
            reference = quirk[0]
            notes.append(quirk[1])
        tolerance = float(unit) + 5e-7
        if abs(duration - reference) > tolerance:
            known = known_duration_difference(path, tid, stream, track, duration, tolerance)
            if known:
                notes.append(f"{where}: known difference: {known}")
                continue
            raise CheckFailed(f"{where} ({kind}) duration {duration}, ffprobe {stream['duration']}: "
                              f"off by {abs(duration - reference):.6f} s, more than {unit_name} "
                              f"({float(unit):.6f} s)")
    if ours.get("fragmented"):
        notes += check_timeline(path, ours)
    return notes


class File:
    """The file's boxes as Scripts/mp4box.py reads them (a box cut by the end of the file kept)."""

    def __init__(self, path):
        with open(path, "rb") as f:
            self.data = f.read()
        self.boxes = mp4box.read_tree(self.data, trailing_ok=True, truncated_ok=True)
        self.moov = mp4box.top(self.boxes, b"moov")
        self.movie_timescale, _ = mp4box.timescale_and_duration(self.data, self.moov.child(b"mvhd"))
        self.fragmented = mp4box.is_fragmented(self.boxes)

    def trak(self, tid):
        for trak in (c for c in self.moov.children if c.kind == b"trak"):
            if mp4box.track_id(self.data, trak) == tid:
                return trak
        raise ValueError(f"no trak with ID {tid}")

    def samples(self, tid):
        """[(offset, size, duration)] from the sample table, then the fragments."""
        trak = self.trak(tid)
        samples = [tuple(x) for x in mp4box.table_samples(self.data, trak)]
        if self.fragmented:
            samples += [(x["offset"], x["size"], x["duration"])
                        for x in mp4box.fragment_samples(self.data, self.boxes, tid)]
        return samples

    def first_tfdt(self, tid):
        for moof in (b for b in self.boxes if b.kind == b"moof"):
            for traf in (c for c in moof.children if c.kind == b"traf"):
                if mp4box.u32(self.data, traf.child(b"tfhd").payload + 4) != tid:
                    continue
                tfdt = [c for c in traf.children if c.kind == b"tfdt"]
                if not tfdt:
                    return None
                version = self.data[tfdt[0].payload]
                return struct.unpack_from(">Q" if version == 1 else ">I", self.data, tfdt[0].payload + 4)[0]
        return None

    def fragment_composition_offset(self, tid, end):
        """The largest trun composition offset of the track's fragment samples lying wholly
        before byte `end`, 0 when not fragmented or none."""
        if not self.fragmented:
            return 0
        whole = [x["composition_offset"] for x in mp4box.fragment_samples(self.data, self.boxes, tid)
                 if x["offset"] + x["size"] <= end]
        return max(whole, default=0)

    def max_composition_offset(self, tid):
        """The largest composition offset of the ctts (signed, as FFmpeg reads it), 0 without one."""
        stbl = mp4box.stbl_of(self.trak(tid))
        largest = 0
        for ctts in (c for c in stbl.children if c.kind == b"ctts"):
            count = mp4box.u32(self.data, ctts.payload + 4)
            for i in range(count):
                largest = max(largest, struct.unpack_from(">i", self.data, ctts.payload + 12 + 8 * i)[0])
        return largest

    def chapter_targets(self):
        found = set()
        for tref in (b for b in mp4box.walk(self.boxes) if b.kind == b"tref"):
            for kind, ids in mp4box.track_references(self.data, tref):
                if kind == b"chap":
                    found.update(ids)
        return found


def original_format(path, tid):
    """The sinf/frma data_format of track `tid`'s first sample entry, or None."""
    f = File(path)
    stsd = mp4box.stbl_of(f.trak(tid)).child(b"stsd")
    entry = next((c for c in stsd.children), None)
    if entry is None:
        return None
    start = mp4box.sample_entry_children_offset(f.data, entry) if entry.kind == b"enca" else entry.payload + 78
    for child in mp4box.parse_boxes(f.data, start, entry.end, entry):
        if child.kind == b"sinf":
            for box in mp4box.parse_boxes(f.data, child.payload, child.end, child):
                if box.kind == b"frma":
                    return f.data[box.payload:box.payload + 4].decode("latin-1")
    return None


def presented_duration(f, tid, kind, end=None):
    """The presented duration of track `tid` (seconds) from its edit list, as the README
    defines probe's: empty edits count; a media edit lasts its segment duration, or up to
    the media's end after its media_time. The media ends after its samples' total (video and
    other tracks: plus the largest composition offset, B-frames being presented after they
    are decoded); for audio, the shorter of that and mdhd, as extraction counts it; or
    `end` (media ticks) where given."""
    trak = f.trak(tid)
    edits = mp4box.edit_list(f.data, trak) or []
    timescale, declared = mp4box.timescale_and_duration(f.data, trak.child(b"mdia").child(b"mdhd"))
    total = sum(d for _, _, d in f.samples(tid))
    if end is None:
        end = min(total, declared) if kind == "audio" else max(total + f.max_composition_offset(tid),
                                                               min(total, declared))
    seconds = Fraction(0)
    for segment, media_time, _, _ in edits:
        length = Fraction(segment, f.movie_timescale)
        if media_time == -1:
            seconds += length
        else:
            seconds += min(length, Fraction(max(0, end - media_time), timescale))
    return seconds


def gapless(f):
    """(priming, valid samples) of the file's iTunSMPB item, or None."""
    try:
        items = mp4box.freeform_items(f.data, f.boxes, "iTunSMPB")
    except ValueError:
        # A meta whose children after ilst are not boxes (tls_itunes10_cover_truncated.m4a):
        # its ilst alone, as players read it.
        items = []
        for meta in (b for b in mp4box.walk([f.moov]) if b.kind == b"meta" and b.parent.kind == b"udta"):
            start = meta.payload + (4 if mp4box.is_full_box_meta(f.data, meta) else 0)
            for box in mp4box.boxes_of(f.data, start, meta.end):
                if box.kind == b"ilst":
                    ilst = mp4box.parse_boxes(f.data, box.offset, box.end, meta)[0]
                    items += [i for i in mp4box.ilst_items(f.data, ilst)
                              if i["kind"] == b"----" and i["name"] == "iTunSMPB"]
    if not items or not items[0]["data"]:
        return None
    fields = items[0]["data"][0][2].decode("latin-1").split()
    return int(fields[1], 16), int(fields[3], 16)


def one_timeline(path):
    """A whole fragmented file's one timeline, by ffprobe's packets (see the top):
    (origin, {track_id: (start, end)}, tick) in seconds on the fragments' decode clock,
    start and end counted from origin, tick the coarsest of the movie's and the tracks'
    ticks; None for a regular file, a file cut short or no packets."""
    f = File(path)
    if not f.fragmented or any(b.truncated for b in f.boxes):
        return None
    media_times = {}
    # FFmpeg 5.1's dts_shift for negative composition offsets in fragments: it adds it to
    # every pts, the dts kept (sp_bbb_piff_smooth.ismv's video: offsets down to -666667 of
    # 10^7, its first packet dts 0, pts 0.066667), so its frames end that much later.
    moved = {}
    tick = Fraction(1, f.movie_timescale)
    for trak in (c for c in f.moov.children if c.kind == b"trak"):
        tid = mp4box.track_id(f.data, trak)
        timescale, _ = mp4box.timescale_and_duration(f.data, trak.child(b"mdia").child(b"mdhd"))
        edits = [e for e in mp4box.edit_list(f.data, trak) or [] if e[1] >= 0]
        media_times[tid] = Fraction(edits[0][1], timescale) if edits else Fraction(0)
        tick = max(tick, Fraction(1, timescale))
        offsets = [x["composition_offset"] for x in mp4box.fragment_samples(f.data, f.boxes, tid)]
        moved[tid] = Fraction(max(0, -min(offsets)), timescale) if offsets else Fraction(0)
    entries = "packet=stream_index,pts_time,dts_time,duration_time:stream=index,id,duration,codec_type"
    results = [ffprobe(path, *options, "-show_entries", entries) for options in ([], ["-ignore_editlist", "1"])]
    if any(result.returncode != 0 for result in results):
        return None
    out, raw = (json.loads(result.stdout) for result in results)
    ids = {s["index"]: int(s["id"], 16) for s in out.get("streams", []) if s.get("id")}
    # FFmpeg 5.1 gives the last packet of a fragmented AAC track a whole frame's duration
    # (frag-cmaf.mp4: 1024 where its trun says 136): the last packet in decode order ends
    # where the stream's duration (its end decode time, FFmpeg's track_end) says, counted
    # from its own decode time as the file holds it (-ignore_editlist).
    last_raw = {}
    for packet in raw.get("packets", []):
        if packet.get("dts_time") not in (None, "N/A"):
            last_raw[packet["stream_index"]] = Fraction(packet["dts_time"])
    durations = {s["index"]: Fraction(s["duration"]) for s in out.get("streams", [])
                 if s.get("duration") not in (None, "N/A") and s.get("codec_type") == "audio"}
    packets = [p for p in out.get("packets", []) if p.get("dts_time") not in (None, "N/A")]
    last_index = {p["stream_index"]: n for n, p in enumerate(packets)}
    spans = {}
    for n, packet in enumerate(packets):
        index = packet["stream_index"]
        tid = ids.get(index)
        if tid is None:
            continue
        start, end = spans.get(tid, (Fraction(packet["dts_time"]) + media_times.get(tid, 0), None))
        length = packet.get("duration_time")
        length = None if length in (None, "N/A") else Fraction(length)
        if n == last_index[index] and index in durations and index in last_raw:
            length = durations[index] - last_raw[index]
        if packet.get("pts_time") not in (None, "N/A") and length is not None:
            last = Fraction(packet["pts_time"]) + length - moved.get(tid, 0)
            end = last if end is None or last > end else end
        spans[tid] = (start, end)
    spans = {tid: span for tid, span in spans.items() if span[1] is not None}
    if not spans:
        return None
    origin = min(start for start, _ in spans.values())
    return origin, {tid: (start - origin, end - origin) for tid, (start, end) in spans.items()}, tick


def check_timeline(path, ours):
    """The file's start_time and duration against one_timeline (see the top); notes."""
    timeline = one_timeline(path)
    if timeline is None:
        return []
    origin, spans, tick = timeline
    # ffprobe prints six decimals.
    start = ours.get("start_time")
    if not isinstance(start, (int, float)) or not near(start, origin, Fraction(1, 10**6)):
        raise CheckFailed(f"start_time {start!r}, where ffprobe's packets start the first track at "
                          f"{float(origin):.6f} s")
    end = max(e for _, e in spans.values())
    duration = ours.get("duration")
    if not isinstance(duration, (int, float)) or not near(duration, end, 2 * tick + Fraction(1, 10**6)):
        raise CheckFailed(f"duration {duration!r}, where ffprobe's packets end {float(end):.6f} s after the "
                          f"first track's start")
    return [f"fragmented: start_time {start} s and duration {duration} s on the one timeline "
            f"(ffprobe's packets: from {float(origin):.6f} s, for {float(end):.6f} s)"]


def known_duration_difference(path, tid, stream, track, duration, tolerance):
    """The reason why our duration and ffprobe's may differ on this track (see the top),
    each side checked exactly; None when no known difference explains it."""
    f = File(path)
    trak = f.trak(tid)
    kind = stream.get("codec_type")
    timescale, declared = mp4box.timescale_and_duration(f.data, trak.child(b"mdia").child(b"mdhd"))
    edits = mp4box.edit_list(f.data, trak) or []
    samples = f.samples(tid)
    total = sum(d for _, _, d in samples)
    theirs = Fraction(stream["duration"])
    tick = Fraction(1, timescale)
    unit = Fraction(tolerance)
    itunes = gapless(f) if not edits and kind == "audio" else None
    first = f.first_tfdt(tid) if f.fragmented else None
    media = min(total, declared) if total else declared
    edit_total = sum(Fraction(segment, f.movie_timescale) for segment, _, _, _ in edits)
    # The first fragment's decode time as FFmpeg 5.1 takes it (mov_read_trun): the first
    # sidx's earliest_presentation_time for the track where one indexes it, else the tfdt.
    indexes = [x for x in mp4box.segment_indexes(f.data, f.boxes) if x["reference_id"] == tid] \
        if f.fragmented else []
    if indexes:
        first = Fraction(indexes[0]["earliest_presentation_time"] * timescale, indexes[0]["timescale"])
    # FFmpeg 5.1's duration: mov_read_stts, mov_fix_index, mov_read_trun (see the top).
    if f.fragmented and not mp4box.table_samples(f.data, trak):
        ffmpeg = Fraction((first or 0) + total, timescale)
    elif edits:
        ffmpeg = min(Fraction(media, timescale), edit_total)
    else:
        ffmpeg = Fraction(media, timescale)
    # A chapter track.
    if tid in f.chapter_targets() and not edits:
        movie = probe_format_duration(path)
        if movie is not None and near(theirs, movie, Fraction(stream["time_base"])) \
                and near(duration, Fraction(media, timescale), unit):
            return (f"a chapter track: ffprobe's duration is the file's ({float(movie):.6f} s, FFmpeg reads "
                    f"the track as chapters); ours {duration:.6f} s the media's")
    # A file cut short: ours is the presentation of what lies wholly inside it, checked
    # exactly. ffprobe's is that of its tables (FFmpeg's rule below) or, where packets run
    # past the end, what its decoder made of bytes that are not the track's: never less.
    size = len(f.data)
    whole = 0
    for offset, length, d in samples:
        if offset + length > size:
            break
        whole += d
    # A fragmented file cut inside a box loses every later fragment, of every track.
    cut_fragments = f.fragmented and any(b.truncated for b in f.boxes)
    if whole < total or cut_fragments:
        # What is there presents up to its decode end, later by B-frames' largest composition
        # offset (ctts), through the edits as FFmpeg's rule below. Fragmented without edits:
        # the decode total, as for a whole fragmented track (below). A fragmented track's
        # edit of duration 0 presents the whole media from its media_time: up to the
        # whole samples' decode end plus their largest trun composition offset.
        later = 0 if kind == "audio" or not whole else f.max_composition_offset(tid)
        media_edits = [e for e in edits if e[1] != -1]
        if f.fragmented and media_edits and all(e[0] == 0 for e in media_edits):
            if kind != "audio" and whole:
                later = max(later, f.fragment_composition_offset(tid, size))
            ours = Fraction(max(0, whole + later - media_edits[0][1]), timescale)
        elif edits:
            ours = presented_duration(f, tid, kind, end=whole + later)
        elif itunes and itunes[0] < whole:
            ours = Fraction(min(itunes[1], whole - itunes[0]), timescale)
        elif f.fragmented:
            ours = Fraction(whole, timescale)
        else:
            ours = Fraction(whole + later, timescale)
        if near(duration, ours, unit) and theirs >= ours:
            return (f"the file is cut short: ours {duration:.6f} s is the presentation of the samples wholly "
                    f"inside it ({whole}/{timescale}), ffprobe's {float(theirs):.6f} s that of its tables "
                    f"or of the packets it read past the end")
    # Segment durations count in the movie timescale: FFmpeg's conversion rounds to a tick.
    if not near(theirs, ffmpeg, tick + (Fraction(1, f.movie_timescale) if edits else 0)):
        return None
    # Fragmented: ours is the track's end on the one timeline (see the top).
    timeline = one_timeline(path) if f.fragmented else None
    if timeline and tid in timeline[1]:
        end = timeline[1][tid][1]
        if near(duration, end, unit + 2 * timeline[2]):
            return (f"fragmented: ours {duration:.6f} s is where the track ends on the file's one timeline "
                    f"(ffprobe's packets: {float(end):.6f} s from the first track's start); ffprobe's "
                    f"{float(theirs):.6f} s is the end decode time ({first or 0}+{total})/{timescale}")
    # iTunSMPB, without edit list.
    if itunes and near(duration, Fraction(itunes[1], int(stream["sample_rate"])), unit):
        return (f"iTunSMPB presents {itunes[1]} valid samples (ours, {duration:.6f} s); ffprobe's "
                f"{float(theirs):.6f} s is the whole media")
    # Fragmented, first tfdt not 0, no edit list.
    if first and not edits and near(duration, Fraction(total, timescale), unit):
        return (f"fragmented from {'sidx earliest_presentation_time' if indexes else 'tfdt'} {first}: ffprobe's "
                f"duration is the end decode time ({first}+{total})/{timescale}; ours the samples' total")
    # Edit lists: ffprobe's min(media, edits) against the presented duration.
    if edits:
        presented = presented_duration(f, tid, kind)
        if near(duration, presented, Fraction(1, 10**9)):
            return (f"ffprobe's {float(theirs):.6f} s is FFmpeg's min(media {media}/{timescale}, edits "
                    f"{float(edit_total):.6f} s); ours the presented duration {float(presented):.6f} s "
                    f"(edits {[(e[0], e[1]) for e in edits]})")
    return None


def cut_track_channels(path, tid, track):
    """Why ffprobe's channel count may differ on an AAC track cut by the end of the file: its
    stream parameters come from decoding packets (avformat_find_stream_info), and packets
    that run past the end hold bytes that are not that track's (sp_bear_avc_aac_frag_sidx.mp4:
    "channel element 2.15 is not allocated", then 13 channels). Allowed only when the track's
    samples do run past the end (mp4box.py) and ours is the channel configuration of its
    AudioSpecificConfig, read here by mp4box.py; None otherwise."""
    f = File(path)
    if all(offset + size <= len(f.data) for offset, size, _ in f.samples(tid)):
        return None
    esds = next((b for b in mp4box.walk([f.trak(tid)]) if b.kind == b"esds"), None)
    if esds is None:
        return None
    asc = mp4box.esds_layout(f.data, esds)["asc"]
    if not asc or len(asc) < 2:
        return None
    bits = int.from_bytes(asc[:5].ljust(5, b"\0"), "big")
    width = 40
    def take(n):
        nonlocal width
        width -= n
        return (bits >> width) & ((1 << n) - 1)
    if take(5) == 31:
        take(6)
    if take(4) == 15:
        take(24)
    configuration = take(4)
    if configuration not in range(1, 7) or track.get("channels") != configuration:
        return None
    return (f"channels {configuration} as its AudioSpecificConfig says; ffprobe's come from decoding packets "
            "that run past the end of the cut file")


def near(a, b, within):
    return abs(Fraction(a) - Fraction(b)) <= within


def probe_format_duration(path):
    result = ffprobe(path, "-show_entries", "format=duration")
    try:
        return Fraction(json.loads(result.stdout)["format"]["duration"])
    except (ValueError, KeyError, TypeError):
        return None


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    try:
        for note in check(sys.argv[1], sys.argv[2]):
            print(note)
    except CheckFailed as failure:
        print(failure)
        sys.exit(1)


if __name__ == "__main__":
    main()
