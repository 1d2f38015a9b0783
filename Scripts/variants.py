#!/usr/bin/env python3
"""Byte-level rewrites of FFmpeg's output for fixtures FFmpeg cannot write itself.

usage: variants.py KIND SOURCE OUTPUT

KIND is one of the functions registered below (see Fixtures/README.md for each one).
Every rewrite finds its target by walking the box tree (Scripts/mp4box.py), never by
fixed offsets. When bytes are inserted or removed, `splice` grows or shrinks every
enclosing box and shifts every stco/co64 chunk offset that points past the edit, so
the file stays well-formed (it refuses fragmented sources, whose offsets live in
moof/traf). Each rewrite checks that the samples of every track (offset, size,
duration and bytes) are still where the sample tables say, unless the defect is the
point (the bad fixtures).
"""

import os
import struct
import sys

sys.dont_write_bytecode = True  # no __pycache__ in Scripts/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mp4box  # noqa: E402

u32 = mp4box.u32


def put_u32(data, offset, value):
    struct.pack_into(">I", data, offset, value)


def tree(data):
    return mp4box.read_tree(bytes(data))


def all_track_samples(data):
    """{track_id: [(bytes of each sample, duration)]} from the sample tables."""
    boxes = mp4box.read_tree(bytes(data), trailing_ok=True)
    moov = mp4box.top(boxes, b"moov")
    result = {}
    for trak in (c for c in moov.children if c.kind == b"trak"):
        samples = mp4box.table_samples(data, trak)
        result[mp4box.track_id(data, trak)] = [(bytes(data[o:o + s]), d) for o, s, d in samples]
    return result


def splice(data, offset, old_length, new_bytes):
    """data with data[offset:offset+old_length] replaced by new_bytes: every box that
    encloses the edit changes size by the difference, and every chunk offset at or past
    the end of the edit moves with the bytes."""
    data = bytearray(data)
    boxes = tree(data)
    if mp4box.is_fragmented(boxes):
        raise ValueError("splice: fragmented files keep offsets in moof; not supported")
    delta = len(new_bytes) - old_length
    edit_end = offset + old_length
    for box in mp4box.walk(boxes):
        # A box encloses the edit if the edit lies in its payload; an insertion right at
        # a box's end is outside it (between it and the next box).
        inside = box.payload <= offset and (edit_end < box.end or (edit_end == box.end and old_length))
        if inside:
            if box.header_size == 16:
                struct.pack_into(">Q", data, box.offset + 8, box.size + delta)
            elif u32(data, box.offset) != 0:               # size 0 = to the end: unchanged
                put_u32(data, box.offset, box.size + delta)
        if box.kind in (b"stco", b"co64"):
            count = u32(data, box.payload + 4)
            fmt, step = (">I", 4) if box.kind == b"stco" else (">Q", 8)
            for i in range(count):
                at = box.payload + 8 + i * step
                value = struct.unpack_from(fmt, data, at)[0]
                if value >= edit_end:
                    struct.pack_into(fmt, data, at, value + delta)
                elif value > offset:
                    raise ValueError(f"splice: chunk offset {value} inside the edit at {offset}")
    data[offset:edit_end] = new_bytes
    return data


def audio_entry(data):
    boxes = tree(data)
    trak = mp4box.first_audio_trak(bytes(data), boxes)
    stsd = mp4box.stbl_of(trak).child(b"stsd")
    return trak, stsd.children[0]


# --- AudioSpecificConfig ------------------------------------------------------------

