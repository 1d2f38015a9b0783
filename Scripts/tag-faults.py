#!/usr/bin/env python3
"""Tag edits under failing system calls and kills (issue 28): every call of a normal edit.

Builds Scripts/faults/shim.c (an LD_PRELOAD shim) with the system's C compiler, then, for
each edit below, counts the calls a normal run makes of each kind the shim knows (write and
pwrite to regular files, fsync/fdatasync, rename, renameat2, copy_file_range, ftruncate)
and runs the edit again once per call and per way of failing it:
  - the call fails with ENOSPC, and again with EIO: the file must then hold the original's
    bytes with a failure status (74, or 73 for a failed rename), or the finished edit's
    bytes with status 0 (or 71 when only the folder's sync after the rename failed): the
    finished edit's bytes are those of the same edit run without the shim, except that where
    a failure came after the new tags were in place (clearing the old ones), bytes the
    finished edit zeroes may still hold the old ones;
  - SIGKILL right before the call, and right after it: the file must open with the
    original's tags or the finished edit's (ffprobe's format tags), its packets unchanged
    (ffprobe's CRC-32 of each), and no second file but the temporary copy a kill cannot
    remove, which the next edit of the file then removes, saying so.
The edits: in place (a file with padding from an earlier edit), in place with a chapter
list (the chapter mdat too), two rewrites (a file without padding: audio with moov
after mdat, and video with moov first, whose chunk offsets all move), and the rewrite of a
file with a second name (a hard link), which is written beside it, synced, renamed to say
it is complete and copied back over the file: there a failure or kill may also leave the
file part new with that complete copy beside it (a failure then exits 74 saying so), and
the next `tag` run on the file (a listing) must copy it over first, saying so, leaving the
finished edit's bytes; the two names must stay one file throughout.

Then the interleavings, made deterministic by pausing the edit (the shim's FAULT_PAUSE) at
each call of each kind it makes, one at a time, while another program acts:
  - another `tag` edit of the same file: it must exit 75 (the file is locked) and change
    nothing; the paused edit, resumed, must finish as it does alone;
  - another program renames a new file over the path, and a second `tag` edits that new
    file: the second must succeed, and the paused edit, resumed, must exit 75 and leave the
    new file exactly as the second edit left it, with nothing else in the folder.

Prints one `ok`/`FAIL` line per edit and call kind, the last line "N passed, M failed";
exits 1 on failure. Needs cc and ffprobe; a missing one is a failure when CI=true or
REQUIRE_ORACLES=1, a printed skip otherwise. Set EXTRACT_AUDIO to a built binary to skip
the release build.
"""
import errno
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Scripts"))
from oracle.binary import extract_audio  # noqa: E402
from oracle.ffprobe import ffprobe  # noqa: E402
from oracle.report import Checks  # noqa: E402
from oracle.run import run  # noqa: E402

KINDS = ["write", "pwrite", "fsync", "rename", "renameat2", "copy_file_range", "ftruncate"]
checks = Checks()
check, finish = checks.check, checks.finish
# The edits paused at each call while another program acts (one in place, one rewrite).
INTERLEAVED = ("in place", "rewrite, moov after mdat")


def probe(path):
    """(format tags, [(size, CRC-32)] of every packet) from ffprobe, or None if it fails."""
    r = ffprobe(path, "-show_entries", "format_tags:packet=stream_index,size,data_hash", "-show_data_hash", "CRC32")
    if r.returncode != 0:
        return None
    found = json.loads(r.stdout or b"{}")
    return (found.get("format", {}).get("tags", {}),
            [(p.get("stream_index"), p.get("size"), p.get("data_hash")) for p in found.get("packets", [])])


def zeroed_only(got, done):
    """`got` is the finished edit's bytes but where the finished edit has zeros (the old
    tags' bytes it clears, left when clearing failed after the new tags were in place)."""
    return len(got) == len(done) and all(a == b or b == 0 for a, b in zip(got, done))


