#!/usr/bin/env python3
"""Metadata, gapless and chapter conformance of extract-audio, for one fixture.

usage: metadata_check.py EXTRACT_AUDIO FIXTURE WORKDIR [REF-OPTION ...]

Runs `EXTRACT_AUDIO FIXTURE WORKDIR/OURS.m4a`, `EXTRACT_AUDIO --no-metadata FIXTURE
WORKDIR/BARE.m4a` and FFmpeg's reference copy (REF, the reference command of
Scripts/expectations.py with the REF-OPTIONs, default -f ipod), then prints one line per
check, tab-separated: "ok<TAB>CHECK<TAB>NOTE" or "FAIL<TAB>CHECK<TAB>REASON". The oracle
is FFmpeg (ffprobe, ffmpeg), AtomicParsley and the box walker Scripts/mp4box.py, never
the Swift code. The checks (NAME = the fixture's name; the ones in brackets only where
the input has what they check):

  tags NAME            every ffprobe -show_format tag of the input is in OURS with the
                       same value, except the ones FFmpeg makes from the ftyp box
                       (major_brand, minor_version, compatible_brands); OURS has no other
                       tag, except the iTunSMPB item ours adds (see gapless).
  times NAME           creation and modification times of mvhd and of the audio track's
                       tkhd and mdhd (walker) equal the input's.
  udta NAME            moov/udta of OURS is the input's, byte for byte, but for the one
                       iTunSMPB item ours appends to udta/meta/ilst (creating udta, meta
                       and ilst if the input has none); the audio track's trak/udta and
                       mdia/elng too, where the input has them.
  [keys NAME]          keys-based metadata (a meta box whose hdlr is 'mdta', iPhone
                       style): the same meta box path in OURS, the same keys and the same
                       values (data type, locale, bytes) per key.
  [cover art NAME]     every image of the input's covr item (walker) is in OURS' covr,
                       same order, type and bytes; ffprobe shows them as attached
                       pictures, and `ffmpeg -i OURS -map 0:INDEX -c copy -f data -` gives
                       the same bytes.
  chapters NAME        ffprobe -show_chapters (start, end, title) of OURS equals the
                       input's; also from each source alone, in copies of both files where
                       the other source is renamed 'free' (FFmpeg 5.1 reads both the
                       QuickTime chapter track named by tref/chap and the Nero udta/chpl;
                       -ignore_chapters drops both, and it never shows the chapter
                       track's packets); and the chapter track's samples (walker: bytes
                       and durations) are the input's.
  [AtomicParsley NAME] `AtomicParsley FILE -t` lists the same items, in the same order, for
                       the input and OURS (plus the iTunSMPB item ours adds). Only for
                       inputs AtomicParsley reads: it refuses QuickTime ('qt  ') files.
                       $ATOMICPARSLEY names the program; if it is set to "" with
                       $ATOMICPARSLEY_MISSING giving the reason, the check fails.
  gapless NAME         OURS' edit list equals the input's in seconds (segment durations
                       over the movie timescale, media times over the media timescale,
                       rates); if the input has an iTunSMPB item, OURS has it unchanged
                       and no other; if not and the input's edit list shows priming (one
                       non-empty edit, media_time > 0), OURS has exactly one, appended,
                       with the text ' 00000000 PPPPPPPP EEEEEEEE SSSSSSSSSSSSSSSS' + 8 x
                       ' 00000000' (priming = media_time; count = segment_duration in media
                       ticks; padding = the stts total - priming - count); ffprobe's
                       stream and format start_time and duration of OURS are REF's.
  --no-metadata NAME   with --no-metadata: no udta and no meta box anywhere (walker), no
                       ffprobe format tags but the ftyp ones, no chapters, one stream, and
                       packets (with side data) identical to REF's.
  probe chapters NAME  `extract-audio probe --json FIXTURE` lists the chapters ffprobe
                       -show_chapters shows: same count, same titles, starts within 1 ms.
"""

import json
import os
import shutil
import struct
import sys
from fractions import Fraction

sys.dont_write_bytecode = True  # no __pycache__ in Scripts/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import expectations  # noqa: E402
import mp4box  # noqa: E402
from oracle.run import run as oracle_run  # noqa: E402

CheckFailed = expectations.CheckFailed

