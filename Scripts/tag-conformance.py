#!/usr/bin/python3
"""`extract-audio tag` over every fixture and every file of the real-world corpus, judged by
independent oracles only (ffprobe, mutagen, and a box walker written here over
Scripts/mp4box.py's Box), never by our own parser. Issue 22: "Packets identical (ffprobe CRC)
before and after, on every fixture and every corpus file we don't refuse by class."

Inputs: every file under Fixtures/ (its subfolders too: corrupt/, damaged/, fuzz/, keyframes/…)
but the expectation files (.json, .keys, .md, .txt), and every file of the corpus,
`../shared/corpus/` beside the project ($CORPUS_DIR overrides; MANIFEST.tsv and README.md
aside). Each is copied (writable) into a temporary folder and edited five times:

  a. `tag --json --set title=… --set artist=… --set track=3/12 --cover small.jpg --cover
     small.png` (both images made by FFmpeg here);
  b. `tag --json --set title=… --set artist=… --set track=4/12`, which must be written in
     place when the padding after the `moov` the first edit left can hold the new `moov`;
  c. `tag --json --remove-all --remove-cover`;
  d. `tag --json --chapters-from LIST`, LIST an mp4chaps list written here: three chapters
     at 0, 1.5 and 3.25 s, or, for a file whose longest audio/video stream (ffprobe) is
     shorter than 3.5 s, two at 0 and half that duration (a refusal for a chapter after the
     end must not happen);
  e. `tag --json --remove-chapters`.

After each of a–c that succeeds, against the ORIGINAL file:
  - packets: ffprobe's packets of every stream (stream, pts, dts, duration, flags, CRC-32 of
    the data) identical;
  - mutagen: the tags it reads are exactly the original's with the values set (a, b), or
    none but the original's iTunSMPB (c: gapless information is not a tag the user sees and
    --remove-all keeps it); covers the same bytes and formats;
  - boxes: every top-level box before the original `moov` byte-identical, every one after its
    padding byte-identical and in order (in a `moof`/`mfra`, a tfhd base_data_offset or tfra
    moof_offset at or past the old padding's end moved by exactly the growth; a second `moov`
    turned into `free`, its payload kept), the trailing bytes after the last box kept;
    exactly one `moov`, whose children but the first `udta` are the original's byte for
    byte, but for chunk offsets (stco/co64) and stbl/saio offsets (absolute, ISO/IEC 14496-12
    § 8.7.9) at or past the padding's end, moved by exactly the growth;
  - method: `in_place` exactly when the `free` box right after the old `moov` can hold the
    new `moov` (the same size, or 8 bytes to spare), `rewrite` otherwise; a rewrite leaves a
    `free` box after `moov` of at least the new `moov`'s size plus 4 KiB; an in-place edit
    keeps the file's size.

After d and e, against the ORIGINAL file:
  - ffprobe opens it as it opened the original: the same exit status, no error line (-v
    error) the original did not give ("error reading header" where it read it);
  - packets as above, each stream named by its track ID (removing a chapter track
    renumbers the streams), but for the chapter text tracks (text/sbtl tracks another
    track names in tref/chap, found here by walking moov) of either file;
  - every original track but an old chapter text track is still there with its
    disposition:attached_pic (chapter artwork is an attached picture);
  - ffprobe -show_chapters lists exactly the new chapters (start to the millisecond,
    title) after d, none after e; mutagen's MP4().chapters (from chpl) the same, its start
    corrected for mutagen 1.46's misreading (below); where mutagen cannot read the file or
    cannot see moov/udta, ffprobe's answer stands alone, and mutagen's where ffprobe cannot
    open the original (noted);
  - boxes: every top-level box of the original but moov/free/skip still there, in order,
    byte for byte (a moof/mfra with its offsets moved by how far it moved), and no other
    box but at most one new `mdat` under 64 KiB (the chapter samples), moov and padding.

A refusal must be of a documented class, decided from the file by the walker here (never by
its name), and leave the file byte for byte as it was (SHA-256) with nothing beside it:
  - 65 (damaged): a top-level box runs past the end of the file or has an impossible size, no
    top-level `moov`, a box inside moov/trak/mdia/minf/stbl/edts/dinf/mvex that does not fit
    its parent, or an stco/co64 whose entries run past the box;
  - 69 (unsupported): a `moov` over 1 GiB, more than 2^21 top-level boxes, or a 32-bit chunk
    offset the growth would push past 2^32.
Any other refusal, or one the walker finds no reason for, fails.

Prints one line per input and step, `ok`/`FAIL` with its time, and `N passed, M failed`
last; exits 1 on any failure. Inputs run two at a time. EXTRACT_AUDIO names a built binary
(else a release build is made); TAG_FILES, comma-separated globs on the input names, runs
part of it.
"""
import fnmatch
import hashlib
import json
import math
import os
import re
import shutil
import struct
import sys
import tempfile
import time

