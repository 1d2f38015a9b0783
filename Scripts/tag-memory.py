#!/usr/bin/env python3
"""A cover costs the tag writer no memory of its size (issue 28, point 7).

`tag --cover IMAGE` checks the image through a buffer of 1 MiB (JPEG markers to SOS and
EOI, PNG chunks and CRCs) and copies it into the output through the copy loop (a 1 MiB
buffer, or the kernel's copy_file_range); the padding comes from a 64 KiB buffer of zeros.
So the peak memory (ru_maxrss of the process, measured by /usr/bin/time) of an edit with a 48 MiB cover
may exceed that of an edit with a 1 KiB cover by those fixed buffers and the allocator's
slack, never by the cover: the bound is 8 MiB, a sixth of the cover (one copy of it held
anywhere fails the check). Measured for a rewrite and for an in-place edit (the file's
padding holding the cover), on a file with a second name (copied back), and read back
with mutagen: the cover is the image's bytes. The same three ways for an edit of the title
of a file that already holds the cover: the cover is left in the file when the moov is
read and copied from there, so it costs no memory of its size either.

Prints one `ok`/`FAIL` line per check, the last line "N passed, M failed"; exits 1 on
failure. Needs /usr/bin/python3 with mutagen for the read-back (a missing one is a failure
when CI=true or REQUIRE_ORACLES=1, a printed skip otherwise). Set EXTRACT_AUDIO to a built
binary to skip the release build.
"""
import hashlib
import os
import shutil
import sys
import tempfile

sys.dont_write_bytecode = True
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Scripts"))
import mp4box  # noqa: E402
from oracle import mutagen_reader  # noqa: E402
from oracle.binary import extract_audio  # noqa: E402
from oracle.report import STRICT, Checks  # noqa: E402
from oracle.run import run as oracle_run  # noqa: E402

BOUND = 8 << 20  # Fixed buffers (1 MiB check, 1 MiB copy, 1 MiB in place, 64 KiB zeros) and slack.
LARGE = 48 << 20
checks = Checks()
check = checks.check


def jpeg(path, size):
    """A JPEG whose structure is whole (SOI, a frame header, a scan, EOI) of `size` bytes;
    its entropy-coded data is a byte pattern without 0xFF (what a decoder would draw does
    not matter here)."""
    head = bytes([0xFF, 0xD8,
                  0xFF, 0xC0, 0, 11, 8, 0, 16, 0, 16, 1, 1, 0x11, 0,  # SOF0: 16x16, one component
                  0xFF, 0xDA, 0, 8, 1, 1, 0, 0, 63, 0])  # SOS
    body = size - len(head) - 2
    pattern = bytes(range(0, 250)) * 4096
    with open(path, "wb") as f:
        f.write(head)
        while body > 0:
            part = pattern[:body]
            f.write(part)
            body -= len(part)
        f.write(bytes([0xFF, 0xD9]))


def run(tool, args):
    """(exit status, max RSS in bytes, stderr) of `extract-audio tag ARGS`, measured by
    /usr/bin/time: a process forked from this script would report the script's own pages
    as well (Linux keeps the highest RSS across fork and exec)."""
    report = os.path.join(tempfile.gettempdir(), f"tag-memory-{os.getpid()}.rss")
    r = oracle_run("/usr/bin/time", "-f", "%M", "-o", report, tool, "tag", *args)
    with open(report) as f:
        peak = int(f.read().split()[-1]) * 1024
    os.unlink(report)
    return r.returncode, peak, r.stderr.decode(errors="replace")


def digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def no_padding(path):
    """Turns the padding after moov (a free box) into a skip box, which an in-place edit does
    not write into: the next edit rewrites the file (and gives the padding back)."""
    with open(path, "rb") as f:
        boxes = mp4box.boxes_of(f.read())
    for previous, box in zip(boxes, boxes[1:]):
        if previous.kind == b"moov":
            assert box.kind == b"free", box.kind
            with open(path, "r+b") as f:
                f.seek(box.offset + 4)
                f.write(b"skip")
            return
    raise AssertionError("no padding after moov")