class Edit:
    def __init__(self, tool, shim, tmp, name, source, args, prepare=(), linked=False):
        self.tool, self.shim, self.name, self.args, self.linked = tool, shim, name, args, linked
        self.folder = os.path.join(tmp, name.replace(" ", "-"))
        os.makedirs(self.folder)
        self.source = os.path.join(self.folder, "original" + os.path.splitext(source)[1])
        shutil.copyfile(source, self.source)
        for step in prepare:  # e.g. an earlier edit that leaves padding
            r = self.run_plain(self.source, step)
            assert r.returncode == 0, r.stderr
        with open(self.source, "rb") as f:
            self.original = f.read()
        done = self.fresh("done")
        r = self.run_plain(done, args)
        self.ready = r.returncode == 0
        self.setup_error = r.stderr.decode(errors="replace")
        with open(done, "rb") as f:
            self.done = f.read()
        self.method = ("in place" if "in place" in self.setup_error else
                       "copied back" if "copied back" in self.setup_error else "rewrite")
        self.probe_original, self.probe_done = probe(self.source), probe(done)

    def fresh(self, label):
        path = os.path.join(self.folder, label, "file" + os.path.splitext(self.source)[1])
        os.makedirs(os.path.dirname(path), exist_ok=True)
        for name in os.listdir(os.path.dirname(path)):
            os.unlink(os.path.join(os.path.dirname(path), name))
        with open(path, "wb") as f:
            f.write(self.original)
        if self.linked:  # The second name, in a folder of its own (the file's stays clean).
            other = self.link_of(path)
            os.makedirs(os.path.dirname(other), exist_ok=True)
            if os.path.exists(other):
                os.unlink(other)
            os.link(path, other)
        return path

    def link_of(self, path):
        return os.path.join(os.path.dirname(path) + "-link", "second-name" + os.path.splitext(path)[1])

    def run_plain(self, path, args, env=None):
        return run(self.tool, "tag", *args, path, env=env, timeout=60)

    def run_shim(self, path, extra):
        env = dict(os.environ, LD_PRELOAD=self.shim, **extra)
        return self.run_plain(path, self.args, env)

    def counts(self):
        path = self.fresh("count")
        counts_file = os.path.join(self.folder, "counts.txt")
        r = self.run_shim(path, {"FAULT_COUNTS": counts_file})
        with open(path, "rb") as f:
            same = f.read() == self.done
        with open(counts_file) as f:
            counts = {k: int(n) for k, n in (line.split() for line in f)}
        return r.returncode == 0 and same, counts

    def sweep(self, kind, count):
        """Every call of `kind`: failed with ENOSPC and EIO, killed before and after."""
        problems, outcomes = [], {}
        for n in range(1, count + 1):
            for label, extra in (("ENOSPC", {"FAULT_ERRNO": str(errno.ENOSPC)}),
                                 ("EIO", {"FAULT_ERRNO": str(errno.EIO)}),
                                 ("kill before", {"FAULT_KILL": "before"}),
                                 ("kill after", {"FAULT_KILL": "after"})):
                path = self.fresh("sweep")
                r = self.run_shim(path, dict(extra, FAULT_CALL=kind, FAULT_AT=str(n)))
                with open(path, "rb") as f:
                    got = f.read()
                others = sorted(set(os.listdir(os.path.dirname(path))) - {os.path.basename(path)})
                where = f"{kind} #{n} {label}"
                if self.linked:
                    outcome = self.judge_linked(path, got, r, others, where, problems, label.startswith("kill"))
                elif label.startswith("kill"):
                    outcome = self.judge_kill(path, got, r, others, where, problems)
                else:
                    outcome = self.judge_failure(got, r, others, where, problems)
                outcomes[outcome] = outcomes.get(outcome, 0) + 1
        return problems, outcomes

    def judge_failure(self, got, r, others, where, problems):
        status = r.returncode
        message = r.stderr.decode(errors="replace").strip().splitlines()
        if others:
            problems.append(f"{where}: left {others}")
        if got == self.original and status in (73, 74):
            return "original, failed"
        if got == self.done and status in (0, 71):
            return "finished" + (", not synced (71)" if status == 71 else "")
        if status == 0 and zeroed_only(got, self.done):
            if not any("could not be cleared" in line for line in message):
                problems.append(f"{where}: old bytes left without a warning")
            return "finished, old bytes left (warned)"
        state = ("the original" if got == self.original else "the finished edit" if got == self.done
                 else "neither the original nor the finished edit")
        problems.append(f"{where}: exit {status} with {state}: {message[-1][:160] if message else ''}")
        return "wrong"

    def judge_linked(self, path, got, r, others, where, problems, killed):
        """A copied-back rewrite: the original (failed), the finished edit, or part new with
        the complete copy beside it, which the next run (a listing) copies over first."""
        status = r.returncode
        message = r.stderr.decode(errors="replace").strip().splitlines()
        ready = [o for o in others if ".extract-audio-copy-" in o]
        temporaries = [o for o in others if ".extract-audio-" in o and o.endswith(".tmp") and o not in ready]
        if set(others) - set(ready) - set(temporaries) or (temporaries and not killed):
            problems.append(f"{where}: left {others}")
        if killed:
            if status not in (-9, 0):
                problems.append(f"{where}: exit {status}")
            if got == self.original:
                outcome = "original"
            elif got == self.done:
                outcome = "finished"
            elif ready:
                outcome = "part new, complete copy beside"
            else:
                problems.append(f"{where}: neither the original nor the finished edit, and no complete copy")
                return "damaged"
        elif ready:
            if status != 74 or not any("the next tag run" in line for line in message):
                problems.append(f"{where}: a complete copy left with exit {status}: {message[-1:]}")
            outcome = "failed while copying back (74), complete copy beside"
        elif got == self.original and status in (73, 74):
            outcome = "original, failed"
        elif got == self.done and status in (0, 71):
            outcome = "finished" + (", not synced (71)" if status == 71 else "")
        else:
            state = ("the original" if got == self.original else "the finished edit" if got == self.done
                     else "neither the original nor the finished edit")
            problems.append(f"{where}: exit {status} with {state}: {message[-1][:160] if message else ''}")
            return "wrong"
        if ready:
            again = self.run_plain(path, [])
            with open(path, "rb") as f:
                now = f.read()
            left = [o for o in os.listdir(os.path.dirname(path)) if o in ready]
            if (again.returncode != 0 or left or now != self.done
                    or b"finished an interrupted edit" not in again.stderr):
                problems.append(f"{where}: the next run did not finish the copy (exit {again.returncode}, "
                                f"{'the finished edit' if now == self.done else 'other bytes'}: "
                                f"{again.stderr.decode(errors='replace')[:160]})")
            outcome += ", finished by the next run"
        elif temporaries:
            again = self.run_plain(path, ["--set", "comment=after a kill"])
            if again.returncode != 0 or b"a temporary file left by an interrupted edit" not in again.stderr:
                problems.append(f"{where}: the next edit did not remove {temporaries}")
            outcome += ", temporary removed by the next edit"
        first, second = os.stat(path), os.stat(self.link_of(path))
        if first.st_ino != second.st_ino or first.st_nlink != 2:
            problems.append(f"{where}: the two names are no longer one file")
        return outcome

    def judge_kill(self, path, got, r, others, where, problems):
        if r.returncode not in (-9, 0):
            problems.append(f"{where}: exit {r.returncode}")
        temporaries = [o for o in others if ".extract-audio-" in o and o.endswith(".tmp")]
        if set(others) - set(temporaries):
            problems.append(f"{where}: left {sorted(set(others) - set(temporaries))}")
        if got == self.original:
            outcome = "original"
        elif got == self.done or zeroed_only(got, self.done):
            outcome = "finished"
        else:
            seen = probe(path)
            if seen == self.probe_original:
                outcome = "opens as the original"
            elif seen == self.probe_done:
                outcome = "opens as the finished edit"
            else:
                problems.append(f"{where}: the file opens as neither the original nor the finished edit")
                return "damaged"
        if temporaries:
            # The next edit of the file removes what the killed one left, and says so.
            again = self.run_plain(path, ["--set", "comment=after a kill"])
            left = [o for o in os.listdir(os.path.dirname(path)) if o in temporaries]
            if again.returncode != 0 or left or b"a temporary file left by an interrupted edit" not in again.stderr:
                problems.append(f"{where}: the next edit did not remove {temporaries} "
                                f"(exit {again.returncode}: {again.stderr.decode(errors='replace')[:160]})")
            outcome += ", temporary removed by the next edit"
        return outcome