sys.dont_write_bytecode = True
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Scripts"))
import mp4box  # noqa: E402
from oracle import CORPUS, FIXTURES  # noqa: E402
from oracle.binary import extract_audio_and_corpus  # noqa: E402
from oracle.ffprobe import ffprobe, format_tags, packets as ffprobe_packets  # noqa: E402
from oracle.report import Report, Tally, fail_before_start, print_reports  # noqa: E402
from oracle.run import run as oracle_run  # noqa: E402

try:
    from mutagen.mp4 import MP4, MP4Cover, MP4FreeForm
except ImportError:  # pragma: no cover
    sys.exit(fail_before_start("mutagen is missing (/usr/bin/python3 -m pip install mutagen, "
                               "or apt-get install python3-mutagen)"))

NOT_INPUTS = (".json", ".keys", ".md", ".txt", ".tsv", ".list", ".jpg", ".png")
# Boxes the walker descends into: moov's track structure and movie fragments, and (to find
# damage the tag writer must not copy back) moov/udta and its first meta. Everything else
# (stsd, ilst…) is compared as opaque bytes.
WALKED = {b"moov", b"trak", b"mdia", b"minf", b"stbl", b"edts", b"dinf", b"mvex", b"moof", b"traf", b"mfra"}
PADDING = {b"free", b"skip"}
SMPB = "----:com.apple.iTunes:iTunSMPB"
STEPS = {
    "a": ["--set", "title=Tag conformance ✓", "--set", "artist=Ärtist", "--set", "track=3/12",
          "--cover", "{jpeg}", "--cover", "{png}"],
    "b": ["--set", "title=Second edit", "--set", "artist=Another", "--set", "track=4/12"],
    "c": ["--remove-all", "--remove-cover"],
    "d": ["--chapters-from", "{chapters}"],
    "e": ["--remove-chapters"],
}
STEP_NAMES = {"a": "(a) rewrite: --set title, artist, track, --cover JPEG, PNG",
              "b": "(b) second edit: --set title, artist, track",
              "c": "(c) --remove-all --remove-cover",
              "d": "(d) --chapters-from LIST",
              "e": "(e) --remove-chapters"}
# The chapters step d writes: (start in ms, title); shorter files get two (chapter_list).
CHAPTERS = [(0, "Intro"), (1500, "Mitte ✓"), (3250, "End")]
SET = {
    "a": {"©nam": ["Tag conformance ✓"], "©ART": ["Ärtist"], "trkn": [[3, 12]]},
    "b": {"©nam": ["Second edit"], "©ART": ["Another"], "trkn": [[4, 12]]},
}

tally = Tally()


def run(*args, **kw):
    kw.setdefault("timeout", 300)
    return oracle_run(*args, **kw)


# --- The box walker -------------------------------------------------------------------

Damage = mp4box.Damage


def descend(data, box, siblings):
    """Where mp4box.parse_boxes reads the children of a box here: WALKED only, and moov/udta
    with its first meta."""
    parent = box.parent
    if box.kind in WALKED and (parent is None or parent.kind in WALKED):
        return box.payload
    if box.kind == b"udta" and parent is not None and parent.kind == b"moov":
        # The tags' home: what the tag writer copies back must be readable to the end.
        return box.payload
    if box.kind == b"meta" and parent is not None and parent.kind == b"udta" and not any(
            b.kind == b"meta" for b in siblings):
        # The first meta (the one with the tags): a full box in ISO files, a plain one
        # (hdlr first) in some QuickTime files.
        start = box.payload + (4 if mp4box.is_full_box_meta(data, box) else 0)
        if start > box.end:
            raise Damage(f"{parent.path}/meta at {box.offset}: too short")
        return start
    return None


def walk(data):
    """(top-level boxes, trailing bytes: fewer than 8 after the last box), or raises Damage
    (a box that runs past the end or has an impossible size)."""
    boxes = mp4box.parse_boxes(data, 0, len(data), trailing_ok=True, descend=descend)
    return boxes, data[boxes[-1].end if boxes else 0:]


