"""The extract-audio binary the conformance scripts test: $EXTRACT_AUDIO (as .ci/run sets it,
to the binary it built), else a release build of the package at ROOT."""

import os
import subprocess


def extract_audio(root):
    """The binary's path, or None after printing the build's output and the scripts' closing
    line ("0 passed, 1 failed") when the package does not build."""
    tool = os.environ.get("EXTRACT_AUDIO")
    if tool:
        return tool
    build = subprocess.run(["swift", "build", "-c", "release", "-q"], cwd=root, capture_output=True,
                           stdin=subprocess.DEVNULL, timeout=1800)
    if build.returncode != 0:
        print(build.stdout.decode() + build.stderr.decode())
        print("0 passed, 1 failed")
        return None
    bindir = subprocess.run(["swift", "build", "-c", "release", "--show-bin-path"], cwd=root,
                            capture_output=True, stdin=subprocess.DEVNULL).stdout.decode().strip()
    return os.path.join(bindir, "extract-audio")