def interleavings(edit, counts):
    """Pauses `edit` at every call it makes of each kind; see the module's docstring."""
    problems, seen = [], 0
    other = edit.fresh("other-source")  # Another version: what another program publishes.
    r = edit.run_plain(other, ["--set", "title=Another program"])
    assert r.returncode == 0, r.stderr
    with open(other, "rb") as f:
        replacement = f.read()
    second = ["--set", "comment=The second edit"]
    expected = edit.fresh("other-expected")
    with open(expected, "wb") as f:
        f.write(replacement)
    assert edit.run_plain(expected, second).returncode == 0
    with open(expected, "rb") as f:
        replaced_and_edited = f.read()
    # After a rewrite's rename (its folder sync) the edit is published: the second edit then
    # edits the finished file, and the paused one exits 0.
    with open(expected, "wb") as f:
        f.write(edit.done)
    assert edit.run_plain(expected, second).returncode == 0
    with open(expected, "rb") as f:
        finished_and_edited = f.read()
    for kind in KINDS:
        for n in range(1, counts.get(kind, 0) + 1):
            for scenario in ("another tag edit", "replaced, then edited"):
                where = f"{kind} #{n}, {scenario}"
                seen += 1
                path = edit.fresh("interleave")
                inode = os.stat(path).st_ino
                folder = os.path.join(edit.folder, "pause")
                shutil.rmtree(folder, ignore_errors=True)
                os.makedirs(folder)
                env = dict(os.environ, LD_PRELOAD=edit.shim, FAULT_CALL=kind, FAULT_AT=str(n), FAULT_PAUSE=folder)
                paused = subprocess.Popen([edit.tool, "tag", *edit.args, path], stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, env=env)
                for _ in range(3000):
                    if os.path.exists(os.path.join(folder, "paused")) or paused.poll() is not None:
                        break
                    time.sleep(0.01)
                if not os.path.exists(os.path.join(folder, "paused")):
                    paused.kill()
                    problems.append(f"{where}: never reached the pause")
                    continue
                published = os.stat(path).st_ino != inode
                if scenario == "another tag edit":
                    with open(path, "rb") as f:
                        before = f.read()
                    r = edit.run_plain(path, second)
                    with open(path, "rb") as f:
                        after = f.read()
                    if published:
                        if r.returncode != 0 or after != finished_and_edited:
                            problems.append(f"{where}: after the publish, the second edit exited {r.returncode}")
                    elif r.returncode != 75 or after != before:
                        problems.append(f"{where}: the second edit exited {r.returncode}"
                                        + ("" if after == before else " and changed the file"))
                else:
                    staged = os.path.join(os.path.dirname(path), "staged-by-another-program")
                    with open(staged, "wb") as f:
                        f.write(replacement)
                    os.replace(staged, path)
                    r = edit.run_plain(path, second)
                    if r.returncode != 0:
                        problems.append(f"{where}: the second edit (of the new file) exited {r.returncode}: "
                                        f"{r.stderr.decode(errors='replace')[:160]}")
                open(os.path.join(folder, "resume"), "w").close()
                out, err = paused.communicate(timeout=60)
                with open(path, "rb") as f:
                    got = f.read()
                left = sorted(set(os.listdir(os.path.dirname(path))) - {os.path.basename(path)})
                if left:
                    problems.append(f"{where}: left {left}")
                if published:
                    wanted = finished_and_edited if scenario == "another tag edit" else replaced_and_edited
                    if paused.returncode != 0 or got != wanted:
                        problems.append(f"{where}: after the publish, the paused edit exited {paused.returncode}"
                                        + ("" if got == wanted else " and the file is not the second edit's"))
                elif scenario == "another tag edit":
                    if paused.returncode != 0 or got != edit.done:
                        problems.append(f"{where}: the paused edit exited {paused.returncode}"
                                        + ("" if got == edit.done else " without the finished edit's bytes"))
                elif paused.returncode != 75 or got != replaced_and_edited:
                    problems.append(f"{where}: the paused edit exited {paused.returncode}"
                                    + ("" if got == replaced_and_edited else
                                       ", and the new file is not as the second edit left it")
                                    + f": {err.decode(errors='replace').strip()[:160]}")
    return problems, seen