def offset_fields(data, box):
    """[(position, width)] of the absolute offsets inside a box: stco/co64 entries and a
    stbl/saio's offsets (moov), a tfhd's base_data_offset and tfra moof_offsets (fragments).
    Raises Damage when the entries run past the box."""
    p = box.payload
    if box.kind not in (b"stco", b"co64", b"saio", b"tfhd", b"tfra"):
        return []
    if box.end - p < 8:
        raise Damage(f"{box.path} at {box.offset}: too short")
    version, flags = data[p], int.from_bytes(data[p + 1:p + 4], "big")
    fields = []
    if box.kind in (b"stco", b"co64"):
        width = 8 if box.kind == b"co64" else 4
        count = mp4box.u32(data, p + 4)
        if p + 8 + count * width > box.end:
            raise Damage(f"{box.path} at {box.offset}: {count} entries run past the box")
        fields = [(p + 8 + i * width, width) for i in range(count)]
    elif box.kind == b"saio" and box.parent is not None and box.parent.kind == b"stbl":
        pos = p + 4 + (8 if flags & 1 else 0)
        count = mp4box.u32(data, pos)
        width = 8 if version == 1 else 4
        if pos + 4 + count * width > box.end:
            raise Damage(f"{box.path} at {box.offset}: {count} entries run past the box")
        fields = [(pos + 4 + i * width, width) for i in range(count)]
    elif box.kind == b"tfhd" and flags & 1:
        fields = [(p + 8, 8)]
    elif box.kind == b"tfra":
        width = 8 if version == 1 else 4
        sizes = mp4box.u32(data, p + 8)
        tail = ((sizes >> 4) & 3) + ((sizes >> 2) & 3) + (sizes & 3) + 3
        count = mp4box.u32(data, p + 12)
        step = 2 * width + tail
        if p + 16 + count * step > box.end:
            raise Damage(f"{box.path} at {box.offset}: {count} entries run past the box")
        fields = [(p + 16 + i * step + width, width) for i in range(count)]
    return fields


def shifted(data, box, growth, threshold):
    """The bytes of `box` with every absolute offset at or past `threshold` moved by growth
    (and, inside moov, a size of 0, "to the end of the parent", as the size it stands for:
    the tag writer states it, since it may add a box after it)."""
    out = bytearray(data[box.offset:box.end])
    if box.parent is not None and out[:4] == b"\0\0\0\0" and box.size < 1 << 32:
        out[:4] = box.size.to_bytes(4, "big")
    for b in mp4box.walk([box]):
        for pos, width in offset_fields(data, b):
            value = int.from_bytes(data[pos:pos + width], "big")
            if value >= threshold:
                value += growth
                if not 0 <= value < 1 << (8 * width):
                    raise OverflowError(f"{b.path}: offset moves past {8 * width} bits")
                out[pos - box.offset:pos - box.offset + width] = value.to_bytes(width, "big")
    return bytes(out)


def movie_layout(data):
    """(boxes, trailing, index of the first moov, end of its padding: the old moov and the
    free/skip boxes right after it)."""
    boxes, trailing = walk(data)
    index = next((i for i, b in enumerate(boxes) if b.kind == b"moov"), None)
    if index is None:
        raise Damage("no top-level moov")
    after = index + 1
    while after < len(boxes) and boxes[after].kind in PADDING:
        after += 1
    end = boxes[after].offset if after < len(boxes) else boxes[-1].end
    return boxes, trailing, index, after, end


def refusal_class(data):
    """What the walker says a refusal may be: (65, reason), (69, reason) or (None, None)."""
    try:
        boxes, _, index, _, _ = movie_layout(data)
        for b in mp4box.walk(boxes):
            offset_fields(data, b)
    except Damage as error:
        return 65, str(error)
    moov = boxes[index]
    if moov.size > 1 << 30:
        return 69, "moov over 1 GiB"
    if len(boxes) > 1 << 21:
        return 69, "more than 2^21 top-level boxes"
    # The growth is at most the new moov twice plus 4 KiB (the covers and tags are small).
    worst = 2 * moov.size + 2 * 65536 + 4096
    for b in mp4box.walk([moov]):
        if b.kind == b"stco" and any(int.from_bytes(data[p:p + 4], "big") + worst >= 1 << 32
                                     for p, _ in offset_fields(data, b)):
            return 69, "a 32-bit chunk offset near 2^32"
    return None, None


# --- Oracles ----------------------------------------------------------------------------

def packets(path):
    """(exit status, one line per packet) from ffprobe: every stream's packets but those of
    the attached pictures FFmpeg makes of covers, each stream named by its track ID."""
    r = ffprobe_packets(path, timeout=300,
                        entries="packet=stream_index,pts,dts,duration,flags,data_hash:stream=index,id"
                                ":stream_disposition=attached_pic")
    try:
        found = json.loads(r.stdout or b"{}")
    except ValueError:
        return r.returncode, [r.stdout.decode(errors="replace")]
    covers = {s["index"] for s in found.get("streams", []) if s.get("disposition", {}).get("attached_pic")}
    ids = {s["index"]: s.get("id") for s in found.get("streams", [])}
    return r.returncode, [f"{ids.get(p.get('stream_index'))} {p.get('pts')} {p.get('dts')} {p.get('duration')} "
                          f"{p.get('flags')} {p.get('data_hash')}"
                          for p in found.get("packets", []) if p.get("stream_index") not in covers]


