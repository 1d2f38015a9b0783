#!/usr/bin/env python3
"""Damaged tag boxes never lose an item (issue 28, point 6): a seeded campaign of size
mutations and byte flips inside `moov/udta` of tagged fixtures, each edited with
`extract-audio tag --set title=…`, judged by mutagen (what Picard and beets read).

For every box of the udta subtree (udta, meta, hdlr, ilst, each item and its data, mean and
name boxes) the size field is set to: one more, one less, 8 more, 8 less, twice, 0, 1, 7 and
0xFFFFFFFF; and 150 single bits of the udta are flipped at seeded random places. For each
damaged file:
  - the tool exits normally (no signal, no crash), within 30 s;
  - a refusal (non-zero exit) leaves the file byte for byte as it was;
  - an edit that succeeds keeps every item mutagen reads in the damaged input (but the title
    it sets), with the same value, and mutagen reads the new title: an item the input's reader
    shows is never dropped by an edit (the bug: one wrong size read as "no tags", and the next
    --set wrote a file holding only that title).
An input mutagen cannot read is still edited or refused, but only the first two rules hold.

Prints one `ok`/`FAIL` line per fixture and mutation kind and "N passed, M failed" last;
exits 1 on failure. Needs /usr/bin/python3 with mutagen (a failure when CI=true or
REQUIRE_ORACLES=1, a skip otherwise). Set EXTRACT_AUDIO to a built binary to skip the
release build.
"""
import json
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

sys.dont_write_bytecode = True
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Scripts"))
import mp4box  # noqa: E402
from oracle import mutagen_reader  # noqa: E402
from oracle.binary import extract_audio  # noqa: E402
from oracle.report import Checks  # noqa: E402
from oracle.run import run  # noqa: E402

FIXTURES = ["meta-itunes.m4a", "meta-itunes-video.mp4", "meta-chapters-both.mp4"]
SIZES = [("+1", lambda s: s + 1), ("-1", lambda s: s - 1), ("+8", lambda s: s + 8), ("-8", lambda s: s - 8),
         ("x2", lambda s: 2 * s), ("0", lambda s: 0), ("1", lambda s: 1), ("7", lambda s: 7),
         ("max", lambda s: 0xFFFFFFFF)]
FLIPS = 150
TITLE = "Damage campaign"
checks = Checks()
check = checks.check

READ = r"""
import json, sys
from mutagen.mp4 import MP4
try:
    tags = MP4(sys.argv[1]).tags or {}
except Exception as error:
    print(json.dumps({"error": str(error)[:200]}))
    sys.exit(0)
print(json.dumps({"items": {k: repr(v) for k, v in tags.items()}}))
"""


def read_tags(path):
    """{"items": {key: repr(value)}} as mutagen reads the file, or {"error": …}: in this
    interpreter when it has mutagen (a process each would take most of the run), else in
    /usr/bin/python3's."""
    try:
        from mutagen.mp4 import MP4
    except ImportError:
        return json.loads(mutagen_reader.run_code(READ, path, text=True).stdout or "{}")
    try:
        tags = MP4(path).tags or {}
    except Exception as error:  # mutagen's own errors, and what a damaged file makes of it
        return {"error": str(error)[:200]}
    return {"items": {k: repr(v) for k, v in tags.items()}}


def udta_boxes(data):
    """(offset, size, type) of moov/udta and every box under it that tags live in."""
    def descend(data, box, _siblings):
        if box.kind == b"meta":
            return box.payload + (0 if data[box.payload + 4:box.payload + 8] == b"hdlr" else 4)
        if box.kind in (b"moov", b"udta", b"ilst") or (box.parent is not None and box.parent.kind == b"ilst"):
            return box.payload
        return None
    moov = next((b for b in mp4box.parse_boxes(data, 0, len(data), trailing_ok=True, descend=descend)
                 if b.kind == b"moov"), None)
    udta = next((c for c in moov.children if c.kind == b"udta"), None) if moov else None
    return [(b.offset, b.size, b.kind) for b in mp4box.walk([udta])] if udta else []


