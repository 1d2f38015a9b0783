"""The oracles the conformance scripts judge extract-audio by, run one way each.

- run: every subprocess (stdin from /dev/null, output captured).
- binary: which extract-audio a script tests ($EXTRACT_AUDIO, else a release build).
- ffprobe, gst, mutagen_reader: FFmpeg's, GStreamer's and mutagen's view of a file.
- report: the checks' lines, their counts, the closing "N passed, M failed" line that
  .ci/run sums, STRICT (a missing oracle fails under CI) and the KNOWN registry.

The one box parser is Scripts/mp4box.py. Standard library only: the scripts run under
python3 and /usr/bin/python3 (the one with mutagen)."""

import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(ROOT, "Fixtures")
# The shared corpus of real files: $CORPUS_DIR, else ../shared/corpus next to the checkout.
CORPUS = os.environ.get("CORPUS_DIR") or os.path.join(ROOT, "..", "shared", "corpus")


def corpus_names():
    """The corpus's media files (not its MANIFEST.tsv or notes), sorted."""
    return sorted(n for n in os.listdir(CORPUS) if os.path.isfile(os.path.join(CORPUS, n))
                  and not n.endswith((".tsv", ".md")))