def probe_streams(path):
    """(exit status, the error lines, {track ID: attached_pic}, [(start ms, title)] chapters,
    the longest audio or video stream in seconds (from its start), else the format's duration) from ffprobe;
    streams without a track ID (the covers FFmpeg makes of covr: ID 0, which no track has)
    left out. The error lines lose their "@ 0x…" (an address that differs run to run) and
    the file offset in "stream N, offset 0x…: partial file" (a truncated file's missing
    sample: its offset moves with the growth; the packets check guards the data)."""
    r = ffprobe(path, "-show_chapters", "-show_entries",
                "stream=index,id,codec_type,start_time,duration:stream_disposition=attached_pic:format=duration",
                timeout=300)
    try:
        found = json.loads(r.stdout or b"{}")
    except ValueError:
        found = {}
    streams = {}
    for s in found.get("streams", []):
        track = _track_id(str(s.get("id")))
        if track:
            streams[track] = s.get("disposition", {}).get("attached_pic")
    def milliseconds(text):
        # FFmpeg prints no start_time for a start it cannot place (a Nero chapter 2^63 units
        # of 100 ns in: start is INT64_MIN, AV_NOPTS_VALUE): None, compared as it is.
        try:
            value = float(text)
        except (TypeError, ValueError):
            return None
        return round(value * 1000) if math.isfinite(value) else None
    chapters = [(milliseconds(c.get("start_time")), c.get("tags", {}).get("title"))
                for c in found.get("chapters", [])]
    errors = {re.sub(r"offset 0x[0-9a-f]+", "offset …", re.sub(r" @ 0x[0-9a-f]+", "", line))
              for line in r.stderr.decode(errors="replace").splitlines() if line.strip()}
    best = 0.0
    for s in found.get("streams", []):
        if s.get("codec_type") in ("audio", "video"):
            # How long the stream plays: FFmpeg's duration of a fragmented track whose tfdt
            # starts late runs from 0 to its end, so a later start is taken off (this tool
            # presents such a track from 0, as its remux does).
            try:
                start = max(0.0, float(s.get("start_time") or 0))
                best = max(best, float(s.get("duration")) - start)
            except (TypeError, ValueError):
                pass
    if best == 0.0:
        try:
            best = float(found.get("format", {}).get("duration"))
        except (TypeError, ValueError):
            pass
    return r.returncode, errors, streams, chapters, best


def chapter_list(seconds):
    """The chapters of step d for a file `seconds` long: CHAPTERS when they fit (with half a
    second to spare), else two at 0 and half the duration (whole milliseconds, rounded down)."""
    if seconds * 1000 >= CHAPTERS[-1][0] + 250:
        return list(CHAPTERS)
    half = int(seconds * 1000) // 2
    return [(0, "Erste Hälfte"), (half, "Zweite")] if half > 0 else [(0, "Einzig")]


def mp4chaps(chapters):
    return "".join(f"{ms // 3600000:02}:{ms // 60000 % 60:02}:{ms // 1000 % 60:02}.{ms % 1000:03} {title}\n"
                   for ms, title in chapters)


def chapter_tracks(data):
    """The track IDs of the chapter text tracks in the file's first moov: text/sbtl tracks
    another track names in its tref/chap (what the tag command removes), found by the walker
    here. Empty when the file does not walk."""
    try:
        boxes, _, index, _, _ = movie_layout(data)
    except Damage:
        return set()
    handlers, named = {}, set()

    def kids(start, end):
        return [(box.kind, box.payload, box.end) for box in mp4box.boxes_of(data, start, end)]

    for trak in boxes[index].children:
        if trak.kind != b"trak":
            continue
        track_id, handler = None, None
        for kind, p, end in kids(trak.payload, trak.end):
            if kind == b"tkhd" and end - p >= 24:
                track_id = mp4box.u32(data, p + (20 if data[p] == 1 else 12))
            elif kind == b"tref":
                for k, q, e in kids(p, end):
                    if k == b"chap":
                        named |= {mp4box.u32(data, x) for x in range(q, e - 3, 4)}
            elif kind == b"mdia":
                for k, q, e in kids(p, end):
                    if k == b"hdlr" and e - q >= 12:
                        handler = data[q + 8:q + 12]
        if track_id is not None:
            handlers[track_id] = handler
    return {t for t in named if handlers.get(t) in (b"text", b"sbtl")}


def mutagen_chapters(path):
    """mutagen's chapters (chpl) as [(start ms, title)], or ("error", text). mutagen 1.46
    (_parse_chpl) divides chpl's start, in 100 ns units, by 10,000 and then by mvhd's
    timescale, as if it counted timescale units of a millisecond; undo exactly that error:
    its start x timescale / 1000 is the start in seconds."""
    try:
        chapters = MP4(path).chapters
    except Exception as error:  # any mutagen failure is the oracle's answer
        return ("error", f"{type(error).__name__}: {error}")
    if chapters is None:
        return []
    scale = getattr(chapters, "_timescale", None)
    if not scale:
        return ("error", "mutagen found no mvhd timescale")
    return [(round(c.start * scale / 1000 * 1000), c.title) for c in chapters]


