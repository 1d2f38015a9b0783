"""A small ISO-BMFF / QuickTime box walker shared by the fixture scripts.

Only what the fixture scripts need: walk the box tree of a well-formed file, find the
audio track, read a few full boxes (mvhd, mdhd, tkhd, elst, esds), list a track's
samples (offset, size, duration) from its sample table or from movie fragments
(moof/traf/tfhd/trun with the trex defaults). It is independent of the Swift code under
test. It trusts its input (the files it reads are FFmpeg's or GStreamer's output, or
patched copies of them), but checks bounds so that a mistake fails loudly instead of
silently reading garbage.
"""

import struct

# Boxes whose payload is a plain sequence of child boxes.
CONTAINERS = {b"moov", b"trak", b"mdia", b"minf", b"stbl", b"edts", b"dinf", b"udta", b"wave",
              b"moof", b"traf", b"mvex", b"mfra"}

# Sample entry formats whose entries are sound descriptions (their child boxes follow the
# fixed fields; see sample_entry_children_offset).
AUDIO_ENTRIES = {b"mp4a", b"enca", b"sowt", b"twos", b"lpcm", b"ipcm", b"fpcm", b"alac",
                 b"in24", b"in32", b"fl32", b"fl64", b"ac-3", b"ec-3", b"Opus", b"fLaC",
                 b".mp3", b"raw "}


class Box:
    """One box: where it sits in the file and where its payload and children are."""

    def __init__(self, kind, offset, size, header_size, parent=None):
        self.kind = kind                  # four-character code, bytes
        self.offset = offset              # file offset of the first header byte
        self.size = size                  # total size, header included
        self.header_size = header_size    # 8, or 16 with a 64-bit largesize
        self.parent = parent
        self.children = []
        self.truncated = False            # runs past the end of a file cut short

    @property
    def payload(self):
        return self.offset + self.header_size

    @property
    def end(self):
        return self.offset + self.size

    @property
    def path(self):
        names = []
        box = self
        while box is not None:
            names.append(box.kind.decode("latin-1"))
            box = box.parent
        return "/".join(reversed(names))

    def child(self, kind):
        found = [c for c in self.children if c.kind == kind]
        if len(found) != 1:
            raise ValueError(f"{self.path}: expected one {kind!r}, found {len(found)}")
        return found[0]

    def __repr__(self):
        return f"<{self.path} @{self.offset} size={self.size}>"


class Damage(ValueError):
    """Bytes that cannot be boxes: a size smaller than its header or past the parent or the
    file, stray bytes inside a box."""


def parse_boxes(data, start, end, parent=None, trailing_ok=False, truncated_ok=False, descend=None,
                until_damage=False):
    """The boxes in data[start:end] and, where descend(data, box, earlier siblings) gives
    the offset of a box's children (None: its payload is not read), theirs; by default
    CONTAINERS, sample descriptions and audio sample entries (descend_all).
    trailing_ok: fewer than 8 bytes left over at the end (top level) are not an error.
    truncated_ok: the last top-level box may run past the end (it is kept, marked
    truncated, and its payload is not parsed). Raises Damage; with until_damage, the
    boxes before the first damaged one instead (as a lenient reader sees the list)."""
    descend = descend or descend_all
    boxes = []
    try:
        _parse_into(boxes, data, start, end, parent, trailing_ok, truncated_ok, descend)
    except Damage:
        if not until_damage:
            raise
    return boxes


def no_children(_data, _box, _siblings):
    """A descend for parse_boxes that reads no payload: one level only."""
    return None


def boxes_of(data, start=0, end=None):
    """The boxes filling data[start:end] (all of data by default), one level, up to the
    first that cannot be a box: the lenient listing the checkers query by hand."""
    return parse_boxes(data, start, len(data) if end is None else end, descend=no_children, until_damage=True)


