"""GStreamer: which elements it has (gst-inspect-1.0), and gst-launch-1.0 watched for a hang."""

import os
import shutil
import subprocess
import time

from oracle.run import run


def has(element):
    """Whether GStreamer has the element (gst-inspect-1.0 knows it)."""
    return shutil.which("gst-inspect-1.0") is not None and run("gst-inspect-1.0", element).returncode == 0


def launch_watched(pipeline, tmp, timeout=300, grace=5):
    """A gst-launch-1.0 command line (`pipeline`, the program first) with its output in files
    in `tmp`: (exit status, stdout, stderr). gst-launch-1.0 1.22 sometimes never exits after
    it has reported an error: on an init segment without samples (sp_pkg_live_audio_init.mp4:
    "This file contains no playable streams", then "pipeline doesn't want to preroll") 3 of
    12 runs hung until killed; in CI's corpus run of 466 s one did, until the 300 s timeout.
    Once an ERROR line is out the outcome is decided (corpus-conformance.py's gst_counts
    raises on it), so gst-launch gets `grace` seconds to exit, then is killed (status None).
    Without an ERROR line the timeout stands as subprocess.run's."""
    names = [os.path.join(tmp, "gst-stdout.txt"), os.path.join(tmp, "gst-stderr.txt")]

    def said():
        texts = []
        for name in names:
            with open(name, "rb") as f:
                texts.append(f.read())
        return texts
    with open(names[0], "wb") as stdout, open(names[1], "wb") as stderr:
        process = subprocess.Popen(pipeline, stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr)
        deadline, errored, status = time.monotonic() + timeout, None, None
        while True:
            try:
                status = process.wait(timeout=0.5)
                break
            except subprocess.TimeoutExpired:
                pass
            now = time.monotonic()
            if errored is None and any(b"ERROR" in text for text in said()):
                errored = now
            if (errored is not None and now - errored > grace) or now > deadline:
                process.kill()
                process.wait()
                if errored is None:
                    raise subprocess.TimeoutExpired(pipeline, timeout)
                break
    stdout, stderr = (text.decode(errors="replace") for text in said())
    return status, stdout, stderr