def mutagen_blind(data):
    """Why mutagen (1.46) cannot see moov/udta, or None: it takes every `meta` for a FullBox,
    so a QuickTime (plain) meta in moov or a trak before moov/udta, as iPhones write, makes it
    misread that box and stop reading moov's children (it finds no tags in the original)."""
    try:
        boxes, _, index, _, _ = movie_layout(data)
    except Damage:
        return None
    moov = boxes[index]
    for child in moov.children:
        if child.kind == b"udta":
            return None
        for meta in [child] + list(child.children):
            if meta.kind == b"meta" and not mp4box.is_full_box_meta(data, meta):
                return f"a QuickTime (plain) {meta.path} before moov/udta"
    return None


def mutagen_tags(path):
    """mutagen's tags as comparable values, or ("error", text)."""
    try:
        tags = MP4(path).tags
    except Exception as error:  # any mutagen failure is the oracle's answer, compared below
        return ("error", f"{type(error).__name__}: {error}")
    out = {}
    for key, values in (tags or {}).items():
        def conv(v):
            if isinstance(v, MP4Cover):
                return ["cover", "JPEG" if v.imageformat == MP4Cover.FORMAT_JPEG else "PNG",
                        hashlib.sha256(bytes(v)).hexdigest()]
            if isinstance(v, MP4FreeForm):
                return ["freeform", v.dataformat, bytes(v).hex()]
            if isinstance(v, tuple):
                return list(v)
            return v
        out[key] = [conv(v) for v in values] if isinstance(values, list) else conv(values)
    return out


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


# --- One input --------------------------------------------------------------------------

def compare_boxes(orig, new):
    """Problems found comparing the edited file with the original (empty: none), and facts
    about the edited file: (problems, growth, new moov size, padding after it)."""
    boxes, trailing, index, after, end = movie_layout(orig)
    nboxes, ntrailing = walk(new)
    moov = boxes[index]
    # The edited region starts with the free/skip boxes right before the old moov (what
    # in-place edits leave there; a rewrite gives them back), then the moov and its padding.
    first = index
    while first > 0 and boxes[first - 1].kind in PADDING:
        first -= 1
    lead = boxes[first].offset
    problems = []
    if new[:lead] != orig[:lead]:
        problems.append("bytes before the moov and the padding before it changed")
    start = next((i for i, b in enumerate(nboxes) if b.offset == lead), None)
    if start is None:
        return [f"no box starts where the old moov's region did ({lead})"], 0, 0, None
    stop = start
    while stop < len(nboxes) and nboxes[stop].kind in PADDING | {b"moov"}:
        stop += 1
    region = nboxes[start:stop]
    moovs = [b for b in nboxes if b.kind == b"moov"]
    if len(moovs) != 1 or moovs[0] not in region:
        return problems + [f"{len(moovs)} moov boxes, not one in place"], 0, 0, None
    nmoov = moovs[0]
    k = region.index(nmoov)
    padding = region[k + 1] if k + 1 < len(region) and region[k + 1].kind == b"free" else None
    nend = nboxes[stop].offset if stop < len(nboxes) else (nboxes[-1].end if nboxes else 0)
    growth = nend - end
    # After the padding: the same boxes, moved by growth, their absolute offsets shifted.
    rest, nrest = boxes[after:], nboxes[stop:]
    if len(rest) != len(nrest) or any(a.kind != b.kind and a.kind != b"moov" for a, b in zip(rest, nrest)):
        problems.append(f"top-level boxes after moov: {[b.kind for b in rest]} became {[b.kind for b in nrest]}")
    else:
        for a, b in zip(rest, nrest):
            if a.kind == b"moov":
                if b.kind not in (b"moov", b"free") or orig[a.payload:a.end] != new[b.payload:b.end]:
                    problems.append(f"the second moov at {a.offset} is not kept as free")
            elif a.kind in (b"moof", b"mfra"):
                if shifted(orig, a, growth, end) != new[b.offset:b.end]:
                    problems.append(f"{a.kind.decode()} at {a.offset}: not the original with offsets moved by {growth}")
            elif orig[a.offset:a.end] != new[b.offset:b.end]:
                problems.append(f"{a.kind.decode('latin-1')} at {a.offset} (now {b.offset}) changed")
    if trailing != ntrailing:
        problems.append(f"trailing bytes {trailing.hex()} became {ntrailing.hex()}")

    def children_without_udta(data, box, shift):
        kids = list(box.children)
        first = next((c for c in kids if c.kind == b"udta"), None)
        parts = []
        for c in kids:
            if c is first:
                continue
            parts.append((c.kind, shifted(data, c, growth, end) if shift else bytes(data[c.offset:c.end])))
        return parts

    want = children_without_udta(orig, moov, True)
    got = children_without_udta(new, nmoov, False)
    if [k for k, _ in want] != [k for k, _ in got]:
        problems.append(f"moov's children {[k for k, _ in want]} became {[k for k, _ in got]}")
    else:
        for (kind, a), (_, b) in zip(want, got):
            if a != b:
                problems.append(f"moov/{kind.decode('latin-1')} differs from the original"
                                + (f" with its offsets moved by {growth}" if growth else ""))
    return problems, growth, nmoov.size, padding