def _parse_into(boxes, data, start, end, parent, trailing_ok, truncated_ok, descend):
    """parse_boxes' loop: appends each box to boxes as it is read, so that what came before
    a Damage is kept."""
    offset = start
    while offset < end:
        if end - offset < 8:
            # QuickTime allows a 4-byte zero terminator at the end of some containers.
            if data[offset:end] == b"\0" * (end - offset) or trailing_ok:
                return
            raise Damage(f"{end - offset} stray bytes at {offset} inside {parent.path if parent else 'the file'}")
        size, kind = struct.unpack_from(">I4s", data, offset)
        header = 8
        if size == 1:
            if end - offset < 16:
                raise Damage(f"a largesize header cut at {offset}")
            size = struct.unpack_from(">Q", data, offset + 8)[0]
            header = 16
        elif size == 0:
            if kind == b"\0\0\0\0" and parent is not None:
                size = 8                 # QuickTime terminator atom inside 'wave'
            else:
                size = end - offset      # extends to the end of the enclosing space
        if size < header or offset + size > end:
            if truncated_ok and size >= header and parent is None:
                # A file cut short: keep the last box with its declared size, unread.
                box = Box(kind, offset, size, header, parent)
                box.truncated = True
                boxes.append(box)
                return
            where = parent.path + "/" if parent else ""
            if size < header:
                raise Damage(f"{where}{kind!r} at {offset}: size {size} smaller than its header")
            raise Damage(f"{where}{kind!r} at {offset}: {size} bytes run past its parent or the file "
                         f"({end - offset} left)")
        box = Box(kind, offset, size, header, parent)
        first = descend(data, box, boxes)
        if first is not None:
            box.children = parse_boxes(data, first, box.end, box, descend=descend)
        boxes.append(box)
        offset += size


def descend_all(data, box, _siblings):
    """Where parse_boxes reads children by default: CONTAINERS, the sample entries of stsd and
    the boxes inside audio sample entries."""
    if box.kind in CONTAINERS:
        return box.payload
    if box.kind == b"stsd":
        return box.payload + 8           # FullBox header (4) + entry_count (4), then entries
    if box.parent is not None and box.parent.kind == b"stsd":
        return sample_entry_children_offset(data, box)
    return None


def sample_entry_children_offset(data, entry):
    """Where an audio sample entry's child boxes start, or None if it is not audio."""
    if entry.kind not in AUDIO_ENTRIES:
        return None
    base = entry.payload + 8                     # reserved(6) + data_reference_index(2)
    version = struct.unpack_from(">H", data, base)[0]
    # version(2) revision(2) vendor(4) channels(2) sample_size(2) compression_id(2)
    # packet_size(2) sample_rate(4) = 20 bytes; QuickTime v1 adds 16, v2 adds 36.
    extra = {0: 0, 1: 16, 2: 36}.get(version)
    if extra is None:
        raise ValueError(f"{entry.path}: unknown sound description version {version}")
    return base + 20 + extra


def read_tree(data, trailing_ok=False, truncated_ok=False):
    return parse_boxes(data, 0, len(data), trailing_ok=trailing_ok, truncated_ok=truncated_ok)


def walk(boxes):
    """Every box of the tree, depth first, in file order."""
    for box in boxes:
        yield box
        yield from walk(box.children)


def top(boxes, kind):
    found = [b for b in boxes if b.kind == kind]
    if len(found) != 1:
        raise ValueError(f"expected one top-level {kind!r}, found {len(found)}")
    return found[0]


def handler_type(data, trak):
    hdlr = trak.child(b"mdia").child(b"hdlr")
    # FullBox header (4) + pre_defined / component type (4), then handler_type.
    return data[hdlr.payload + 8:hdlr.payload + 12]


def audio_traks(data, boxes):
    moov = top(boxes, b"moov")
    return [t for t in moov.children if t.kind == b"trak" and handler_type(data, t) == b"soun"]


def first_audio_trak(data, boxes):
    traks = audio_traks(data, boxes)
    if not traks:
        raise ValueError("no audio track")
    return traks[0]


def stbl_of(trak):
    return trak.child(b"mdia").child(b"minf").child(b"stbl")


def timescale_and_duration(data, box):
    """(timescale, duration) of an mvhd or mdhd box."""
    version = data[box.payload]
    if version == 1:
        return struct.unpack_from(">IQ", data, box.payload + 4 + 16)
    return struct.unpack_from(">II", data, box.payload + 4 + 8)


