#!/usr/bin/env python3
"""Write the Fixtures/corrupt/ files: one defect each, patched into a good MP4.

usage: corrupt.py SOURCE.mp4 OUTPUT_DIR

Every patch locates its target by walking the box tree of SOURCE (no hard-coded
offsets), changes only the bytes named below, and checks the patched file still has
the same length as SOURCE (except largesize-overflow.mp4 and not-mp4.bin, which are
written from scratch). Unless said otherwise the target is in the first audio track's
sample table, moov/trak[audio]/mdia/minf/stbl. See Fixtures/README.md.
"""

import os
import struct
import sys

sys.dont_write_bytecode = True  # no __pycache__ in Scripts/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mp4box  # noqa: E402


def u32(data, offset):
    return struct.unpack_from(">I", data, offset)[0]


def put_u32(data, offset, value):
    struct.pack_into(">I", data, offset, value)


class Source:
    def __init__(self, path):
        with open(path, "rb") as f:
            self.data = bytes(f.read())
        self.boxes = mp4box.read_tree(self.data)
        self.moov = mp4box.top(self.boxes, b"moov")
        self.trak = mp4box.first_audio_trak(self.data, self.boxes)
        self.stbl = mp4box.stbl_of(self.trak)

    def table(self, kind):
        return self.stbl.child(kind)


def registry():
    """A table of name -> function(source) returning the patched bytes, and the decorator
    `@register(name)` that fills it."""
    table = {}

    def register(name):
        def add(function):
            table[name] = function
            return function
        return add
    return table, register


def write_all(table, check):
    """main of corrupt.py and damage.py: each patched file of `table` written to OUTPUT_DIR,
    after check(name, source, data)."""
    if len(sys.argv) != 3:
        sys.exit(sys.modules["__main__"].__doc__)
    source_path, out_dir = sys.argv[1], sys.argv[2]
    src = Source(source_path)
    os.makedirs(out_dir, exist_ok=True)
    for name, function in table.items():
        data = bytes(function(src))
        check(name, src, data)
        with open(os.path.join(out_dir, name), "wb") as f:
            f.write(data)
    return src, out_dir


# Each defect: name -> function(source) returning the patched bytes.
DEFECTS, defect = registry()


@defect("stsz-count-mismatch.mp4")
def stsz_count_mismatch(src):
    """stsz sample_count - 1; the box keeps its size, so one table entry is spare."""
    data = bytearray(src.data)
    stsz = src.table(b"stsz")
    count_at = stsz.payload + 8          # FullBox header(4) sample_size(4) sample_count(4)
    put_u32(data, count_at, u32(data, count_at) - 1)
    return data


@defect("stsz-count-huge.mp4")
def stsz_count_huge(src):
    """stsz sample_count = 0xFFFFFFF0 with sample_size 0: far more entries than the box holds."""
    data = bytearray(src.data)
    stsz = src.table(b"stsz")
    assert u32(data, stsz.payload + 4) == 0, "expected a per-sample size table"
    put_u32(data, stsz.payload + 8, 0xFFFFFFF0)
    return data


@defect("stco-beyond-eof.mp4")
def stco_beyond_eof(src):
    """The last stco entry = 0x7FFFFFF0: that chunk's samples lie beyond the end of the file."""
    data = bytearray(src.data)
    stco = src.table(b"stco")
    count = u32(data, stco.payload + 4)
    assert count >= 1
    put_u32(data, stco.payload + 8 + 4 * (count - 1), 0x7FFFFFF0)
    return data


@defect("stsc-first-chunk-zero.mp4")
def stsc_first_chunk_zero(src):
    """The first stsc entry's first_chunk = 0 (chunk numbers start at 1)."""
    data = bytearray(src.data)
    stsc = src.table(b"stsc")
    assert u32(data, stsc.payload + 4) >= 1
    assert u32(data, stsc.payload + 8) == 1
    put_u32(data, stsc.payload + 8, 0)
    return data