# Format tags FFmpeg's demuxer makes from the ftyp box, not from metadata: they follow the
# output's brand (M4A for ours), so they are not compared.
FTYP_TAGS = {"major_brand", "minor_version", "compatible_brands"}


def run(args):
    return oracle_run(*args)


def read(path):
    with open(path, "rb") as f:
        return f.read()


class File:
    """A file's bytes and box tree."""

    def __init__(self, path):
        self.path = path
        self.data = read(path)
        self.boxes = mp4box.read_tree(self.data, trailing_ok=True)
        self.moov = mp4box.top(self.boxes, b"moov")
        self.trak = mp4box.first_audio_trak(self.data, self.boxes)

    def child(self, parent, kind):
        found = [c for c in parent.children if c.kind == kind]
        return found[0] if found else None

    def bytes_of(self, box):
        return bytes(self.data[box.offset:box.end]) if box else None

    def udta(self):
        return self.child(self.moov, b"udta")

    def timescales(self):
        movie, _ = mp4box.timescale_and_duration(self.data, self.moov.child(b"mvhd"))
        media, _ = mp4box.timescale_and_duration(self.data, self.trak.child(b"mdia").child(b"mdhd"))
        return movie, media

    def edits(self):
        return mp4box.edit_list(self.data, self.trak) or []

    def brand(self):
        ftyp = [b for b in self.boxes if b.kind == b"ftyp"]
        return self.data[ftyp[0].payload:ftyp[0].payload + 4] if ftyp else None


def format_tags(path, *options):
    return expectations.ffprobe_json(path, *options, "-show_format")["format"].get("tags", {})


def chapters(path, *options):
    found = expectations.ffprobe_json(path, *options, "-show_chapters").get("chapters", [])
    return [[c.get("start_time"), c.get("end_time"), c.get("tags", {}).get("title")] for c in found]


def priming(file):
    """The priming the input's edit list shows (one non-empty edit, media_time > 0), else 0."""
    used = [e for e in file.edits() if e[1] != -1]
    return used[0][1] if len(used) == 1 and used[0][1] > 0 else 0


def smpb_items(file):
    return mp4box.freeform_items(file.data, file.boxes, "iTunSMPB")


def appends_smpb(source):
    """Whether ours must add an iTunSMPB item: priming, and none in udta/meta/ilst."""
    return priming(source) > 0 and not smpb_items(source)


def expected_smpb(source):
    """The iTunSMPB text ours must write, from the input's edit list and stts."""
    movie, media = source.timescales()
    (duration, media_time, _, _), = [e for e in source.edits() if e[1] != -1]
    count = Fraction(duration * media, movie)
    count = round(count)                                # whole samples (exact in the fixtures)
    total = sum(d for _, _, d in mp4box.table_samples(source.data, source.trak))
    padding = total - media_time - count
    return (f" 00000000 {media_time:08X} {padding:08X} {count:016X}" + " 00000000" * 8), \
        (media_time, padding, count, total)


# --- The checks --------------------------------------------------------------------------

def check_tags(ctx):
    theirs, mine = format_tags(ctx.input.path), format_tags(ctx.ours.path)
    for key, value in theirs.items():
        if key in FTYP_TAGS:
            continue
        if key not in mine:
            raise CheckFailed(f"tag {key}={value!r} of the input is missing in OURS")
        if mine[key] != value:
            raise CheckFailed(f"tag {key}: input {value!r}, OURS {mine[key]!r}")
    allowed = {"iTunSMPB"} if appends_smpb(ctx.input) else set()
    extra = [k for k in mine if k not in theirs and k not in FTYP_TAGS and k not in allowed]
    if extra:
        raise CheckFailed(f"OURS has tags the input has not: "
                          + ", ".join(f"{k}={mine[k]!r}" for k in extra))
    compared = len([k for k in theirs if k not in FTYP_TAGS])
    return f"{compared} tags" + (" + the added iTunSMPB" if "iTunSMPB" in mine and allowed else "")


def box_times(file, box):
    data = file.data
    if data[box.payload] == 1:
        return struct.unpack_from(">QQ", data, box.payload + 4)
    return struct.unpack_from(">II", data, box.payload + 4)


