"""mutagen's view of a file's tags. mutagen (what Picard and beets use) is installed for the
distribution's /usr/bin/python3, which need not be the python3 a script runs under: code
that reads with it runs there."""

import os

from oracle.run import run

PYTHON = "/usr/bin/python3"


def available():
    """Whether /usr/bin/python3 can import mutagen."""
    return os.path.exists(PYTHON) and run(PYTHON, "-c", "import mutagen").returncode == 0


def run_code(code, *args, **kw):
    """Runs python code under /usr/bin/python3 (mutagen's), with args as sys.argv[1:]."""
    return run(PYTHON, "-c", code, *args, **kw)
