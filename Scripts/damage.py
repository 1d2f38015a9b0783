#!/usr/bin/env python3
"""Write the Fixtures/damaged/ files: one part of a good MP4 damaged, the rest readable.

usage: damage.py SOURCE.mp4 OUTPUT_DIR

Where Fixtures/corrupt/ holds files the tool must refuse, these hold one damaged part
next to readable ones: `probe --packets` lists what can be read and names the damage
(issue 20, item 3). Like corrupt.py, every patch finds its target by walking the box
tree of SOURCE (no hard-coded offsets); the audio track is the trak whose hdlr type is
`soun`. See Fixtures/README.md.
"""

import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in Scripts/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from corrupt import put_u32, registry, u32, write_all  # noqa: E402

DAMAGES, damage = registry()


@damage("audio-no-stsd.mp4")
def audio_no_stsd(src):
    """The audio track's stsd renamed `free`: that track has no sample descriptions."""
    data = bytearray(src.data)
    stsd = src.table(b"stsd")
    data[stsd.offset + 4:stsd.offset + 8] = b"free"
    return data


@damage("second-moov.mp4")
def second_moov(src):
    """A copy of moov appended at the end, its audio trak renamed `free`: read the second
    and the audio track is gone. FFmpeg keeps the first ("Found duplicated MOOV Atom")."""
    copy = bytearray(src.data[src.moov.offset:src.moov.end])
    at = src.trak.offset - src.moov.offset
    copy[at + 4:at + 8] = b"free"
    return src.data + bytes(copy)


@damage("audio-chunk-in-moov.mp4")
def audio_chunk_in_moov(src):
    """The audio track's first stco entry moved to moov's payload: its first chunk overlaps
    the moov box (as when a tool moves moov without rewriting the offsets)."""
    data = bytearray(src.data)
    stco = src.table(b"stco")
    assert u32(data, stco.payload + 4) >= 1
    put_u32(data, stco.payload + 8, src.moov.payload)
    return data


def changed(name, src, data):
    assert data != src.data, name


def main():
    write_all(DAMAGES, changed)


if __name__ == "__main__":
    main()