def check_times(ctx):
    def times(file):
        return {"mvhd": box_times(file, file.moov.child(b"mvhd")),
                "tkhd": box_times(file, file.trak.child(b"tkhd")),
                "mdhd": box_times(file, file.trak.child(b"mdia").child(b"mdhd"))}
    theirs, mine = times(ctx.input), times(ctx.ours)
    for box in theirs:
        if theirs[box] != mine[box]:
            raise CheckFailed(f"{box} (creation, modification): input {theirs[box]}, OURS {mine[box]}")
    return "all zero" if not any(any(t) for t in theirs.values()) else f"mvhd {theirs['mvhd']}"


def udta_view(file, udta, drop_smpb=False):
    """A comparable view of a udta box: its children as bytes, except meta boxes, which are
    (version-and-flags bytes or None, [children as bytes, except ilst: its items' bytes]).
    drop_smpb: leave out the iTunSMPB item (ours appends it), then any ilst / meta / udta
    left empty by that, and say whether one was found and whether it was the last item."""
    if udta is None:
        return None, None
    data = file.data
    view, dropped = [], None
    for child in udta.children:
        if child.kind != b"meta":
            view.append(file.bytes_of(child))
            continue
        head = bytes(data[child.payload:child.payload + 4]) if mp4box.is_full_box_meta(data, child) else None
        parts, only_smpb = [], False
        for part in mp4box.meta_children(data, child):
            if part.kind != b"ilst":
                parts.append(("box", file.bytes_of(part)))
                continue
            items = mp4box.ilst_items(data, part)
            kept = items
            if drop_smpb:
                smpb = [i for i, item in enumerate(items) if item["kind"] == b"----"
                        and item["name"] == "iTunSMPB"]
                if smpb:
                    dropped = {"last": smpb[-1] == len(items) - 1, "count": len(smpb)}
                    kept = [item for i, item in enumerate(items) if i not in smpb]
                    only_smpb = not kept
            parts.append(("ilst", [item["bytes"] for item in kept]))
        view.append(("meta", head, parts, only_smpb))
    return view, dropped


def check_udta(ctx):
    source, ours = ctx.input, ctx.ours
    theirs, _ = udta_view(source, source.udta())
    adds = appends_smpb(source)
    mine, dropped = udta_view(ours, ours.udta(), drop_smpb=adds)
    notes = []
    if adds:
        if not dropped or dropped["count"] != 1:
            raise CheckFailed(f"OURS has {dropped['count'] if dropped else 0} iTunSMPB items in "
                              f"moov/udta/meta/ilst, want the one ours adds")
        if not dropped["last"]:
            raise CheckFailed("the added iTunSMPB item is not the last item of the ilst")
        # A meta box (and udta) that only exists to hold the added item.
        theirs_metas = [v for v in (theirs or []) if isinstance(v, tuple)]
        if not theirs_metas:
            mine = [v for v in mine if not (isinstance(v, tuple) and v[3])]
            if theirs is None and not mine:
                mine = None
            notes.append("iTunSMPB added in a new udta/meta/ilst" if theirs is None
                         else "iTunSMPB added in a new meta/ilst")
        else:
            notes.append("iTunSMPB appended to the input's ilst")
    strip = lambda view: None if view is None else [  # noqa: E731
        v[:3] if isinstance(v, tuple) else v for v in view]
    if strip(mine) != strip(theirs):
        raise CheckFailed(f"moov/udta differs: {describe_udta_difference(strip(theirs), strip(mine))}")
    if theirs is not None:
        notes.insert(0, f"{source.udta().size} bytes")
    # The audio track's own udta and mdia/elng.
    for what, find in (("trak/udta", lambda f: f.child(f.trak, b"udta")),
                       ("mdia/elng", lambda f: f.child(f.trak.child(b"mdia"), b"elng"))):
        want, got = source.bytes_of(find(source)), ours.bytes_of(find(ours))
        if want is not None or got is not None:
            if want != got:
                raise CheckFailed(f"the audio track's {what} differs: input {want!r:.80}, OURS {got!r:.80}")
            notes.append(f"{what} equal")
    return "; ".join(notes) or "no udta in either"


