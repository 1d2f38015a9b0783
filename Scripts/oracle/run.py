"""Every program a script runs, run one way."""

import subprocess


def run(*args, **kw):
    """Runs a program (args: it and its arguments) and waits: stdin from /dev/null unless
    `input` is given, stdout and stderr captured (bytes; text=True for str), other keywords
    (timeout, cwd, env…) as subprocess.run takes them."""
    if "input" not in kw:
        kw.setdefault("stdin", subprocess.DEVNULL)
    return subprocess.run(args, capture_output=True, **kw)