@defect("stsc-chunk-missing.mp4")
def stsc_chunk_missing(src):
    """stco entry_count lowered (box size unchanged) below the last stsc entry's first_chunk,
    so stsc names a chunk that stco does not hold."""
    data = bytearray(src.data)
    stsc = src.table(b"stsc")
    stco = src.table(b"stco")
    entries = u32(data, stsc.payload + 4)
    last_first_chunk = u32(data, stsc.payload + 8 + 12 * (entries - 1))
    chunks = u32(data, stco.payload + 4)
    new_count = min(chunks - 1, last_first_chunk - 1)
    assert 1 <= new_count < last_first_chunk <= chunks
    put_u32(data, stco.payload + 4, new_count)
    return data


@defect("box-size-too-small.mp4")
def box_size_too_small(src):
    """The audio stbl's 32-bit size = 4, smaller than its own 8-byte header."""
    data = bytearray(src.data)
    put_u32(data, src.stbl.offset, 4)
    return data


@defect("box-past-parent.mp4")
def box_past_parent(src):
    """The audio stts's size grown by 4096: it now ends past its parent stbl (and past moov)."""
    data = bytearray(src.data)
    stts = src.table(b"stts")
    assert stts.header_size == 8
    put_u32(data, stts.offset, stts.size + 4096)
    assert stts.offset + stts.size + 4096 > src.moov.end
    return data


@defect("largesize-overflow.mp4")
def largesize_overflow(src):
    """The source's ftyp, then a moov header with size == 1 and a 64-bit largesize of
    0xFFFFFFFFFFFFFFF0, then 64 bytes of the real moov's payload."""
    ftyp = mp4box.top(src.boxes, b"ftyp")
    header = struct.pack(">I4sQ", 1, b"moov", 0xFFFFFFFFFFFFFFF0)
    return src.data[ftyp.offset:ftyp.end] + header + src.data[src.moov.payload:src.moov.payload + 64]


@defect("stts-count-huge.mp4")
def stts_count_huge(src):
    """stts entry_count = 0x7FFFFFFF, far more entries than the box holds."""
    data = bytearray(src.data)
    stts = src.table(b"stts")
    put_u32(data, stts.payload + 4, 0x7FFFFFFF)
    return data


@defect("esds-lying-length.mp4")
def esds_lying_length(src):
    """Inside the audio esds, the DecoderConfigDescriptor (tag 0x04) length is set to the
    largest value its length field can hold (0x0FFFFFFF for FFmpeg's 4-byte form),
    far more than the esds holds. Box sizes and the ES_Descriptor length are unchanged."""
    data = bytearray(src.data)
    stsd = src.table(b"stsd")
    entry = stsd.children[0]
    assert entry.kind == b"mp4a"
    esds = mp4box.find_esds(entry)
    layout = mp4box.esds_layout(data, esds)
    offset, size = layout["dcd_length_field"]
    lying = bytes([0xFF] * (size - 1) + [0x7F])
    data[offset:offset + size] = lying
    tag, payload, length, _, _ = mp4box.read_descriptor_header(data, layout["dcd_offset"], esds.end)
    assert tag == 0x04 and payload + length > esds.end
    return data


def not_mp4(_src):
    """4 KiB that are not an MP4: an ADTS-looking header (0xFFF1...) then zeros."""
    adts = bytes([0xFF, 0xF1, 0x50, 0x80, 0x02, 0x1F, 0xFC])
    return adts + b"\0" * (4096 - len(adts))


def same_length_changed(name, src, data):
    if name != "largesize-overflow.mp4":
        assert len(data) == len(src.data), name
        assert data != src.data, name


def main():
    src, out_dir = write_all(DEFECTS, same_length_changed)
    with open(os.path.join(out_dir, "not-mp4.bin"), "wb") as f:
        f.write(not_mp4(src))


if __name__ == "__main__":
    main()