def describe_udta_difference(theirs, mine):
    if theirs is None or mine is None:
        return f"input has {'no udta' if theirs is None else 'a udta'}, OURS {'none' if mine is None else 'one'}"
    for index, (a, b) in enumerate(zip(theirs, mine)):
        if a == b:
            continue
        if isinstance(a, tuple) and isinstance(b, tuple) and a[1] == b[1] and len(a[2]) == len(b[2]):
            for (kind_a, part_a), (kind_b, part_b) in zip(a[2], b[2]):
                if (kind_a, part_a) == (kind_b, part_b):
                    continue
                if kind_a == kind_b == "ilst":
                    for number, (x, y) in enumerate(zip(part_a, part_b)):
                        if x != y:
                            return (f"child {index} (meta), ilst item {number}: input {summary(x)} "
                                    f"!= OURS {summary(y)}")
                    return f"child {index} (meta): ilst has {len(part_a)} items in the input, {len(part_b)} in OURS"
                return f"child {index} (meta): input {summary(part_a)} != OURS {summary(part_b)}"
        return f"child {index}: input {summary(a)} != OURS {summary(b)}"
    return f"input has {len(theirs)} children, OURS {len(mine)}"


def summary(view):
    if isinstance(view, bytes):
        return f"{view[4:8]!r} ({len(view)} bytes, {view[8:40]!r}...)"
    _, head, parts, *_ = view
    return f"meta (version/flags {head!r}, parts {[(k, len(v)) for k, v in parts]})"


def keys_metas(file):
    """{path: [(key, [(type, locale, value)])]} of every keys-based meta box (hdlr mdta)."""
    found = {}
    for path, meta in mp4box.metadata_boxes(file.data, file.boxes):
        if mp4box.meta_handler(file.data, meta) != b"mdta":
            continue
        parts = {c.kind: c for c in mp4box.meta_children(file.data, meta)}
        keys = mp4box.keys_entries(file.data, parts[b"keys"]) if b"keys" in parts else []
        values = []
        for item in mp4box.ilst_items(file.data, parts[b"ilst"]) if b"ilst" in parts else []:
            index = struct.unpack(">I", item["kind"])[0]
            key = keys[index - 1] if 0 < index <= len(keys) else ("?", f"#{index}")
            values.append((key, item["data"]))
        layout = "FullBox" if mp4box.is_full_box_meta(file.data, meta) else "plain container"
        found[path] = {"keys": keys, "values": values, "layout": layout}
    return found


def check_keys(ctx):
    theirs, mine = keys_metas(ctx.input), keys_metas(ctx.ours)
    for path, want in theirs.items():
        got = mine.get(path)
        if got is None:
            raise CheckFailed(f"OURS has no keys-based {path} (it has {sorted(mine) or 'none'})")
        if got["keys"] != want["keys"]:
            raise CheckFailed(f"{path}/keys: input {want['keys']}, OURS {got['keys']}")
        if got["values"] != want["values"]:
            pairs = list(zip(want["values"], got["values"]))
            first = next(((a, b) for a, b in pairs if a != b), None)
            raise CheckFailed(f"{path}/ilst values differ: input {first[0] if first else want['values']} "
                              f"!= OURS {first[1] if first else got['values']}")
        if got["layout"] != want["layout"]:
            raise CheckFailed(f"{path}: input meta is a {want['layout']}, OURS a {got['layout']}")
    extra = [p for p in mine if p not in theirs]
    if extra:
        raise CheckFailed(f"OURS has keys-based meta boxes the input has not: {extra}")
    return "; ".join(f"{p}: {len(v['keys'])} keys ({v['layout']})" for p, v in theirs.items())


def covr_images(file):
    images = []
    for path, meta in mp4box.metadata_boxes(file.data, file.boxes):
        for ilst in (c for c in mp4box.meta_children(file.data, meta) if c.kind == b"ilst"):
            for item in mp4box.ilst_items(file.data, ilst):
                if item["kind"] == b"covr":
                    images += [(path, data_type, value) for data_type, _, value in item["data"]]
    return images