class BitReader:
    def __init__(self, data):
        self.data, self.pos = data, 0

    def read(self, n):
        value = 0
        for _ in range(n):
            value = (value << 1) | ((self.data[self.pos // 8] >> (7 - self.pos % 8)) & 1)
            self.pos += 1
        return value


class BitWriter:
    def __init__(self):
        self.bits = []

    def write(self, value, n):
        self.bits += [(value >> (n - 1 - i)) & 1 for i in range(n)]

    def bytes(self):
        bits = self.bits + [0] * (-len(self.bits) % 8)
        return bytes(int("".join(map(str, bits[i:i + 8])), 2) for i in range(0, len(bits), 8))


RATES = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350]


def explicit_sbr_config(asc, object_type):
    """AAC-LC AudioSpecificConfig -> the explicit (hierarchical) HE-AAC signalling of
    ISO/IEC 14496-3 1.6.2.1: audioObjectType 5 (SBR) or 29 (PS), the core
    samplingFrequencyIndex and channelConfiguration, extensionSamplingFrequencyIndex =
    twice the core rate, then audioObjectType 2 and the GASpecificConfig (three zero
    bits: 1024-sample frames, no core coder, no extension)."""
    bits = BitReader(asc)
    aot, rate_index, channels = bits.read(5), bits.read(4), bits.read(4)
    assert aot == 2 and rate_index < 13, (aot, rate_index)
    assert bits.read(3) == 0, "expected a plain GASpecificConfig"
    if object_type == 29:
        assert channels == 1, "parametric stereo needs a mono core"
    out = BitWriter()
    out.write(object_type, 5)
    out.write(rate_index, 4)
    out.write(channels, 4)
    out.write(RATES.index(RATES[rate_index] * 2), 4)
    out.write(2, 5)
    out.write(0, 3)
    return out.bytes()


def set_descriptor_length(data, header_offset, new_length):
    """Rewrite a descriptor's length keeping its field size (FFmpeg writes 4 bytes)."""
    tag, payload, _, field, size = mp4box.read_descriptor_header(data, header_offset, len(data))
    if new_length >= 1 << (7 * size):
        raise ValueError("descriptor length does not fit")
    encoded = [(new_length >> (7 * (size - 1 - i))) & 0x7F for i in range(size)]
    data[field:field + size] = bytes([b | 0x80 for b in encoded[:-1]] + [encoded[-1]])


def replace_asc(data, new_asc):
    _, entry = audio_entry(data)
    esds = mp4box.find_esds(entry)
    layout = mp4box.esds_layout(data, esds)
    delta = len(new_asc) - len(layout["asc"])
    es_header = esds.payload + 4
    _, _, es_length, _, _ = mp4box.read_descriptor_header(data, es_header, esds.end)
    dsi_header = layout["dcd_offset"]
    _, dcd_payload, dcd_length, _, _ = mp4box.read_descriptor_header(data, dsi_header, esds.end)
    dsi_offset = dcd_payload + 13
    _, asc_at, asc_length, _, _ = mp4box.read_descriptor_header(data, dsi_offset, esds.end)
    data = bytearray(data)
    set_descriptor_length(data, es_header, es_length + delta)
    set_descriptor_length(data, layout["dcd_offset"], dcd_length + delta)
    set_descriptor_length(data, dsi_offset, asc_length + delta)
    return splice(data, asc_at, asc_length, new_asc)


VARIANTS = {}


def variant(name, keeps_samples=True):
    def register(function):
        VARIANTS[name] = (function, keeps_samples)
        return function
    return register


@variant("he-aac")
def he_aac(data):
    """Explicit SBR signalling (audioObjectType 5) on an AAC-LC file."""
    _, entry = audio_entry(data)
    asc = mp4box.esds_layout(data, mp4box.find_esds(entry))["asc"]
    return replace_asc(data, explicit_sbr_config(asc, 5))


@variant("he-aac-v2")
def he_aac_v2(data):
    """Explicit PS signalling (audioObjectType 29) on a mono AAC-LC file."""
    _, entry = audio_entry(data)
    asc = mp4box.esds_layout(data, mp4box.find_esds(entry))["asc"]
    return replace_asc(data, explicit_sbr_config(asc, 29))


def set_object_type(data, oti):
    _, entry = audio_entry(data)
    layout = mp4box.esds_layout(data, mp4box.find_esds(entry))
    _, dcd_payload, _, _, _ = mp4box.read_descriptor_header(data, layout["dcd_offset"], len(data))
    data = bytearray(data)
    assert data[dcd_payload] == 0x40, f"objectTypeIndication {data[dcd_payload]:#x}"
    data[dcd_payload] = oti
    return data


@variant("oti-0x66")
def oti_main(data):
    """objectTypeIndication 0x40 -> 0x66 (MPEG-2 AAC Main profile)."""
    return set_object_type(data, 0x66)


@variant("oti-0x67")
def oti_lc(data):
    """objectTypeIndication 0x40 -> 0x67 (MPEG-2 AAC Low Complexity profile)."""
    return set_object_type(data, 0x67)


@variant("oti-0x00")
def oti_forbidden(data):
    """objectTypeIndication 0x40 -> 0x00 (forbidden, ISO/IEC 14496-1 Table 5): an mp4a
    entry that names no codec."""
    return set_object_type(data, 0x00)


@variant("opus-no-dops")
def opus_no_dops(data):
    """The Opus entry's dOps box renamed 'free' (same size): an Opus entry without its
    decoder configuration (channel count, pre-skip, mapping)."""
    _, entry = audio_entry(data)
    assert entry.kind == b"Opus", entry.kind
    dops = next(child for child in entry.children if child.kind == b"dOps")
    data = bytearray(data)
    data[dops.offset + 4:dops.offset + 8] = b"free"
    return data


@variant("sound-v0")
def sound_v0(data):
    """QuickTime sound description version 1 -> version 0: the 16 bytes of version-1
    fields removed, version 0, compression ID 0; the children (wave, chan) kept."""
    _, entry = audio_entry(data)
    base = entry.payload + 8
    version = struct.unpack_from(">H", data, base)[0]
    assert version == 1, version
    data = splice(data, base + 20, 16, b"")
    struct.pack_into(">H", data, base, 0)
    # version(2) revision(2) vendor(4) channels(2) sample_size(2) compression_id(2)...
    struct.pack_into(">h", data, base + 12, 0)                 # compression ID
    return data


@variant("esds-junk")
def esds_junk(data):
    """The ES_Descriptor's body rewritten in place (same length): ES_ID and flags as they
    were, then a descriptor of the user-private tag 0xC0 (10 zero bytes), then a
    DecoderConfigDescriptor with the same fields but a 3-channel AudioSpecificConfig (12 18,
    AAC-LC, 44100 Hz, channelConfiguration 3) for the stereo stream, then the SLConfigDescriptor
    (predefined 2). Descriptor lengths use the 1-byte form. ISO/IEC 14496-1 § 7.2.6.5
    puts the DecoderConfigDescriptor right after the ES_Descriptor's fields: FFmpeg
    stops at the unknown tag and decodes by the sample entry's 2 channels and 44100 Hz;
    a reader that skips it finds a configuration that does not fit the stream."""
    _, entry = audio_entry(data)
    esds = mp4box.find_esds(entry)
    layout = mp4box.esds_layout(data, esds)
    assert layout["object_type"] == 0x40 and layout["asc"][:2] == b"\x12\x10", layout
    tag, es_body, es_length, _, _ = mp4box.read_descriptor_header(data, esds.payload + 4, esds.end)
    assert tag == 0x03 and es_body + es_length == esds.end
    assert data[es_body + 2] == 0, "expected an ES_Descriptor without optional fields"
    _, dcd_body, _, _, _ = mp4box.read_descriptor_header(data, layout["dcd_offset"], esds.end)
    fields = bytes(data[dcd_body:dcd_body + 13])
    decoder = bytes([0x04, 13 + 4]) + fields + bytes([0x05, 2, 0x12, 0x18])
    junk_length = es_length - 3 - 2 - len(decoder) - 3
    assert 0 < junk_length < 0x80, junk_length
    body = bytes(data[es_body:es_body + 3]) + bytes([0xC0, junk_length]) + bytes(junk_length) + decoder \
        + bytes([0x06, 1, 2])
    assert len(body) == es_length
    data = bytearray(data)
    data[es_body:es_body + es_length] = body
    return data


def box(kind, payload=b""):
    return struct.pack(">I4s", 8 + len(payload), kind) + payload


@variant("free-skip-wide")
def free_skip_wide(data):
    """Top-level free/skip/wide boxes: `free` (with 8 bytes of payload) after ftyp,
    `skip` (4 bytes of payload) after moov, `wide` right before mdat, and a `free`
    inside moov after mvhd; chunk offsets shifted."""
    boxes = tree(data)
    order = [b.kind for b in boxes]
    assert order[:2] == [b"ftyp", b"moov"] and order[-1] == b"mdat", order
    moov = mp4box.top(boxes, b"moov")
    mdat = mp4box.top(boxes, b"mdat")
    mvhd = moov.child(b"mvhd")
    # From the end backwards, so that earlier offsets stay valid.
    data = splice(data, mdat.offset, 0, box(b"wide"))
    data = splice(data, moov.end, 0, box(b"skip", b"SKIP"))
    data = splice(data, mvhd.end, 0, box(b"free", b"\0" * 4))
    ftyp = mp4box.top(tree(data), b"ftyp")
    return splice(data, ftyp.end, 0, box(b"free", b"\0" * 8))


@variant("mdat-size-zero")
def mdat_size_zero(data):
    """The last top-level box is mdat; its 32-bit size is set to 0 (to the end of file)."""
    boxes = tree(data)
    assert boxes[-1].kind == b"mdat" and boxes[-1].header_size == 8
    data = bytearray(data)
    put_u32(data, boxes[-1].offset, 0)
    return data


@variant("mdat-largesize")
def mdat_largesize(data):
    """mdat's 8-byte header -> the 16-byte form (size 1, 64-bit largesize); chunk
    offsets shifted by 8."""
    boxes = tree(data)
    mdat = mp4box.top(boxes, b"mdat")
    assert mdat.header_size == 8
    header = struct.pack(">I4sQ", 1, b"mdat", mdat.size + 8)
    return splice(data, mdat.offset, 8, header)


@variant("trailing-garbage")
def trailing_garbage(data):
    """Seven bytes after the last top-level box: too short to be a box header."""
    return bytes(data) + b"\r\nEOF\r\n"


@variant("two-mdats")
def two_mdats(data):
    """The single mdat split into two at the chunk boundary nearest its middle: an
    8-byte mdat header inserted there, the first mdat shortened, later chunk offsets
    shifted by 8."""
    boxes = tree(data)
    mdat = mp4box.top(boxes, b"mdat")
    assert mdat.header_size == 8 and boxes[-1] is mdat
    moov = mp4box.top(boxes, b"moov")
    chunks = []
    for stco in (b for b in mp4box.walk(moov.children) if b.kind == b"stco"):
        count = u32(data, stco.payload + 4)
        chunks += struct.unpack_from(f">{count}I", data, stco.payload + 8)
    middle = (mdat.payload + mdat.end) // 2
    split = min((c for c in chunks if c > mdat.payload), key=lambda c: abs(c - middle))
    # splice grows the mdat by the 8 inserted bytes and shifts the chunk offsets from
    # `split` on; then the first mdat is cut short at `split`.
    data = splice(data, split, 0, struct.pack(">I4s", mdat.end - split + 8, b"mdat"))
    put_u32(data, mdat.offset, split - mdat.offset)
    return data


@variant("zero-times")
def zero_times(data):
    """creation_time and modification_time of mvhd, every tkhd and every mdhd set to 0
    (GStreamer writes the wall-clock time there; this makes its output reproducible)."""
    data = bytearray(data)
    for found in mp4box.walk(tree(data)):
        if found.kind in (b"mvhd", b"tkhd", b"mdhd"):
            width = 8 if data[found.payload] == 1 else 4
            data[found.payload + 4:found.payload + 4 + 2 * width] = b"\0" * (2 * width)
    return data


# --- Metadata (see "Metadata, gapless, chapters" in Fixtures/README.md) ----------------

def udta_meta(data):
    """moov/udta/meta of an FFmpeg file (a FullBox) and its ilst."""
    moov = mp4box.top(tree(data), b"moov")
    meta = moov.child(b"udta").child(b"meta")
    assert meta.header_size == 8 and mp4box.is_full_box_meta(bytes(data), meta)
    ilst = [c for c in mp4box.meta_children(bytes(data), meta) if c.kind == b"ilst"]
    assert len(ilst) == 1, ilst
    return meta, ilst[0]


def append_ilst_items(data, items):
    """data with `items` (whole item boxes) appended to moov/udta/meta/ilst. The box
    walker does not descend into meta, so the meta box is rebuilt here with its new
    size, and splice grows udta and moov (and shifts chunk offsets if moov comes first)."""
    meta, ilst = udta_meta(data)
    new_ilst = box(b"ilst", bytes(data[ilst.payload:ilst.end]) + b"".join(items))
    new_meta = box(b"meta", bytes(data[meta.payload:ilst.offset]) + new_ilst
                   + bytes(data[ilst.end:meta.end]))
    return splice(data, meta.offset, meta.size, new_meta)


def freeform(name, value, mean=b"com.apple.iTunes"):
    """An iTunes freeform item: '----' with mean, name (FullBoxes) and a UTF-8 'data'."""
    return box(b"----", box(b"mean", b"\0" * 4 + mean) + box(b"name", b"\0" * 4 + name)
               + box(b"data", struct.pack(">II", 1, 0) + value))


@variant("itunes-freeform")
def itunes_freeform(data):
    """A freeform item com.apple.iTunes / MY_TAG appended to moov/udta/meta/ilst
    (FFmpeg 5.1 cannot write '----' items)."""
    return append_ilst_items(data, [freeform(b"MY_TAG", b"fixture freeform value")])


def single_edit(data, trak):
    """(elst box, segment_duration, media_time) of a track's one edit (version 0)."""
    elst = trak.child(b"edts").child(b"elst")
    assert data[elst.payload] == 0 and u32(data, elst.payload + 4) == 1
    duration, media_time = struct.unpack_from(">Ii", data, elst.payload + 8)
    return elst, duration, media_time


@variant("itunes-gapless")
def itunes_gapless(data):
    """iTunNORM and iTunSMPB freeform items appended to moov/udta/meta/ilst, as iTunes
    writes them. iTunSMPB: priming = the edit's media_time, original sample count = the
    edit's segment_duration in media ticks, padding = the encoder's whole frames (sample
    count x 1024) minus both, i.e. counted over full 1024-sample frames as an encoder
    reports it, not over FFmpeg's trimmed last stts entry."""
    boxes = tree(data)
    moov = mp4box.top(boxes, b"moov")
    trak = mp4box.first_audio_trak(bytes(data), boxes)
    movie_scale, _ = mp4box.timescale_and_duration(data, moov.child(b"mvhd"))
    media_scale, _ = mp4box.timescale_and_duration(data, trak.child(b"mdia").child(b"mdhd"))
    _, duration, priming = single_edit(data, trak)
    count, remainder = divmod(duration * media_scale, movie_scale)
    assert remainder == 0 and priming > 0
    frames = len(mp4box.table_samples(data, trak))
    padding = frames * 1024 - priming - count
    assert 0 <= padding < 2048, padding
    smpb = f" 00000000 {priming:08X} {padding:08X} {count:016X}" + " 00000000" * 8
    norm = " 00000A2B 00000A1F 00004C66 00004B8E 0000C350 0000C350 00007D2A 00007D2F 0000C350 0000C350"
    return append_ilst_items(data, [freeform(b"iTunNORM", norm.encode()),
                                    freeform(b"iTunSMPB", smpb.encode())])


@variant("priming-2112")
def priming_2112(data):
    """The audio track's one edit: media_time 1024 -> 2112 (the priming iTunes' encoder
    declares) and a segment that ends before the last sample: the longest whole number of
    movie ticks that is also a whole number of media ticks and fits in the samples after
    the priming. mvhd and tkhd durations follow the edit. An audio-only file is expected
    (the movie duration is the edit's)."""
    data = bytearray(data)
    boxes = tree(data)
    moov = mp4box.top(boxes, b"moov")
    assert len([c for c in moov.children if c.kind == b"trak"]) == 1
    trak = mp4box.first_audio_trak(bytes(data), boxes)
    mvhd, tkhd = moov.child(b"mvhd"), trak.child(b"tkhd")
    movie_scale, _ = mp4box.timescale_and_duration(data, mvhd)
    media_scale, _ = mp4box.timescale_and_duration(data, trak.child(b"mdia").child(b"mdhd"))
    elst, _, media_time = single_edit(data, trak)
    assert media_time == 1024, media_time
    total = sum(d for _, _, d in mp4box.table_samples(data, trak))
    priming = 2112
    duration = (total - priming) * movie_scale // media_scale
    while duration * media_scale % movie_scale:
        duration -= 1
    assert data[mvhd.payload] == 0 and data[tkhd.payload] == 0
    struct.pack_into(">Ii", data, elst.payload + 8, duration, priming)
    put_u32(data, mvhd.payload + 16, duration)          # version/flags, 2 times, timescale
    put_u32(data, tkhd.payload + 20, duration)          # version/flags, 2 times, ID, reserved
    return data


def qt_text_item(kind, text, language=0x15C7):
    """A QuickTime user-data text item ('\xa9mak' ...): one string with its 16-bit length
    and packed language code (0x15C7 = 'eng')."""
    return box(kind, struct.pack(">HH", len(text), language) + text)


@variant("iphone-keys")
def iphone_keys(data):
    """FFmpeg writes keys-based metadata (-movflags use_metadata_tags) as a FullBox
    moov/udta/meta; an iPhone writes it as a plain container moov/meta. The meta box is
    moved out of udta into moov (after udta, at the end of moov) without its 4 bytes of
    version and flags. udta keeps QuickTime text items with the same make, model,
    software, date and location, as iOS up to version 6 wrote them."""
    meta, _ = udta_meta(data)
    children = mp4box.meta_children(bytes(data), meta)
    assert [c.kind for c in children] == [b"hdlr", b"keys", b"ilst"], children
    assert mp4box.meta_handler(bytes(data), meta) == b"mdta"
    keys = mp4box.keys_entries(bytes(data), children[1])
    values = {}
    for item in mp4box.ilst_items(bytes(data), children[2]):
        (_, _, value), = item["data"]
        values[keys[u32(item["kind"], 0) - 1][1]] = value
    prefix = "com.apple.quicktime."
    udta_items = [qt_text_item(b"\xa9" + kind, values[prefix + key]) for kind, key in
                  [(b"mak", "make"), (b"mod", "model"), (b"swr", "software"),
                   (b"day", "creationdate"), (b"xyz", "location.ISO6709")]]
    moov = mp4box.top(tree(data), b"moov")
    udta = moov.child(b"udta")
    assert [c.kind for c in udta.children] == [b"meta"] and udta.end == moov.end
    plain_meta = box(b"meta", bytes(data[meta.payload + 4:meta.end]))
    return splice(data, udta.offset, udta.size, box(b"udta", b"".join(udta_items)) + plain_meta)


# --- Bad fixtures ---------------------------------------------------------------------

@variant("truncate", keeps_samples=False)
def truncate(data):
    """The file cut in the middle of the middle audio sample (in decode order), i.e. in
    the middle of the media data: everything from there on is lost."""
    tid, samples = mp4box.audio_samples(data, tree(data))
    middle = samples[len(samples) // 2]
    return bytes(data[:middle["offset"] + middle["size"] // 2])


@variant("tracks-in-turn")
def tracks_in_turn(data):
    """Not interleaved: every sample of the first track, then every sample of the next,
    each track one chunk (stsc one run, stco one offset), as some MPEG-4 systems authoring
    tools store them; moov first. The source must have its moov after mdat, and one sample
    entry per track."""
    boxes = tree(data)
    kinds = [b.kind for b in boxes]
    assert kinds.index(b"mdat") < kinds.index(b"moov"), "tracks-in-turn: moov must follow mdat"
    mdat = mp4box.top(boxes, b"mdat")
    moov = mp4box.top(boxes, b"moov")
    traks = [c for c in moov.children if c.kind == b"trak"]
    payload = bytearray()
    chunks = []
    for trak in traks:
        samples = mp4box.table_samples(data, trak)
        chunks.append((mp4box.track_id(data, trak), mdat.payload + len(payload), len(samples)))
        for offset, size, _ in samples:
            payload += data[offset:offset + size]
    assert len(payload) <= mdat.size - mdat.header_size
    payload += bytes(mdat.size - mdat.header_size - len(payload))  # The same length: moov stays put.
    data = bytearray(data)
    data[mdat.payload:mdat.end] = payload
    # New stsc and stco per track, the last track first so earlier boxes keep their offsets.
    for track, first, count in reversed(chunks):
        trak = next(t for t in mp4box.top(tree(data), b"moov").children
                    if t.kind == b"trak" and mp4box.track_id(data, t) == track)
        kinds = {c.kind: c for c in mp4box.stbl_of(trak).children}
        table = kinds.get(b"stco") or kinds[b"co64"]
        data = splice(data, table.offset, table.size, box(b"stco", struct.pack(">III", 0, 1, first)))
        trak = next(t for t in mp4box.top(tree(data), b"moov").children
                    if t.kind == b"trak" and mp4box.track_id(data, t) == track)
        stsc = next(c for c in mp4box.stbl_of(trak).children if c.kind == b"stsc")
        data = splice(data, stsc.offset, stsc.size, box(b"stsc", struct.pack(">IIIII", 0, 1, 1, count, 1)))
    # moov moved before mdat (so a cut in the media keeps it): every chunk offset moves by its size.
    boxes = tree(data)
    mdat, moov = mp4box.top(boxes, b"mdat"), mp4box.top(boxes, b"moov")
    header = bytearray(data[moov.offset:moov.end])
    for table in (b for b in mp4box.walk([moov]) if b.kind == b"stco"):
        at = table.payload + 8 - moov.offset
        put_u32(header, at, u32(header, at) + moov.size)
    return data[:mdat.offset] + header + data[mdat.offset:moov.offset] + data[moov.end:]


@variant("dref-external", keeps_samples=False)
def dref_external(data):
    """The audio track's dinf/dref/'url ' entry flags 1 -> 0: the samples are "in another
    file" (and no location string follows)."""
    trak, _ = audio_entry(data)
    dinf = trak.child(b"mdia").child(b"minf").child(b"dinf")
    dref = dinf.child(b"dref")
    entry = dref.payload + 8                         # FullBox(4) + entry_count(4)
    assert data[entry + 4:entry + 8] == b"url " and u32(data, entry + 8) == 1
    data = bytearray(data)
    put_u32(data, entry + 8, 0)
    return data


@variant("enca", keeps_samples=False)
def enca(data):
    """The audio sample entry renamed from mp4a to enca (no sinf: encrypted-looking)."""
    _, entry = audio_entry(data)
    assert entry.kind == b"mp4a"
    data = bytearray(data)
    data[entry.offset + 4:entry.offset + 8] = b"enca"
    return data


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in VARIANTS:
        sys.exit(__doc__ + "\nkinds: " + ", ".join(VARIANTS))
    kind, source, output = sys.argv[1:]
    function, keeps_samples = VARIANTS[kind]
    with open(source, "rb") as f:
        data = f.read()
    result = bytes(function(data))
    assert result != data
    if keeps_samples:
        # Every track's samples (bytes and durations) are unchanged.
        before = all_track_samples(data)
        after = all_track_samples(result)
        assert before == after, f"{kind}: samples moved"
    with open(output, "wb") as f:
        f.write(result)


if __name__ == "__main__":
    main()