def edit_list(data, trak):
    """[[segment_duration, media_time, rate_integer, rate_fraction], ...] or None."""
    edts = [c for c in trak.children if c.kind == b"edts"]
    if not edts:
        return None
    elst = edts[0].child(b"elst")
    version = data[elst.payload]
    count = struct.unpack_from(">I", data, elst.payload + 4)[0]
    fmt, step = (">QqhH", 20) if version == 1 else (">IihH", 12)
    offset = elst.payload + 8
    if offset + count * step > elst.end:
        raise ValueError(f"{elst.path}: entry_count {count} exceeds the box")
    entries = []
    for i in range(count):
        duration, media_time, rate_int, rate_frac = struct.unpack_from(fmt, data, offset + i * step)
        entries.append([duration, media_time, rate_int, rate_frac])
    return entries


def find_esds(entry):
    """The esds of an mp4a sample entry, directly inside it (ISO) or in its 'wave' (QuickTime)."""
    for child in entry.children:
        if child.kind == b"esds":
            return child
        if child.kind == b"wave":
            for grandchild in child.children:
                if grandchild.kind == b"esds":
                    return grandchild
    raise ValueError(f"{entry.path}: no esds")


def read_descriptor_header(data, offset, end):
    """(tag, payload_offset, payload_length, length_field_offset, length_field_size)."""
    if offset >= end:
        raise ValueError("descriptor header past the end")
    tag = data[offset]
    length = 0
    pos = offset + 1
    for n in range(4):
        if pos >= end:
            raise ValueError("descriptor length past the end")
        byte = data[pos]
        pos += 1
        length = (length << 7) | (byte & 0x7F)
        if not byte & 0x80:
            return tag, pos, length, offset + 1, n + 1
    raise ValueError("descriptor length longer than 4 bytes")


def esds_layout(data, esds):
    """Offsets inside an esds box: the DecoderConfigDescriptor (tag 4) header and the
    DecoderSpecificInfo (tag 5) payload, i.e. the AudioSpecificConfig."""
    end = esds.end
    tag, pos, length, _, _ = read_descriptor_header(data, esds.payload + 4, end)
    if tag != 0x03:
        raise ValueError(f"esds: expected ES_Descriptor, found tag {tag}")
    flags = data[pos + 2]                       # after ES_ID(2)
    pos += 3
    if flags & 0x80:
        pos += 2                                # dependsOn_ES_ID
    if flags & 0x40:
        pos += 1 + data[pos]                    # URL
    if flags & 0x20:
        pos += 2                                # OCR_ES_Id
    dcd_offset = pos
    tag, dcd_payload, dcd_length, len_off, len_size = read_descriptor_header(data, pos, end)
    if tag != 0x04:
        raise ValueError(f"esds: expected DecoderConfigDescriptor, found tag {tag}")
    # objectTypeIndication(1) streamType(1) bufferSizeDB(3) maxBitrate(4) avgBitrate(4)
    # MP3/MP2 (objectTypeIndication 0x69/0x6B) have no DecoderSpecificInfo: asc is None.
    asc = None
    if dcd_payload + 13 < dcd_payload + dcd_length:
        tag, dsi_payload, dsi_length, _, _ = read_descriptor_header(data, dcd_payload + 13, end)
        if tag == 0x05:
            asc = bytes(data[dsi_payload:dsi_payload + dsi_length])
    if asc is None and data[dcd_payload] == 0x40:
        raise ValueError("esds: MPEG-4 audio without a DecoderSpecificInfo")
    return {
        "dcd_offset": dcd_offset,
        "dcd_length": dcd_length,
        "dcd_length_field": (len_off, len_size),
        "object_type": data[dcd_payload],
        "asc": asc,
    }


# --- Tracks and their samples -------------------------------------------------------

def track_references(data, tref):
    """[(reference type, [track IDs])] of a tref's entries (§ 8.3.3), up to the first that
    is not a box (boxes_of)."""
    return [(entry.kind, list(struct.unpack_from(f">{(entry.end - entry.payload) // 4}I", data, entry.payload)))
            for entry in boxes_of(data, tref.payload, tref.end)]


def u32(data, offset):
    return struct.unpack_from(">I", data, offset)[0]