def check_cover_art(ctx):
    theirs, mine = covr_images(ctx.input), covr_images(ctx.ours)
    if len(mine) != len(theirs):
        raise CheckFailed(f"OURS has {len(mine)} covr images, the input {len(theirs)}")
    for index, (a, b) in enumerate(zip(theirs, mine)):
        if a != b:
            raise CheckFailed(f"covr image {index}: input ({a[0]}, type {a[1]}, {len(a[2])} bytes) != "
                              f"OURS ({b[0]}, type {b[1]}, {len(b[2])} bytes)")
    streams = expectations.ffprobe_json(ctx.ours.path, "-show_streams")["streams"]
    pictures = [s for s in streams if (s.get("disposition") or {}).get("attached_pic")]
    if len(pictures) != len(theirs):
        raise CheckFailed(f"ffprobe shows {len(pictures)} attached pictures in OURS, the input's covr "
                          f"has {len(theirs)} images")
    for index, (stream, (_, _, image)) in enumerate(zip(pictures, theirs)):
        result = run(["ffmpeg", "-nostdin", "-v", "error", "-i", ctx.ours.path, "-map",
                      f"0:{stream['index']}", "-c", "copy", "-f", "data", "-"])
        if result.returncode != 0 or result.stdout != image:
            raise CheckFailed(f"ffmpeg -map 0:{stream['index']} -c copy of OURS gives "
                              f"{len(result.stdout)} bytes (exit {result.returncode}), not the "
                              f"input's covr image {index} ({len(image)} bytes)")
    return f"{len(theirs)} images ({', '.join(s.get('codec_name', '?') for s in pictures)}), " \
           f"{sum(len(i) for _, _, i in theirs)} bytes"


def tref_chap_boxes(file):
    """Every tref/chap box of every track: [(Box, [track IDs])]."""
    found = []
    for trak in (c for c in file.moov.children if c.kind == b"trak"):
        for tref in (c for c in trak.children if c.kind == b"tref"):
            for ref in mp4box.parse_boxes(file.data, tref.payload, tref.end, tref):
                if ref.kind == b"chap":
                    count = (ref.end - ref.payload) // 4
                    found.append((ref, list(struct.unpack_from(f">{count}I", file.data, ref.payload))))
    return found


def chapter_track_samples(file):
    """[(bytes, duration)] of the samples of the chapter track the audio track's tref/chap
    names (walker), or None without one."""
    refs = [ids for ref, ids in tref_chap_boxes(file) if ref.parent.parent is file.trak]
    if not refs or not refs[0]:
        return None
    for trak in (c for c in file.moov.children if c.kind == b"trak"):
        if mp4box.track_id(file.data, trak) == refs[0][0]:
            return [(bytes(file.data[o:o + s]), d) for o, s, d in mp4box.table_samples(file.data, trak)]
    return None


def hidden_copy(file, work, label, kinds):
    """A copy of the file with the boxes found by `kinds` renamed 'free' (same size), so
    that FFmpeg reads the chapters from the other source only: FFmpeg 5.1 reads both the
    QuickTime chapter track a tref/chap names and the Nero udta/chpl box, and
    -ignore_chapters drops both."""
    data = bytearray(file.data)
    for box in kinds(file):
        data[box.offset + 4:box.offset + 8] = b"free"
    path = os.path.join(work, f"{label}-{os.path.basename(file.path)}")
    with open(path, "wb") as f:
        f.write(data)
    return path


def check_chapters(ctx):
    theirs, mine = chapters(ctx.input.path), chapters(ctx.ours.path)
    if theirs != mine:
        raise CheckFailed(f"ffprobe -show_chapters: input {theirs} != OURS {mine}")
    # Each source alone: the chapter track (chpl hidden) and the Nero chpl (tref/chap hidden).
    views = {}
    for label, kinds in (("track", lambda f: [b for b in mp4box.walk(f.boxes) if b.kind == b"chpl"]),
                         ("chpl", lambda f: [ref for ref, _ in tref_chap_boxes(f)])):
        a = chapters(hidden_copy(ctx.input, ctx.work, "input-" + label, kinds))
        b = chapters(hidden_copy(ctx.ours, ctx.work, "ours-" + label, kinds))
        if a != b:
            raise CheckFailed(f"ffprobe -show_chapters from the {label} alone: input {a} != OURS {b}")
        views[label] = len(a)
    samples_theirs, samples_mine = chapter_track_samples(ctx.input), chapter_track_samples(ctx.ours)
    if samples_theirs != samples_mine:
        raise CheckFailed(f"chapter track samples [(bytes, duration)] (walker): input "
                          f"{samples_theirs} != OURS {samples_mine}")
    if not theirs:
        return "none in either"
    return (f"{len(theirs)} chapters; from the chapter track alone {views['track']}, from chpl "
            f"alone {views['chpl']}; chapter track samples equal "
            f"({len(samples_theirs) if samples_theirs else 0})")


def atomicparsley_items(program, path):
    result = run([program, path, "-t"])
    text = result.stdout.decode("utf-8", "replace").lstrip("\ufeff")
    if result.returncode != 0:
        raise CheckFailed(f"AtomicParsley {path} -t exited {result.returncode}: "
                          f"{(text + result.stderr.decode(errors='replace')).strip()[:200]}")
    return [line for line in text.splitlines() if line.strip()]