def compare_outside_moov(orig, new):
    """Problems (empty: none) with the top-level boxes of a file after a chapter step: every
    box of the original but moov/free/skip still there in order, byte for byte (a moof/mfra
    with its absolute offsets past the old padding moved by how far it moved), and besides
    them only moov, free/skip and at most one new mdat under 64 KiB (the chapter samples)."""
    boxes, _, _, _, end = movie_layout(orig)
    nboxes, _ = walk(new)
    old = [b for b in boxes if b.kind not in PADDING | {b"moov"}]
    extra, problems, i = [], [], 0
    for b in nboxes:
        if b.kind in PADDING | {b"moov"}:
            continue
        if i < len(old) and old[i].kind == b.kind:
            a = old[i]
            want = orig[a.offset:a.end]
            if a.kind in (b"moof", b"mfra") and b.offset != a.offset:
                want = shifted(orig, a, b.offset - a.offset, end)
            if want == new[b.offset:b.end]:
                i += 1
                continue
        extra.append(b)
    if i < len(old):
        problems.append(f"{old[i].kind.decode('latin-1')} at {old[i].offset} (and {len(old) - i - 1} after it) "
                        "not found byte for byte")
    unexplained = [b for b in extra if b.kind != b"mdat" or b.size >= 65536] + [b for b in extra if b.kind == b"mdat"][1:]
    if unexplained:
        problems.append("new top-level boxes " + ", ".join(f"{b.kind.decode('latin-1')} at {b.offset} ({b.size} bytes)"
                                                           for b in unexplained))
    return problems


def check_chapter_step(step, work, orig_data, after, orig_packets, orig_chapter_ids, orig_probe, chapters):
    """Problems and notes for a chapter step (d, e) that succeeded. ffprobe must open the
    file as it opened the original: the same exit status and no error line the original did
    not give (damaged fixtures give some before any edit)."""
    problems, notes = [], []
    code, errors, streams, listed, _ = probe_streams(work)
    orig_streams = orig_probe[2]
    # A chapter track FFmpeg could not open the file for (Fixtures/fuzz/chapter-empty-edit-
    # 2e64.mp4: an empty edit of 2^64 - 2 ticks) is replaced by the edit: FFmpeg then opens
    # the file without an error, and has no packets of the original to compare with.
    repaired = orig_probe[0] != 0 and code == 0 and not errors
    if repaired:
        notes.append(f"ffprobe cannot open the original (exit {orig_probe[0]}) but opens the edit without an "
                     "error: its packets are not compared")
    elif code != orig_probe[0] or errors - orig_probe[1]:
        problems.append(f"ffprobe exit {orig_probe[0]} -> {code}: {'; '.join(sorted(errors - orig_probe[1]))[:200]}")
    ignored = orig_chapter_ids | chapter_tracks(after)

    def kept(lines):
        return [line for line in lines if _track_id(line.split(" ", 1)[0]) not in ignored]

    new_packets = packets(work)
    a_lines, b_lines = kept(orig_packets[1]), kept(new_packets[1])
    if not repaired and (a_lines != b_lines or new_packets[0] != orig_packets[0]):
        first = next((n for n, (x, y) in enumerate(zip(a_lines, b_lines)) if x != y), min(len(a_lines), len(b_lines)))
        problems.append(f"packets differ (exit {orig_packets[0]} -> {new_packets[0]}, {len(a_lines)} -> "
                        f"{len(b_lines)} lines but chapter tracks {sorted(ignored)}, first at {first})")
    for track, pic in sorted(orig_streams.items()):
        if track in orig_chapter_ids:
            continue
        if track not in streams:
            problems.append(f"track {track} is gone")
        elif streams[track] != pic:
            problems.append(f"track {track}: attached_pic {pic} -> {streams[track]}")
    want = chapters if step == "d" else []
    if orig_probe[0] != 0 and code != 0:
        # FFmpeg reads no header of this file, before or after: mutagen's answer stands alone.
        notes.append(f"ffprobe cannot open the original (exit {orig_probe[0]}): no chapters to read")
    elif listed != want:
        problems.append(f"ffprobe lists chapters {listed}, not {want}")
    got = mutagen_chapters(work)
    blind = mutagen_blind(after)
    if isinstance(got, tuple) or blind:
        notes.append(f"mutagen cannot read the chapters ({blind or got[1][:80]}): ffprobe's answer stands alone")
    elif got != want:
        problems.append(f"mutagen lists chapters {got}, not {want}")
    try:
        problems += compare_outside_moov(orig_data, after)
    except (Damage, OverflowError, ValueError, struct.error) as error:
        problems.append(f"walker: {error}")
    return problems, notes