def main():
    tool = extract_audio(ROOT)
    if tool is None:
        sys.exit(1)
    have_mutagen = mutagen_reader.available()
    if not have_mutagen and STRICT:
        check("mutagen present", False, "missing")
    if not os.access("/usr/bin/time", os.X_OK):
        checks.missing("/usr/bin/time present", "missing", "/usr/bin/time missing", "every measurement")
        checks.finish()
    tmp = tempfile.mkdtemp(prefix="tag-memory-")
    try:
        small, large = os.path.join(tmp, "small.jpg"), os.path.join(tmp, "large.jpg")
        jpeg(small, 1024)
        jpeg(large, LARGE)
        source = os.path.join(ROOT, "Fixtures", "meta-itunes.m4a")
        peaks = {}
        for case in ("rewrite", "in place", "copied back"):
            for label, image in (("small", small), ("large", large)):
                folder = os.path.join(tmp, case.replace(" ", "-") + "-" + label)
                os.makedirs(folder)
                path = os.path.join(folder, "file.m4a")
                shutil.copyfile(source, path)
                if case == "in place":
                    # Padding that holds the large cover: a rewrite with it, then without.
                    for args in (["--cover", large], ["--remove-cover"]):
                        status, _, err = run(tool, [*args, path])
                        assert status == 0, err
                if case == "copied back":
                    os.link(path, os.path.join(folder, "second-name.m4a"))
                status, peak, err = run(tool, ["--cover", image, path])
                made = {"rewrite": "moved into place", "in place": "in place", "copied back": "copied back"}[case]
                check(f"{case}, {label} cover: written {case}", status == 0 and made in err, err.strip()[-200:])
                peaks[case, label] = peak
                if have_mutagen:
                    r = mutagen_reader.run_code("import hashlib, mutagen.mp4, sys; print(hashlib.sha256(bytes("
                                                "mutagen.mp4.MP4(sys.argv[1]).tags['covr'][0])).hexdigest())", path)
                    check(f"{case}, {label} cover: mutagen reads the image's bytes",
                          r.stdout.decode().strip() == digest(image), r.stderr.decode(errors="replace")[-200:])
                elif not STRICT:
                    print(f"skipped (mutagen missing): reading back the {case} {label} cover")
            growth = peaks[case, "large"] - peaks[case, "small"]
            check(f"{case}: a {LARGE >> 20} MiB cover adds at most {BOUND >> 20} MiB to the peak memory",
                  growth <= BOUND, f"{peaks[case, 'small'] >> 10} KiB with a 1 KiB cover, "
                  f"{peaks[case, 'large'] >> 10} KiB with a {LARGE >> 20} MiB one")
        # A file that already holds the cover, its title edited: the cover is copied from
        # where it is (the copy loop, or the in-place buffer), never read into memory.
        for case in ("rewrite", "in place", "copied back"):
            for label, image in (("small", small), ("large", large)):
                folder = os.path.join(tmp, "kept-" + case.replace(" ", "-") + "-" + label)
                os.makedirs(folder)
                path = os.path.join(folder, "file.m4a")
                shutil.copyfile(source, path)
                status, _, err = run(tool, ["--cover", image, path])
                assert status == 0, err
                if case != "in place":
                    no_padding(path)
                if case == "copied back":
                    os.link(path, os.path.join(folder, "second-name.m4a"))
                status, peak, err = run(tool, ["--set", "title=kept cover", path])
                made = {"rewrite": "moved into place", "in place": "in place", "copied back": "copied back"}[case]
                check(f"title edited beside a {label} cover, {case}: written {case}", status == 0 and made in err,
                      err.strip()[-200:])
                peaks["kept " + case, label] = peak
                if have_mutagen:
                    r = mutagen_reader.run_code("import hashlib, mutagen.mp4, sys; t = mutagen.mp4.MP4(sys.argv[1])"
                                                ".tags; print(t['\\xa9nam'][0]); print(hashlib.sha256(bytes("
                                                "t['covr'][0])).hexdigest())", path)
                    ok = r.stdout.decode().split("\n")[:2] == ["kept cover", digest(image)]
                    check(f"title edited beside a {label} cover, {case}: mutagen reads the title and the image's "
                          "bytes", ok, "" if ok else (r.stdout + r.stderr).decode(errors="replace")[-200:])
                elif not STRICT:
                    print(f"skipped (mutagen missing): reading back the kept {label} cover, {case}")
            growth = peaks["kept " + case, "large"] - peaks["kept " + case, "small"]
            check(f"title edited, {case}: a {LARGE >> 20} MiB cover in the file adds at most {BOUND >> 20} MiB to "
                  "the peak memory", growth <= BOUND, f"{peaks['kept ' + case, 'small'] >> 10} KiB beside a 1 KiB "
                  f"cover, {peaks['kept ' + case, 'large'] >> 10} KiB beside a {LARGE >> 20} MiB one")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    checks.finish()


if __name__ == "__main__":
    main()