def main():
    tool = extract_audio(ROOT)
    if tool is None:
        sys.exit(1)
    missing = [t for t in ("cc", "ffprobe") if shutil.which(t) is None]
    if missing:
        checks.missing(f"oracles present ({', '.join(missing)})", "missing", f"{', '.join(missing)} missing",
                       "every fault sweep")
        finish()
    tmp = tempfile.mkdtemp(prefix="tag-faults-")
    try:
        shim = os.path.join(tmp, "shim.so")
        built = run("cc", "-shared", "-fPIC", "-O2", "-Wall", "-Werror", "-o", shim,
                    os.path.join(ROOT, "Scripts", "faults", "shim.c"), "-ldl")
        check("the fault shim builds", built.returncode == 0, built.stderr.decode(errors="replace")[:300])
        if built.returncode != 0:
            finish()
        chapters = os.path.join(tmp, "chapters.txt")
        with open(chapters, "w") as f:
            f.write("00:00:00.000 Start\n00:00:00.500 Middle\n")
        fixture = lambda name: os.path.join(ROOT, "Fixtures", name)  # noqa: E731
        edits = [
            ("in place", fixture("meta-itunes.m4a"), ["--set", "title=Faulted", "--remove", "comment"],
             [["--set", "title=Padded"]]),
            ("in place with chapters", fixture("meta-itunes.m4a"), ["--chapters-from", chapters, "--set", "title=C"],
             [["--set", "title=Padded"]]),
            ("rewrite, moov after mdat", fixture("meta-itunes.m4a"),
             ["--set", "title=Rewritten", "--cover", fixture("images/cover.jpg")], []),
            ("rewrite, moov first (offsets move)", fixture("meta-itunes-video.mp4"),
             ["--set", "title=Rewritten", "--cover", fixture("images/cover.png")], []),
            ("rewrite of a hard-linked file (copied back)", fixture("meta-itunes.m4a"),
             ["--set", "title=Copied back", "--cover", fixture("images/cover.jpg")], []),
        ]
        for name, source, args, prepare in edits:
            edit = Edit(tool, shim, tmp, name, source, args, prepare, linked="hard-linked" in name)
            ready = edit.ready and edit.probe_done is not None
            if not check(f"{name}: the edit succeeds without faults", ready, "" if ready else edit.setup_error[:200]):
                continue
            expected_method = ("in place" if name.startswith("in place") else
                               "copied back" if edit.linked else "rewrite")
            check(f"{name}: made {expected_method}", edit.method == expected_method,
                  "" if edit.method == expected_method else edit.setup_error[:200])
            same, counts = edit.counts()
            check(f"{name}: the shim alone changes nothing", same, str(counts))
            print(f"     {name}: calls of a normal edit: "
                  + ", ".join(f"{k} {counts.get(k, 0)}" for k in KINDS if counts.get(k)), flush=True)
            for kind in KINDS:
                if not counts.get(kind):
                    continue
                problems, outcomes = edit.sweep(kind, counts[kind])
                check(f"{name}: each of {counts[kind]} {kind} call(s) failed (ENOSPC, EIO) or killed (before, after)",
                      not problems, "; ".join(problems[:4]) if problems else
                      ", ".join(f"{v}× {k}" for k, v in sorted(outcomes.items())))
            if name in INTERLEAVED:
                problems, seen = interleavings(edit, counts)
                check(f"{name}: paused at each of its calls ({seen} interleavings) while another edit runs or "
                      "another program replaces the file", not problems, "; ".join(problems[:4]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    finish()


if __name__ == "__main__":
    main()
