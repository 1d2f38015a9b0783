"""The extract-audio binary the conformance scripts test: $EXTRACT_AUDIO (as .ci/run sets it,
to the binary it built), else a release build of the package."""

import os

from oracle import CORPUS, ROOT
from oracle.report import fail_before_start
from oracle.run import run


def extract_audio(root=ROOT):
    """The binary's path, or None after printing the build's output and the scripts' closing
    line ("0 passed, 1 failed") when the package does not build."""
    tool = os.environ.get("EXTRACT_AUDIO")
    if tool:
        return tool
    build = run("swift", "build", "-c", "release", "-q", cwd=root, timeout=1800)
    if build.returncode != 0:
        print(build.stdout.decode() + build.stderr.decode())
        print("0 passed, 1 failed")
        return None
    bindir = run("swift", "build", "-c", "release", "--show-bin-path", cwd=root).stdout.decode().strip()
    return os.path.join(bindir, "extract-audio")


def extract_audio_and_corpus(root=ROOT):
    """extract_audio's binary when the corpus folder is there too, else None after the
    closing lines that say why."""
    tool = extract_audio(root)
    if tool is not None and not os.path.isdir(CORPUS):
        fail_before_start(f"the corpus folder {CORPUS} is missing")
        return None
    return tool