def check_atomicparsley(ctx):
    program = os.environ.get("ATOMICPARSLEY", shutil.which("AtomicParsley") or "")
    if not program:
        raise CheckFailed("AtomicParsley is not installed and could not be installed: "
                          + os.environ.get("ATOMICPARSLEY_MISSING", "apt-get install -y atomicparsley failed"))
    theirs = atomicparsley_items(program, ctx.input.path)
    mine = atomicparsley_items(program, ctx.ours.path)
    if appends_smpb(ctx.input):
        added = [line for line in mine if line.startswith('Atom "----" [com.apple.iTunes;iTunSMPB]')]
        if len(added) != 1:
            raise CheckFailed(f"AtomicParsley lists {len(added)} iTunSMPB items in OURS, want 1")
        mine = [line for line in mine if line not in added]
    if theirs != mine:
        first = next((f"{a!r} != {b!r}" for a, b in zip(theirs, mine) if a != b),
                     f"{len(theirs)} items vs {len(mine)}")
        raise CheckFailed(f"AtomicParsley -t: input vs OURS: {first}")
    return f"{len(theirs)} items"


def seconds_of_edits(file):
    movie, media = file.timescales()
    return [(Fraction(d, movie), Fraction(t, media) if t != -1 else -1, ri, rf)
            for d, t, ri, rf in file.edits()]


def check_gapless(ctx):
    source, ours = ctx.input, ctx.ours
    notes = []
    if seconds_of_edits(source) != seconds_of_edits(ours):
        raise CheckFailed(f"elst in seconds: input {source.edits()} (timescales {source.timescales()}) "
                          f"!= OURS {ours.edits()} (timescales {ours.timescales()})")
    theirs, mine = smpb_items(source), smpb_items(ours)
    if theirs:
        if [i["bytes"] for i in mine] != [i["bytes"] for i in theirs]:
            raise CheckFailed(f"the input's iTunSMPB item(s) {[i['data'] for i in theirs]} are not "
                              f"kept as they are in OURS: {[i['data'] for i in mine]}")
        notes.append("the input's iTunSMPB kept, none added")
    elif priming(source):
        want, (prime, padding, count, total) = expected_smpb(source)
        if len(mine) != 1:
            raise CheckFailed(f"OURS has {len(mine)} iTunSMPB items, want 1 (priming {prime})")
        item = mine[0]
        if item["mean"] != "com.apple.iTunes" or len(item["data"]) != 1 or item["data"][0][0] != 1:
            raise CheckFailed(f"OURS' iTunSMPB item: mean {item['mean']!r}, data {item['data']} "
                              f"(want com.apple.iTunes and one UTF-8 data)")
        got = item["data"][0][2].decode("utf-8", "replace")
        if got != want:
            raise CheckFailed(f"OURS' iTunSMPB {got!r} != {want!r} (priming {prime}, padding {padding}, "
                              f"count {count}; stts total {total})")
        notes.append(f"iTunSMPB priming {prime}, padding {padding}, count {count}")
    elif mine:
        raise CheckFailed(f"OURS has an iTunSMPB item but the input shows no priming: {mine[0]['data']}")
    fields = lambda path: (  # noqa: E731
        {f"format.{k}": v for k, v in expectations.ffprobe_json(path, "-show_format")["format"].items()
         if k in ("start_time", "duration")},
        {f"stream.{k}": v for k, v in expectations.ffprobe_json(
            path, "-select_streams", "a:0", "-show_streams")["streams"][0].items()
         if k in ("start_time", "duration")})
    ref_format, ref_stream = fields(ctx.ref)
    our_format, our_stream = fields(ours.path)
    for key, value in {**ref_stream, **ref_format}.items():
        got = {**our_stream, **our_format}.get(key)
        if got != value:
            raise CheckFailed(f"ffprobe {key}: REF {value}, OURS {got}")
    notes.append(f"start {ref_stream.get('stream.start_time')}, duration {ref_stream.get('stream.duration')}")
    return "; ".join(notes)