def _track_id(text):
    try:
        return int(text, 16) if text.startswith("0x") else int(text)
    except ValueError:
        return None


def fits(padding, size):
    return padding is not None and padding.header_size == 8 and (size == padding.size or size + 8 <= padding.size)


def check_input(tool, label, path, tmp_root, images):
    report = Report(tally, label, digits=2)
    with report.guarded(tmp_root) as tmp:
        work = os.path.join(tmp, "file" + os.path.splitext(path)[1])
        shutil.copyfile(path, work)
        os.chmod(work, 0o644)
        orig = open(work, "rb").read()
        want_class, why = refusal_class(orig)
        orig_packets = packets(work)
        orig_tags = mutagen_tags(work)
        current = orig
        # The padding after the moov of the file as it is before each step.
        try:
            b, _, i, _, _ = movie_layout(orig)
            before_padding = b[i + 1] if i + 1 < len(b) and b[i + 1].kind == b"free" else None
        except Damage:
            before_padding = None
        orig_chapter_ids = chapter_tracks(orig)
        orig_probe = probe_streams(work)
        chapters = chapter_list(orig_probe[4])
        chapter_file = os.path.join(tmp_root, os.path.basename(tmp) + ".chapters.txt")
        with open(chapter_file, "w", encoding="utf-8") as f:
            f.write(mp4chaps(chapters))
        for step in ("a", "b", "c", "d", "e"):
            began = time.monotonic()
            args = [a.format(chapters=chapter_file, **images) for a in STEPS[step]]
            r = run(tool, "tag", "--json", *args, work)
            took = time.monotonic() - began
            name = STEP_NAMES[step]
            after = open(work, "rb").read()
            leftovers = sorted(set(os.listdir(tmp)) - {os.path.basename(work)})
            if r.returncode != 0:
                message = r.stderr.decode(errors="replace").strip()
                try:
                    message = json.loads(r.stdout)["error"]["message"]
                except (ValueError, KeyError, TypeError):
                    pass
                problems = []
                if r.returncode != want_class:
                    problems.append(f"exit {r.returncode} ({message[:200]}), but the file's class is "
                                    + (f"{want_class} ({why})" if want_class else "none: it must be edited"))
                if after != current:
                    problems.append("the refused file changed")
                if leftovers:
                    problems.append(f"left {leftovers} beside it")
                report.check(not problems, f"{name}: refused {r.returncode}", "; ".join(problems) or message[:160], took)
                continue
            problems, notes = [], []
            if leftovers:
                problems.append(f"left {leftovers} beside it")
            try:
                written = json.loads(r.stdout)["written"]
            except (ValueError, KeyError, TypeError):
                written = None
                problems.append(f"--json printed no 'written': {r.stdout[:200]!r}")
            if written == "none" and after == current and step == "c":
                # Nothing to remove (the earlier steps were refused): nothing written. Only
                # when the file has nothing --remove-all removes: no item but iTunSMPB (or,
                # where mutagen cannot read it, no title, artist or track for ffprobe).
                now = mutagen_tags(work)
                if isinstance(orig_tags, tuple):
                    left = {k: v for k, v in format_tags(work, timeout=300).items() if k in ("title", "artist", "track")}
                    if now != orig_tags or left:
                        problems.append(f"nothing written, but ffprobe reads {left} (mutagen: {str(now)[:80]})")
                elif now not in ({}, {k: v for k, v in orig_tags.items() if k == SMPB}):
                    problems.append(f"nothing written, but mutagen reads {sorted(now) if isinstance(now, dict) else now}")
                report.check(not problems, f"{name}: none, nothing to remove", "; ".join(problems), took)
                continue
            if step in ("d", "e"):
                if written == "none" and after == current and step == "e" and not chapter_tracks(after) \
                        and probe_streams(work)[3] == [] and mutagen_chapters(work) in ([], None):
                    report.check(not problems, f"{name}: none, nothing to remove", "; ".join(problems), took)
                    continue
                if want_class:
                    problems.append(f"edited, but the walker finds it class {want_class} ({why})")
                more, notes = check_chapter_step(step, work, orig, after, orig_packets, orig_chapter_ids,
                                                 orig_probe, chapters)
                report.check(not problems and not more, f"{name}: {written}", "; ".join(problems + more), took)
                for n in notes:
                    report.note(n)
                current = after
                continue
            if want_class:
                problems.append(f"edited, but the walker finds it class {want_class} ({why})")
            try:
                box_problems, growth, size, padding = compare_boxes(orig, after)
                problems += box_problems
                expected = "in_place" if fits(before_padding, size) else "rewrite"
                if written != expected:
                    problems.append(f"written {written}, expected {expected} (padding "
                                    f"{before_padding.size if before_padding else 'none'}, new moov {size})")
                if written == "in_place" and len(after) != len(current):
                    problems.append(f"in place, but the size went {len(current)} -> {len(after)}")
                if written == "rewrite" and (padding is None or padding.size < size + 4096):
                    problems.append(f"a rewrite left padding {padding.size if padding else 0} < moov {size} + 4096")
                before_padding = padding
            except (Damage, OverflowError, ValueError, struct.error) as error:
                problems.append(f"walker: {error}")
            new_packets = packets(work)
            if new_packets != orig_packets:
                a_lines, b_lines = orig_packets[1], new_packets[1]
                first = next((n for n, (x, y) in enumerate(zip(a_lines, b_lines)) if x != y), min(len(a_lines), len(b_lines)))
                problems.append(f"packets differ (exit {orig_packets[0]} -> {new_packets[0]}, {len(a_lines)} -> "
                                f"{len(b_lines)} lines, first at {first})")
            tags = mutagen_tags(work)
            if isinstance(orig_tags, tuple):
                expected_tags = None
            elif step == "c":
                expected_tags = {k: v for k, v in orig_tags.items() if k == SMPB}
            else:
                expected_tags = {k: v for k, v in orig_tags.items() if k not in ("©nam", "©ART", "trkn", "covr")}
                expected_tags.update(SET["a"] if step == "a" else SET["b"])
                expected_tags["covr"] = images["covers"]
            blind = mutagen_blind(after)
            if isinstance(orig_tags, tuple):
                blind = f"mutagen cannot read the original: {orig_tags[1][:80]}"
            if blind and (isinstance(orig_tags, tuple) or not orig_tags):
                # mutagen sees no tags here, before or after: ffprobe reads the ones we set.
                got = format_tags(work, timeout=300)
                want = {"a": {"title": "Tag conformance ✓", "artist": "Ärtist", "track": "3/12"},
                        "b": {"title": "Second edit", "artist": "Another", "track": "4/12"},
                        "c": {"title": None, "artist": None, "track": None}}[step]
                if tags != {} and tags != orig_tags:
                    problems.append(f"mutagen, which cannot see moov/udta here ({blind}), reads {tags}")
                if {k: got.get(k) for k in want} != want:
                    problems.append(f"ffprobe reads {({k: got.get(k) for k in want})}, not {want}")
                notes.append(f"mutagen cannot see moov/udta ({blind}): ffprobe read title, artist, track")
            elif tags != expected_tags:
                if isinstance(tags, tuple):
                    problems.append(f"mutagen: {tags[1][:200]}")
                else:
                    diff = {k for k in set(tags) | set(expected_tags) if tags.get(k) != expected_tags.get(k)}
                    problems.append("mutagen: " + ", ".join(f"{k}: {str(tags.get(k))[:60]} (want {str(expected_tags.get(k))[:60]})"
                                                            for k in sorted(diff)))
            report.check(not problems, f"{name}: {written}", "; ".join(problems), took)
            for n in notes:
                report.note(n)
            current = after
    return report