def mutants(name, data, seed):
    """(kind, label, bytes) of every damaged variant of one fixture."""
    boxes = udta_boxes(data)
    out = []
    for offset, size, box in boxes:
        for label, change in SIZES:
            value = change(size) & 0xFFFFFFFF
            if value == size:
                continue
            damaged = bytearray(data)
            struct.pack_into(">I", damaged, offset, value)
            out.append(("size", f"{box.decode('latin-1')}@{offset} size {label}", bytes(damaged)))
    if boxes:
        rng = random.Random(seed)
        start, size = boxes[0][0], boxes[0][1]
        for _ in range(FLIPS):
            at = rng.randrange(start, start + size)
            damaged = bytearray(data)
            damaged[at] ^= 1 << rng.randrange(8)
            out.append(("flip", f"bit flip at {at}", bytes(damaged)))
    return out


def judge(tool, tmp, k, label, damaged):
    """A list of problems (empty: none) for one damaged file, and whether mutagen read it."""
    path = os.path.join(tmp, f"m{k}{os.path.splitext(label)[1] or ''}.m4a")
    with open(path, "wb") as f:
        f.write(damaged)
    before = read_tags(path)
    try:
        r = run(tool, "tag", "--set", f"title={TITLE}", path, timeout=30)
    except subprocess.TimeoutExpired:
        return [f"{label}: no answer in 30 s"], "items" in before
    problems = []
    if r.returncode < 0 or r.returncode > 125:
        problems.append(f"{label}: exit {r.returncode} (a crash)")
    with open(path, "rb") as f:
        after_bytes = f.read()
    if r.returncode != 0:
        if after_bytes != damaged:
            problems.append(f"{label}: refused ({r.returncode}) but the file changed")
    elif "items" in before:
        after = read_tags(path)
        items = after.get("items")
        if items is None:
            problems.append(f"{label}: edited, and mutagen can no longer read it ({after.get('error')})")
        else:
            lost = [key for key, value in before["items"].items() if key != "\xa9nam" and items.get(key) != value]
            if lost:
                problems.append(f"{label}: edited, and lost or changed {lost[:6]} of the "
                                f"{len(before['items'])} items mutagen read")
            if items.get("\xa9nam") != repr([TITLE]):
                problems.append(f"{label}: edited, but the title reads {items.get(chr(0xa9) + 'nam')}")
    os.unlink(path)
    return problems, "items" in before


def main():
    tool = extract_audio(ROOT)
    if tool is None:
        sys.exit(1)
    if not mutagen_reader.available():
        checks.missing("oracle mutagen present", "/usr/bin/python3 cannot import mutagen", "mutagen missing",
                       "the damage campaign")
        checks.finish()
    tmp = tempfile.mkdtemp(prefix="tag-damage-")
    try:
        for n, name in enumerate(FIXTURES):
            with open(os.path.join(ROOT, "Fixtures", name), "rb") as f:
                data = f.read()
            variants = mutants(name, data, 28 + n)
            for kind in ("size", "flip"):
                batch = [(k, label, damaged) for k, (what, label, damaged) in enumerate(variants) if what == kind]
                with ThreadPoolExecutor(2) as pool:
                    judged = list(pool.map(lambda v: judge(tool, tmp, v[0], v[1], v[2]), batch))
                problems = [p for found, _ in judged for p in found]
                readable = sum(1 for _, ok in judged if ok)
                check(f"{name}: {len(batch)} {'size mutations' if kind == 'size' else 'bit flips'} of udta "
                      f"({readable} readable by mutagen): no item lost, refusals leave the file", not problems,
                      "; ".join(problems[:3]) + (f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    checks.finish()


if __name__ == "__main__":
    main()
