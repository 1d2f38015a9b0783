#!/usr/bin/env python3
"""`extract-audio probe --json` against ffprobe, for one input file.

usage: probe_check.py EXTRACT_AUDIO FIXTURE

Runs `EXTRACT_AUDIO probe --json FIXTURE` and `ffprobe -show_streams FIXTURE` and
requires:
  - the same number of tracks as ffprobe has streams, with the same track IDs (ffprobe's
    stream "id"); streams with disposition attached_pic are cover art from a covr item,
    not tracks, and are left out (the ok line says how many);
  - per track: format == ffprobe's codec_tag_string; kind "audio"/"video" exactly where
    ffprobe's codec_type is audio/video;
  - audio: sample_rate and channels equal to ffprobe's;
  - duration within one sample of ffprobe's stream duration: 1/sample_rate for audio,
    one frame (1/avg_frame_rate) for video, one tick of the stream's time base for
    other tracks; plus 0.5 µs for ffprobe's six printed decimals.
Prints one reason and exits 1 when something differs; exits 0 otherwise, printing
nothing or the known deviation it allowed. A missing probe subcommand is a failure
("probe not available").

Known deviation (FFmpeg 5.1): in a fragmented file with sidx boxes (-movflags +dash),
ffprobe may give a track the duration of its last sidx's earliest_presentation_time,
leaving out that last segment's subsegment_duration. Only where ffprobe's duration_ts
is exactly that value, and the track's samples (counted by Scripts/mp4box.py from the
trun boxes) add up to something else, the duration is checked against the samples'
total instead, and the deviation is printed.
"""

import json
import os
import subprocess
import sys
from fractions import Fraction

sys.dont_write_bytecode = True  # no __pycache__ in Scripts/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mp4box  # noqa: E402


class CheckFailed(Exception):
    pass


def run(args):
    return subprocess.run(args, stdin=subprocess.DEVNULL, capture_output=True)


def ffprobe_streams(path):
    result = run(["ffprobe", "-v", "error", "-show_streams", "-of", "json", path])
    if result.returncode != 0:
        raise CheckFailed(f"ffprobe exited {result.returncode}: {result.stderr.decode(errors='replace')}")
    return json.loads(result.stdout)["streams"]


def our_probe(extract, path):
    result = run([extract, "probe", "--json", path])
    said = result.stderr.decode(errors="replace").strip()
    if result.returncode == 64 or "unknown option" in said or "usage" in said.lower():
        raise CheckFailed(f"probe not available: `extract-audio probe --json` exited "
                          f"{result.returncode}: {said[:200]}")
    if result.returncode != 0:
        raise CheckFailed(f"extract-audio probe --json exited {result.returncode}: {said[:300]}")
    try:
        return json.loads(result.stdout)
    except json.JSONDecodeError as error:
        raise CheckFailed(f"probe --json output is not JSON ({error}): "
                          f"{result.stdout[:200].decode(errors='replace')}")


def rate(text):
    """ffprobe's "25/1" as a Fraction, or None for 0/0."""
    if not text or text.startswith("0/"):
        return None
    return Fraction(text)


def sidx_quirk(path, stream):
    """(seconds, note) when ffprobe's duration of this stream is the last sidx's
    earliest_presentation_time rather than the track's real duration; else None."""
    with open(path, "rb") as f:
        data = f.read()
    boxes = mp4box.read_tree(data, trailing_ok=True)
    if not mp4box.is_fragmented(boxes):
        return None
    tid = int(stream["id"], 16)
    indexes = [x for x in mp4box.segment_indexes(data, boxes) if x["reference_id"] == tid]
    if not indexes or stream.get("duration_ts") is None:
        return None
    last = indexes[-1]
    if int(stream["duration_ts"]) != last["earliest_presentation_time"]:
        return None
    total = sum(s["duration"] for s in mp4box.fragment_samples(data, boxes, tid))
    if total == last["earliest_presentation_time"]:
        return None
    timescale = last["timescale"]
    note = (f"known deviation: ffprobe's track {tid} duration {stream['duration']} s is the last "
            f"sidx's earliest_presentation_time ({last['earliest_presentation_time']}/{timescale}, "
            f"without its subsegment_duration {sum(last['subsegment_durations'])}); checked "
            f"against the samples' total {total}/{timescale} = {total / timescale:.6f} s")
    return total / timescale, note


