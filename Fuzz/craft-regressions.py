#!/usr/bin/env python3
"""Writes the hand-made regression inputs of Fixtures/fuzz/ (see Fixtures/fuzz/README.md).

Each is the smallest file that showed a defect found by reading the code the fuzzers run:
inputs whose tables claim far more samples (or times) than the file holds, which random
mutation reaches only rarely. The AAC sample entry is taken from Fixtures/aac-48k-mono.mp4.

    python3 Fuzz/craft-regressions.py [OUTPUT_DIR]   (default Fixtures/fuzz)
"""
import os
import re
import struct
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def box(fourcc, payload):
    return struct.pack(">I4s", 8 + len(payload), fourcc) + payload


def full_box(fourcc, version, flags, payload):
    return box(fourcc, struct.pack(">I", version << 24 | flags) + payload)


def aac_sample_description():
    """The stsd box of the AAC track of a fixture, as it is."""
    data = open(os.path.join(REPO, "Fixtures", "aac-48k-mono.mp4"), "rb").read()
    for match in re.finditer(b"stsd", data):
        start = match.start() - 4
        if b"mp4a" in data[match.start():match.start() + 40]:
            return data[start:start + struct.unpack(">I", data[start:start + 4])[0]]
    raise SystemExit("no AAC stsd in Fixtures/aac-48k-mono.mp4")


MATRIX = struct.pack(">9I", 0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x40000000)


def stts(entries):
    return full_box(b"stts", 0, 0, struct.pack(">I", len(entries)) + b"".join(struct.pack(">II", *e) for e in entries))


def stsc(entries):
    return full_box(b"stsc", 0, 0, struct.pack(">I", len(entries)) + b"".join(struct.pack(">III", *e) for e in entries))


def stsz_constant(size, count):
    return full_box(b"stsz", 0, 0, struct.pack(">II", size, count))


def stco(offsets):
    return full_box(b"stco", 0, 0, struct.pack(">I", len(offsets)) + b"".join(struct.pack(">I", o) for o in offsets))


def movie_box(tables, movie_extends=b""):
    """moov with one AAC track (48 kHz, track ID 1) whose stbl holds `tables`."""
    mvhd = full_box(b"mvhd", 0, 0, struct.pack(">IIII", 0, 0, 1000, 1000) + struct.pack(">IH", 0x10000, 0x100)
                    + bytes(10) + MATRIX + bytes(24) + struct.pack(">I", 2))
    tkhd = full_box(b"tkhd", 0, 3, struct.pack(">IIIII", 0, 0, 1, 0, 1000) + bytes(8)
                    + struct.pack(">HHHH", 0, 0, 0x100, 0) + MATRIX + struct.pack(">II", 0, 0))
    mdhd = full_box(b"mdhd", 0, 0, struct.pack(">IIIIHH", 0, 0, 48000, 48000, 0x55C4, 0))
    hdlr = full_box(b"hdlr", 0, 0, struct.pack(">I4s", 0, b"soun") + bytes(12) + b"S\0")
    smhd = full_box(b"smhd", 0, 0, bytes(4))
    dref = full_box(b"dref", 0, 0, struct.pack(">I", 1) + full_box(b"url ", 0, 1, b""))
    stbl = box(b"stbl", aac_sample_description() + tables)
    minf = box(b"minf", smhd + box(b"dinf", dref) + stbl)
    trak = box(b"trak", tkhd + box(b"mdia", mdhd + hdlr + minf))
    return box(b"moov", mvhd + trak + movie_extends)


FTYP = box(b"ftyp", b"isom" + struct.pack(">I", 512) + b"isommp42")


def chunks_overlap():
    """2048 chunks that all point at the same 8 KiB of mdat, each 8192 one-byte samples:
    16 Mi samples and 16 MiB of output from a 17 KB file (the output plan walked every
    sample: over a second, and more memory with more chunks)."""
    chunks, per_chunk = 2048, 8192
    mdat = box(b"mdat", b"\x21" * per_chunk)

    def build(offset):
        tables = (stts([(chunks * per_chunk, 1)]) + stsc([(1, per_chunk, 1)])
                  + stsz_constant(1, chunks * per_chunk) + stco([offset] * chunks))
        return FTYP + movie_box(tables) + mdat

    without_offsets = build(0)
    return build(len(without_offsets) - len(mdat) + 8)


def truncated_huge_table():
    """A file cut 1000 bytes into an mdat whose one chunk claims 2^30 one-byte samples: the
    salvage path expanded every stts duration first (a 4 GiB array)."""
    count = 1 << 30
    payload = b"\x21" * 1000

    def build(offset):
        tables = stts([(count, 1)]) + stsc([(1, count, 1)]) + stsz_constant(1, count) + stco([offset])
        return FTYP + movie_box(tables) + struct.pack(">I4s", 8 + count, b"mdat") + payload

    without_offsets = build(0)
    return build(len(without_offsets) - len(payload))