def inputs():
    found = []
    for folder, _, names in os.walk(FIXTURES):
        for n in names:
            if not n.endswith(NOT_INPUTS):
                p = os.path.join(folder, n)
                found.append((os.path.relpath(p, ROOT), p))
    if os.path.isdir(CORPUS):
        for n in os.listdir(CORPUS):
            p = os.path.join(CORPUS, n)
            if os.path.isfile(p) and not n.endswith(NOT_INPUTS):
                found.append(("corpus/" + n, p))
    return sorted(found)


def main():
    tool = extract_audio_and_corpus()
    if tool is None:
        return 1
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        # The covers: a small JPEG and PNG made by FFmpeg.
        images = {"jpeg": os.path.join(tmp, "cover.jpg"), "png": os.path.join(tmp, "cover.png")}
        for path, color in ((images["jpeg"], "red"), (images["png"], "blue")):
            r = run("ffmpeg", "-v", "error", "-f", "lavfi", "-i", f"color={color}:s=32x32", "-frames:v", "1", "-y", path)
            if r.returncode != 0:
                return fail_before_start(f"ffmpeg made no cover image: {r.stderr.decode()[:200]}")
        images["covers"] = [["cover", "JPEG", sha256(images["jpeg"])], ["cover", "PNG", sha256(images["png"])]]
        todo = inputs()
        files = [g.strip() for g in os.environ.get("TAG_FILES", "").split(",") if g.strip()]
        if files:
            todo = [(label, p) for label, p in todo if any(fnmatch.fnmatch(label, g) for g in files)]
        print_reports(check_input, [(tool, label, p, tmp, images) for label, p in todo])
    print(f"-- {len(todo)} inputs in {time.monotonic() - started:.0f} s")
    return tally.finish()


if __name__ == "__main__":
    sys.exit(main())
