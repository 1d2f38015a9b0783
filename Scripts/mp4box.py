"""A small ISO-BMFF / QuickTime box walker shared by corrupt.py and expectations.py.

Only what the fixture scripts need: walk the box tree of a well-formed file, find the
audio track, and read a few full boxes (mvhd, mdhd, elst, esds). It trusts its input
(the files it reads are FFmpeg's own output), but checks bounds so that a mistake
fails loudly instead of silently reading garbage.
"""

import struct

# Boxes whose payload is a plain sequence of child boxes.
CONTAINERS = {b"moov", b"trak", b"mdia", b"minf", b"stbl", b"edts", b"dinf", b"udta", b"wave"}


class Box:
    """One box: where it sits in the file and where its payload and children are."""

    def __init__(self, kind, offset, size, header_size, parent=None):
        self.kind = kind                  # four-character code, bytes
        self.offset = offset              # file offset of the first header byte
        self.size = size                  # total size, header included
        self.header_size = header_size    # 8, or 16 with a 64-bit largesize
        self.parent = parent
        self.children = []

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


def parse_boxes(data, start, end, parent=None):
    """The boxes in data[start:end], recursing into CONTAINERS and sample descriptions."""
    boxes = []
    offset = start
    while offset < end:
        if end - offset < 8:
            # QuickTime allows a 4-byte zero terminator at the end of some containers.
            if data[offset:end] == b"\0" * (end - offset):
                break
            raise ValueError(f"trailing {end - offset} bytes at {offset}")
        size, kind = struct.unpack_from(">I4s", data, offset)
        header = 8
        if size == 1:
            if end - offset < 16:
                raise ValueError(f"truncated largesize header at {offset}")
            size = struct.unpack_from(">Q", data, offset + 8)[0]
            header = 16
        elif size == 0:
            if kind == b"\0\0\0\0":      # QuickTime terminator atom inside 'wave'
                size = 8
            else:
                size = end - offset      # extends to the end of the enclosing space
        if size < header or offset + size > end:
            raise ValueError(f"box {kind!r} at {offset} has bad size {size}")
        box = Box(kind, offset, size, header, parent)
        boxes.append(box)
        if kind in CONTAINERS:
            box.children = parse_boxes(data, box.payload, box.end, box)
        elif kind == b"stsd":
            # FullBox header (4) + entry_count (4), then sample entries as boxes.
            box.children = parse_boxes(data, box.payload + 8, box.end, box)
            for entry in box.children:
                first = sample_entry_children_offset(data, entry)
                if first is not None:
                    entry.children = parse_boxes(data, first, entry.end, entry)
        offset += size
    return boxes


def sample_entry_children_offset(data, entry):
    """Where an audio sample entry's child boxes start, or None if it is not audio."""
    if entry.kind not in (b"mp4a", b"sowt", b"twos", b"lpcm", b"ipcm", b"fpcm", b"alac"):
        return None
    base = entry.payload + 8                     # reserved(6) + data_reference_index(2)
    version = struct.unpack_from(">H", data, base)[0]
    # version(2) revision(2) vendor(4) channels(2) sample_size(2) compression_id(2)
    # packet_size(2) sample_rate(4) = 20 bytes; QuickTime v1 adds 16, v2 adds 36.
    extra = {0: 0, 1: 16, 2: 36}.get(version)
    if extra is None:
        raise ValueError(f"{entry.path}: unknown sound description version {version}")
    return base + 20 + extra


def read_tree(data):
    return parse_boxes(data, 0, len(data))


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
    tag, dsi_payload, dsi_length, _, _ = read_descriptor_header(data, dcd_payload + 13, end)
    if tag != 0x05:
        raise ValueError(f"esds: expected DecoderSpecificInfo, found tag {tag}")
    return {
        "dcd_offset": dcd_offset,
        "dcd_length": dcd_length,
        "dcd_length_field": (len_off, len_size),
        "asc": bytes(data[dsi_payload:dsi_payload + dsi_length]),
    }