def check_no_metadata(ctx):
    if ctx.bare_error:
        raise CheckFailed(ctx.bare_error)
    bare = File(ctx.bare)
    found = [b.path for b in mp4box.walk(bare.boxes) if b.kind in (b"udta", b"meta")]
    if found:
        raise CheckFailed(f"OURS (--no-metadata) still has {', '.join(found)}")
    tags = {k: v for k, v in format_tags(ctx.bare).items() if k not in FTYP_TAGS}
    if tags:
        raise CheckFailed(f"ffprobe shows format tags besides the ftyp ones: {tags}")
    facts, ref = expectations.probe(ctx.bare), expectations.probe(ctx.ref)
    if facts["chapters"]:
        raise CheckFailed(f"ffprobe still shows chapters: {facts['chapters']}")
    if facts["codec_types"] != ["audio"]:
        raise CheckFailed(f"streams {facts['codec_types']}, want one audio stream")
    expectations.compare_packets(ref["packets"], ref["side_data"], facts, "REF")
    return f"{len(facts['packets'])} packets as REF"


def check_probe_chapters(ctx):
    result = run([ctx.extract, "probe", "--json", ctx.input.path])
    if result.returncode != 0:
        raise CheckFailed(f"probe --json exited {result.returncode}: "
                          f"{result.stderr.decode(errors='replace')[:200]}")
    listed = json.loads(result.stdout).get("chapters")
    if not isinstance(listed, list):
        raise CheckFailed("probe --json has no \"chapters\" list")
    theirs = chapters(ctx.input.path)
    if len(listed) != len(theirs):
        raise CheckFailed(f"probe lists {len(listed)} chapters, ffprobe {len(theirs)}: {listed} vs {theirs}")
    for index, (mine, (start, _, title)) in enumerate(zip(listed, theirs)):
        if mine.get("title") != title:
            raise CheckFailed(f"chapter {index}: title {mine.get('title')!r}, ffprobe {title!r}")
        if not isinstance(mine.get("start"), (int, float)) or abs(mine["start"] - float(start)) > 0.001:
            raise CheckFailed(f"chapter {index}: start {mine.get('start')!r}, ffprobe {start} (more than 1 ms off)")
    return f"{len(theirs)} chapters"


# --- Driver ------------------------------------------------------------------------------

class Context:
    pass


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    extract, fixture, work = sys.argv[1:4]
    options = sys.argv[4:]
    name = os.path.basename(fixture)
    ctx = Context()
    ctx.extract = extract
    ctx.work = work
    ctx.input = File(fixture)
    ours = os.path.join(work, "OURS.m4a")
    ctx.bare = os.path.join(work, "BARE.m4a")
    ctx.ref = os.path.join(work, "REF.m4a")
    checks = [("tags", check_tags), ("times", check_times), ("udta", check_udta)]
    if keys_metas(ctx.input):
        checks.append(("keys", check_keys))
    if covr_images(ctx.input):
        checks.append(("cover art", check_cover_art))
    checks.append(("chapters", check_chapters))
    if ctx.input.brand() != b"qt  ":
        checks.append(("AtomicParsley", check_atomicparsley))
    checks += [("gapless", check_gapless), ("--no-metadata", check_no_metadata),
               ("probe chapters", check_probe_chapters)]

    setup_error = None
    result = run([extract, fixture, ours])
    if result.returncode != 0 or not os.path.exists(ours):
        setup_error = (f"extract-audio exited {result.returncode}: "
                       f"{result.stderr.decode(errors='replace')[:300]}")
    else:
        ctx.ours = File(ours)
    result = run([extract, "--no-metadata", fixture, ctx.bare])
    ctx.bare_error = None if result.returncode == 0 and os.path.exists(ctx.bare) else \
        f"extract-audio --no-metadata exited {result.returncode}: {result.stderr.decode(errors='replace')[:300]}"
    try:
        expectations.make_reference(fixture, ctx.ref, options)
    except CheckFailed as failure:
        setup_error = setup_error or f"reference ffmpeg failed: {failure}"

    for label, function in checks:
        check = f"{label} {name}"
        if setup_error and function is not check_probe_chapters:
            print(f"FAIL\t{check}\t{setup_error}")
            continue
        try:
            note = function(ctx)
            print(f"ok\t{check}\t{note or ''}")
        except CheckFailed as failure:
            print(f"FAIL\t{check}\t{failure}")
        except Exception as error:                      # a bug here must not look like a pass
            print(f"FAIL\t{check}\tcheck error: {type(error).__name__}: {error}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