def full_box_flags(data, box):
    return u32(data, box.payload) & 0xFFFFFF


def track_id(data, trak):
    tkhd = trak.child(b"tkhd")
    version = data[tkhd.payload]
    # FullBox header(4), creation and modification times (4 or 8 each), then track_ID.
    return u32(data, tkhd.payload + 4 + (16 if version == 1 else 8))


def is_fragmented(boxes):
    moov = top(boxes, b"moov")
    return any(c.kind == b"mvex" for c in moov.children)


def table_samples(data, trak):
    """[(offset, size, duration)] of a track's samples from its sample table
    (stsz or stz2, stsc, stco or co64, stts), in decode order."""
    stbl = stbl_of(trak)
    kinds = {c.kind: c for c in stbl.children}
    if b"stsz" in kinds:
        stsz = kinds[b"stsz"]
        uniform, count = struct.unpack_from(">II", data, stsz.payload + 4)
        sizes = [uniform] * count if uniform else \
            list(struct.unpack_from(f">{count}I", data, stsz.payload + 12))
    else:
        stz2 = kinds[b"stz2"]
        field, count = data[stz2.payload + 7], u32(data, stz2.payload + 8)
        raw = data[stz2.payload + 12:stz2.end]
        if field == 16:
            sizes = list(struct.unpack_from(f">{count}H", raw))
        elif field == 8:
            sizes = list(raw[:count])
        else:
            sizes = [(raw[i // 2] >> (0 if i % 2 else 4)) & 0xF for i in range(count)]
    if b"stco" in kinds:
        stco = kinds[b"stco"]
        n = u32(data, stco.payload + 4)
        chunks = list(struct.unpack_from(f">{n}I", data, stco.payload + 8))
    else:
        co64 = kinds[b"co64"]
        n = u32(data, co64.payload + 4)
        chunks = list(struct.unpack_from(f">{n}Q", data, co64.payload + 8))
    stsc = kinds[b"stsc"]
    n = u32(data, stsc.payload + 4)
    runs = [struct.unpack_from(">III", data, stsc.payload + 8 + 12 * i) for i in range(n)]
    stts = kinds[b"stts"]
    n = u32(data, stts.payload + 4)
    durations = []
    for i in range(n):
        count, delta = struct.unpack_from(">II", data, stts.payload + 8 + 8 * i)
        durations += [delta] * count
    samples = []
    index = 0
    for r, (first, per_chunk, _) in enumerate(runs):
        last = runs[r + 1][0] - 1 if r + 1 < len(runs) else len(chunks)
        for chunk in range(first, last + 1):
            offset = chunks[chunk - 1]
            for _ in range(per_chunk):
                samples.append((offset, sizes[index], durations[index]))
                offset += sizes[index]
                index += 1
    if index != len(sizes) or len(durations) != len(sizes):
        raise ValueError(f"{stbl.path}: tables disagree ({index} in chunks, {len(sizes)} sizes, "
                         f"{len(durations)} durations)")
    return samples


def fragment_samples(data, boxes, wanted_track_id):
    """[dict(offset, size, duration, composition_offset, moof, trun, index)] of one track's samples in movie
    fragments, in decode order: every moof/traf of that track, each trun's samples with
    its explicit fields or the tfhd defaults or else the moov/mvex/trex defaults.
    Data offsets follow ISO/IEC 14496-12 8.8.7/8.8.8: the base is tfhd's
    base_data_offset if present, else the moof's first byte when default-base-is-moof is
    set or for the first traf of a moof, else the end of the previous traf's data; a
    trun without data_offset continues where the previous trun of the traf ended."""
    moov = top(boxes, b"moov")
    trex_defaults = None
    for mvex in (c for c in moov.children if c.kind == b"mvex"):
        for trex in (c for c in mvex.children if c.kind == b"trex"):
            tid, _, duration, size, flags = struct.unpack_from(">IIIII", data, trex.payload + 4)
            if tid == wanted_track_id:
                trex_defaults = (duration, size, flags)
    if trex_defaults is None:
        raise ValueError(f"no trex for track {wanted_track_id}")
    samples = []
    for moof in (b for b in boxes if b.kind == b"moof"):
        previous_data_end = moof.offset
        for traf in (c for c in moof.children if c.kind == b"traf"):
            tfhd = traf.child(b"tfhd")
            flags = full_box_flags(data, tfhd)
            tid = u32(data, tfhd.payload + 4)
            pos = tfhd.payload + 8
            base = None
            if flags & 0x1:
                base = struct.unpack_from(">Q", data, pos)[0]
                pos += 8
            if flags & 0x2:
                pos += 4                                  # sample_description_index
            default_duration, default_size, _ = trex_defaults
            if flags & 0x8:
                default_duration = u32(data, pos)
                pos += 4
            if flags & 0x10:
                default_size = u32(data, pos)
                pos += 4
            if base is None:
                base = moof.offset if flags & 0x20000 else previous_data_end
            cursor = base
            for trun in (c for c in traf.children if c.kind == b"trun"):
                tflags = full_box_flags(data, trun)
                count = u32(data, trun.payload + 4)
                pos = trun.payload + 8
                if tflags & 0x1:
                    cursor = base + struct.unpack_from(">i", data, pos)[0]
                    pos += 4
                if tflags & 0x4:
                    pos += 4                              # first_sample_flags
                for i in range(count):
                    duration, size = default_duration, default_size
                    if tflags & 0x100:
                        duration = u32(data, pos)
                        pos += 4
                    if tflags & 0x200:
                        size = u32(data, pos)
                        pos += 4
                    if tflags & 0x400:
                        pos += 4
                    composition = 0
                    if tflags & 0x800:
                        # Version 0 counts unsigned, version 1 signed (ISO/IEC 14496-12 8.8.8).
                        composition = struct.unpack_from(">i" if data[trun.payload] else ">I", data, pos)[0]
                        pos += 4
                    if pos > trun.end:
                        raise ValueError(f"{trun.path} at {trun.offset}: entries exceed the box")
                    if tid == wanted_track_id:
                        samples.append({"offset": cursor, "size": size, "duration": duration,
                                        "explicit_duration": bool(tflags & 0x100),
                                        "default_duration": default_duration, "composition_offset": composition,
                                        "moof": moof.offset, "trun": trun.offset, "index": i})
                    cursor += size
            previous_data_end = cursor
    return samples


def audio_samples(data, boxes):
    """(track_id, samples) of the first audio track, from its sample table or, in a
    fragmented file, from the table (normally empty) followed by its fragments; each
    sample a dict with offset, size and duration."""
    trak = first_audio_trak(data, boxes)
    tid = track_id(data, trak)
    samples = [{"offset": o, "size": s, "duration": d} for o, s, d in table_samples(data, trak)]
    if is_fragmented(boxes):
        samples += fragment_samples(data, boxes, tid)
    return tid, samples


def segment_indexes(data, boxes):
    """The top-level sidx boxes: [dict(offset, reference_id, timescale,
    earliest_presentation_time, subsegment_durations)]."""
    found = []
    for sidx in (b for b in boxes if b.kind == b"sidx"):
        version = data[sidx.payload]
        reference_id, timescale = struct.unpack_from(">II", data, sidx.payload + 4)
        if version == 0:
            earliest, _ = struct.unpack_from(">II", data, sidx.payload + 12)
            pos = sidx.payload + 20
        else:
            earliest, _ = struct.unpack_from(">QQ", data, sidx.payload + 12)
            pos = sidx.payload + 28
        count = struct.unpack_from(">H", data, pos + 2)[0]
        durations = [u32(data, pos + 4 + 12 * i + 4) for i in range(count)]
        found.append({"offset": sidx.offset, "reference_id": reference_id, "timescale": timescale,
                      "earliest_presentation_time": earliest, "subsegment_durations": durations})
    return found


# --- Metadata: meta, ilst, keys -------------------------------------------------------

def meta_children(data, meta):
    """The child boxes of a 'meta' box. The ISO / iTunes 'meta' (moov/udta/meta) is a
    FullBox: 4 bytes of version and flags come before its children; QuickTime's
    keys-based moov/meta as iPhones write it is a plain container. Told apart by where
    the first child, 'hdlr', has its type: right after a 4-byte size (plain), or 4 bytes
    later (FullBox)."""
    plain = data[meta.payload + 4:meta.payload + 8] == b"hdlr"
    return parse_boxes(data, meta.payload if plain else meta.payload + 4, meta.end, meta)


def is_full_box_meta(data, meta):
    return data[meta.payload + 4:meta.payload + 8] != b"hdlr"


def metadata_boxes(data, boxes):
    """Every 'meta' box under moov (moov/meta, moov/udta/meta, moov/trak/udta/meta,
    moov/trak/meta), as (path, box)."""
    moov = top(boxes, b"moov")
    found = []
    for box in walk([moov]):
        if box.kind == b"meta":
            found.append((box.path, box))
    return found


def meta_handler(data, meta):
    """The handler type of a meta box's hdlr ('mdir' for iTunes, 'mdta' for keys)."""
    hdlr = [c for c in meta_children(data, meta) if c.kind == b"hdlr"]
    return data[hdlr[0].payload + 8:hdlr[0].payload + 12] if hdlr else None


def ilst_items(data, ilst):
    """The items of an 'ilst', in file order: dict(kind (the item's box type: a
    four-character code, or for keys-based metadata the 1-based key index as 4 bytes),
    offset, bytes (the whole item box), mean and name (freeform '----' items, else None),
    data: [(type, locale, value bytes)] of its 'data' boxes)."""
    items = []
    for item in parse_boxes(data, ilst.payload, ilst.end, ilst):
        entry = {"kind": item.kind, "offset": item.offset, "bytes": bytes(data[item.offset:item.end]),
                 "mean": None, "name": None, "data": []}
        for child in parse_boxes(data, item.payload, item.end, item):
            if child.kind == b"mean":
                entry["mean"] = bytes(data[child.payload + 4:child.end]).decode("utf-8", "replace")
            elif child.kind == b"name":
                entry["name"] = bytes(data[child.payload + 4:child.end]).decode("utf-8", "replace")
            elif child.kind == b"data":
                type_field, locale = struct.unpack_from(">II", data, child.payload)
                entry["data"].append((type_field & 0xFFFFFF, locale,
                                      bytes(data[child.payload + 8:child.end])))
        items.append(entry)
    return items


def keys_entries(data, keys):
    """The entries of a 'keys' box (FullBox, entry_count, then size/namespace/value):
    [(namespace, key)] with key as text, in index order (index 1 first)."""
    count = u32(data, keys.payload + 4)
    pos, entries = keys.payload + 8, []
    for _ in range(count):
        size, namespace = struct.unpack_from(">I4s", data, pos)
        if size < 8 or pos + size > keys.end:
            raise ValueError(f"{keys.path}: bad key entry size {size} at {pos}")
        entries.append((namespace.decode("latin-1"),
                        bytes(data[pos + 8:pos + size]).decode("utf-8", "replace")))
        pos += size
    return entries


def freeform_items(data, boxes, name):
    """The '----' items of moov/udta/meta/ilst named `name` (e.g. "iTunSMPB"), as
    ilst_items dicts."""
    moov = top(boxes, b"moov")
    found = []
    for udta in (c for c in moov.children if c.kind == b"udta"):
        for meta in (c for c in udta.children if c.kind == b"meta"):
            for ilst in (c for c in meta_children(data, meta) if c.kind == b"ilst"):
                found += [i for i in ilst_items(data, ilst) if i["kind"] == b"----" and i["name"] == name]
    return found


def first_edit_media_time(path, kind):
    """The first non-empty edit's media_time, in seconds, of the first track of handler
    `kind` (b"vide", b"soun") of the file at `path`: 0.0 without an edit list or such a track."""
    data = open(path, "rb").read()
    boxes = read_tree(data)
    for trak in (c for c in top(boxes, b"moov").children if c.kind == b"trak"):
        if handler_type(data, trak) != kind:
            continue
        timescale, _ = timescale_and_duration(data, trak.child(b"mdia").child(b"mdhd"))
        for entry in edit_list(data, trak) or []:
            if entry[1] >= 0:
                return entry[1] / timescale
        return 0.0
    return 0.0