def check(extract, path):
    notes = []
    ours = our_probe(extract, path)
    theirs = ffprobe_streams(path)
    # Cover art: ffprobe shows each image of a covr item as a video stream with
    # disposition attached_pic. They are not tracks (no trak, no stream id to match).
    pictures = [s for s in theirs if (s.get("disposition") or {}).get("attached_pic")]
    if pictures:
        theirs = [s for s in theirs if s not in pictures]
        notes.append(f"{len(pictures)} attached picture(s) (covr images, not tracks) left out")
    tracks = ours.get("tracks")
    if not isinstance(tracks, list):
        raise CheckFailed("probe --json has no \"tracks\" list")
    if len(tracks) != len(theirs):
        raise CheckFailed(f"{len(tracks)} tracks, ffprobe has {len(theirs)} streams "
                          f"({', '.join(s.get('codec_type', '?') for s in theirs)})")
    by_id = {}
    for track in tracks:
        by_id[track.get("id")] = track
    for stream in theirs:
        tid = int(stream["id"], 16)
        track = by_id.get(tid)
        where = f"track {tid}"
        if track is None:
            raise CheckFailed(f"ffprobe's stream {stream['index']} (id {stream['id']}) has no "
                              f"track with that id in probe --json")
        kind = stream.get("codec_type")
        if track.get("format") != stream.get("codec_tag_string"):
            raise CheckFailed(f"{where} format {track.get('format')!r}, ffprobe codec_tag_string "
                              f"{stream.get('codec_tag_string')!r}")
        if (kind in ("audio", "video") or track.get("kind") in ("audio", "video")) \
                and track.get("kind") != kind:
            raise CheckFailed(f"{where} kind {track.get('kind')!r}, ffprobe codec_type {kind!r}")
        if kind == "audio":
            for key in ("sample_rate", "channels"):
                if track.get(key) != int(stream[key]):
                    raise CheckFailed(f"{where} {key} {track.get(key)!r}, ffprobe {stream[key]}")
            unit = Fraction(1, int(stream["sample_rate"]))
            unit_name = "one sample"
        elif kind == "video":
            fps = rate(stream.get("avg_frame_rate")) or rate(stream.get("r_frame_rate"))
            if fps is None:
                raise CheckFailed(f"{where}: ffprobe gives no frame rate")
            unit = 1 / fps
            unit_name = "one frame"
        else:
            unit = Fraction(stream["time_base"])
            unit_name = "one tick"
        if stream.get("duration") in (None, "N/A"):
            raise CheckFailed(f"{where}: ffprobe reports no duration")
        duration = track.get("duration")
        if not isinstance(duration, (int, float)):
            raise CheckFailed(f"{where} duration {duration!r} is not a number")
        reference = float(stream["duration"])
        quirk = sidx_quirk(path, stream)
        if quirk:
            reference = quirk[0]
            notes.append(quirk[1])
        tolerance = float(unit) + 5e-7
        if abs(duration - reference) > tolerance:
            raise CheckFailed(f"{where} ({kind}) duration {duration}, ffprobe {stream['duration']}: "
                              f"off by {abs(duration - reference):.6f} s, more than {unit_name} "
                              f"({float(unit):.6f} s)")
    return notes


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    try:
        for note in check(sys.argv[1], sys.argv[2]):
            print(note)
    except CheckFailed as failure:
        print(failure)
        sys.exit(1)


if __name__ == "__main__":
    main()
