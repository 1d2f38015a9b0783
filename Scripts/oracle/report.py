"""The checks' lines and counts, and the closing "N passed, M failed" line .ci/run sums.

STRICT: under CI=true or REQUIRE_ORACLES=1 a missing oracle is a failure, elsewhere a
printed skip (never a pass). A Tally's KNOWN registry maps (input, check prefix) to the open
issue a check is known to fail for: such a failure is printed KNOWN and listed before the
closing line, counted neither as passed nor as failed; once the check passes it counts as
a pass. Never a player's fault: those are the scripts' allowances."""

import concurrent.futures
import contextlib
import os
import shutil
import sys
import tempfile
import threading

STRICT = os.environ.get("CI", "").lower() in ("true", "1") or os.environ.get("REQUIRE_ORACLES") == "1"


class Tally:
    """The counts of one run, shared by the threads that check inputs in parallel."""

    def __init__(self, known=None):
        self.lock = threading.Lock()
        self.passed = 0
        self.failed = 0
        self.registry = dict(known or {})
        self.known = []

    def count(self, ok):
        with self.lock:
            if ok:
                self.passed += 1
            else:
                self.failed += 1
        return ok

    def reason(self, name, check):
        """Why `check` of input `name` is known to fail (the registry's entry), or None."""
        return next((why for (who, prefix), why in self.registry.items()
                     if who == name and check.startswith(prefix)), None)

    def finish(self, known_heading=None):
        """Prints the known failures (under known_heading, "{n}" their count) and the closing
        line; the exit status (1 on any failure)."""
        if self.known and known_heading:
            print(known_heading.format(n=len(self.known)))
            for line in self.known:
                print("  " + line[:300])
        print(f"{self.passed} passed, {self.failed} failed")
        return 1 if self.failed else 0


def fail_before_start(reason):
    """The closing lines of a run that cannot start (its setup is missing): one failure."""
    print(f"FAIL {reason}")
    print("0 passed, 1 failed")
    return 1


class Report:
    """The lines of one input, printed together once it is done (see print_reports):
    "ok   NAME: CHECK (1.2 s): detail", "FAIL …", "KNOWN …", "skipped (why): NAME: CHECK".
    Without a name the lines start with the check; detail_if_ok=False prints a detail only
    on failure; digits: the seconds' decimals."""

    def __init__(self, tally, name=None, digits=1, detail_if_ok=True):
        self.tally = tally
        self.name = name
        self.digits = digits
        self.detail_if_ok = detail_if_ok
        self.lines = []

    def _what(self, check):
        return check if self.name is None else f"{self.name}: {check}"

    def check(self, ok, check, detail="", seconds=None):
        took = "" if seconds is None else f" ({seconds:.{self.digits}f} s)"
        reason = None if ok or self.name is None else self.tally.reason(self.name, check)
        if reason:
            with self.tally.lock:
                self.tally.known.append(f"{self.name}: {check}: {detail} ({reason})")
            self.lines.append(f"KNOWN {self._what(check)}{took}: {detail} ({reason})")
            return ok
        self.tally.count(ok)
        shown = detail if detail and (not ok or self.detail_if_ok) else ""
        self.lines.append(("ok   " if ok else "FAIL ") + self._what(check) + took + (": " + shown if shown else ""))
        return ok

    def skip(self, check, reason):
        self.lines.append(f"skipped ({reason}): {self._what(check)}")

    def note(self, text):
        self.lines.append(f"       {text}")

    @contextlib.contextmanager
    def guarded(self, tmp_root):
        """A temporary folder in tmp_root for the input's checks, removed afterwards; a crash
        of the script inside is the failed check "script", not a pass."""
        tmp = tempfile.mkdtemp(dir=tmp_root)
        try:
            yield tmp
        except Exception as error:  # a crash of the script is a failure, not a pass
            self.check(False, "script", repr(error))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


def print_reports(check_input, inputs, workers=2):
    """Runs check_input(*args) for each tuple of inputs, `workers` at a time, and prints each
    returned Report's lines in the inputs' order as soon as they are ready."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        jobs = [pool.submit(check_input, *args) for args in inputs]
        for job in jobs:
            for line in job.result().lines:
                print(line, flush=True)


class Checks:
    """The checks of a script that prints each as it is made: "ok   NAME: detail" or "FAIL
    NAME: detail" on `out` (a detail longer than `limit` is cut to it), counted for the
    closing line, which finish prints on stdout."""

    def __init__(self, out=None, limit=None):
        self.out = out or sys.stdout
        self.limit = limit
        self.results = []

    def check(self, name, ok, detail="", detail_if_ok=True):
        """One check; its detail is printed on failure, and on success unless detail_if_ok is
        False (a detail that only explains a failure, such as an exit status and stderr)."""
        self.results.append(bool(ok))
        detail = "" if ok and not detail_if_ok else detail
        if self.limit and len(detail) > self.limit:
            detail = detail[:self.limit - 3] + "..."
        print(("ok   " if ok else "FAIL ") + name + (f": {detail}" if detail else ""), file=self.out, flush=True)
        return ok

    def skip(self, what, reason):
        print(f"skipped ({reason}): {what}", file=self.out, flush=True)

    def missing(self, name, detail, reason, what):
        """An oracle that is not here: the failed check NAME under STRICT, else a printed skip
        of `what` (never a pass)."""
        if STRICT:
            self.check(name, False, detail)
        else:
            self.skip(what, reason)

    def finish(self):
        """Prints the closing line and exits (1 on any failure)."""
        print(f"{self.results.count(True)} passed, {self.results.count(False)} failed")
        sys.exit(0 if all(self.results) else 1)