def trun_limit_per_run():
    """A moof with 2000 truns of 90,000 samples each and no per-sample fields (16 bytes a
    run): each run was checked against the sample limit alone, so the moof's runs were all
    built (2000 × 90,000 samples, gigabytes) before the total was."""
    runs, per_run = 2000, 90000
    trex = full_box(b"trex", 0, 0, struct.pack(">IIIII", 1, 1, 1024, 0, 0))
    tfhd = full_box(b"tfhd", 0, 0x020000, struct.pack(">I", 1))
    trun = full_box(b"trun", 0, 0, struct.pack(">I", per_run))
    moof = box(b"moof", full_box(b"mfhd", 0, 0, struct.pack(">I", 1)) + box(b"traf", tfhd + trun * runs))
    tables = stts([]) + stsc([]) + stsz_constant(0, 0) + stco([])
    return FTYP + movie_box(tables, box(b"mvex", trex)) + moof + box(b"mdat", b"")


def chapter_empty_edit_2e64():
    """Fixtures/meta-chapters-both.mp4 with its chapter track's edit list replaced by an
    empty edit of 2^64 - 2 movie ticks and then its media: the chapters start 5.8e11 years
    in, and `tag` (listing them), cuts and --split-chapters converted those seconds to
    integers with a trap (issue 29). Made with Scripts/variants.py's splice, which grows the
    boxes around the edit list and moves the chunk offsets after it."""
    sys.path.insert(0, os.path.join(REPO, "Scripts"))
    import variants
    with open(os.path.join(REPO, "Fixtures", "meta-chapters-both.mp4"), "rb") as f:
        data = f.read()
    audio = data.find(b"elst") - 4
    chapter = data.find(b"elst", audio + 8) - 4
    duration, media_time, rate = struct.unpack(">IiI", data[chapter + 16:chapter + 28])
    entries = [((1 << 64) - 2, -1, 0x10000), (duration, media_time, rate)]
    payload = struct.pack(">II", 1 << 24, len(entries)) + b"".join(struct.pack(">QqI", *e) for e in entries)
    return bytes(variants.splice(data, chapter, 28, box(b"elst", payload)))


def _edited(name, find, replace):
    sys.path.insert(0, os.path.join(REPO, "Scripts"))
    import variants
    with open(os.path.join(REPO, "Fixtures", name), "rb") as f:
        data = f.read()
    offset, length = find(data)
    return bytes(variants.splice(data, offset, length, replace(data, offset, length)))


def nero_chapter_start_2e63():
    """Fixtures/aac-48k-mono.mp4 with a Nero `chpl` in its `udta`: a chapter at 0 and one
    starting 2^63 units of 100 ns in (29,000 years). `--split-chapters` converted that start
    to nanoseconds with `UInt64(…)` and trapped, leaving its temporary cut behind (issue 29)."""
    entries = [(0, b"One"), (1 << 63, b"Far")]
    payload = struct.pack(">IIB", 1 << 24, 0, len(entries)) + b"".join(
        struct.pack(">QB", start, len(title)) + title for start, title in entries)

    def udta_payload(data):
        udta = data.find(b"udta", data.find(b"moov")) - 4
        return udta + 8, 0
    return _edited("aac-48k-mono.mp4", udta_payload, lambda *_: box(b"chpl", payload))


def two_empty_edits_4e17():
    """Fixtures/aac-48k-mono.mp4 whose audio edit list starts with two empty edits of
    4.2e17 movie ticks each (each valid alone, their sum within 64 bits) before its media:
    `remux` added the two in seconds and converted the sum to ticks with `UInt64(…)`, which
    trapped (issue 29)."""
    def edit_list(data):
        elst = data.find(b"elst") - 4
        return elst, struct.unpack(">I", data[elst:elst + 4])[0]

    def replace(data, elst, length):
        version = data[elst + 8]
        count = struct.unpack(">I", data[elst + 12:elst + 16])[0]
        media = [struct.unpack(">QqI" if version else ">IiI", data[elst + 16 + i * (20 if version else 12):][:20 if version else 12])
                 for i in range(count)]
        entries = [(420_000_000_000_000_000, -1, 0x10000)] * 2 + media
        return box(b"elst", struct.pack(">II", 1 << 24, len(entries))
                   + b"".join(struct.pack(">QqI", *e) for e in entries))
    return _edited("aac-48k-mono.mp4", edit_list, replace)


FILES = {
    "chapter-empty-edit-2e64.mp4": chapter_empty_edit_2e64,
    "chpl-chapter-start-2e63.mp4": nero_chapter_start_2e63,
    "elst-two-empty-edits-4e17.mp4": two_empty_edits_4e17,
    "stco-chunks-overlap-16m-samples.mp4": chunks_overlap,
    "truncated-stts-2e30-samples.mp4": truncated_huge_table,
    "trun-sample-limit-per-run-not-per-moof.mp4": trun_limit_per_run,
}

if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, "Fixtures", "fuzz")
    os.makedirs(out, exist_ok=True)
    for name, make in FILES.items():
        data = make()
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
        print(f"{name}: {len(data)} bytes")
