"""FFmpeg's view of a file: ffprobe with JSON output, and its packets."""

import json

from oracle.run import run


def ffprobe(path, *options, **kw):
    """`ffprobe -v error OPTIONS -of json PATH` (run's keywords: text, timeout…)."""
    return run("ffprobe", "-v", "error", *options, "-of", "json", path, **kw)


def parsed(result):
    """The JSON an ffprobe run printed ({} for none); raises ValueError on anything else."""
    return json.loads(result.stdout or "{}")


def packets(path, select=None, ignore_editlist=False, crc=True, entries=None, streams=False, **kw):
    """ffprobe's packets of PATH as its JSON (see parsed): the stored packets with
    ignore_editlist (no edit list applied: as the file holds them), of the streams `select`
    picks (-select_streams), with CRC-32 data hashes when crc, only `entries`
    (-show_entries) when given, and the streams too when streams."""
    options = (["-ignore_editlist", "1"] if ignore_editlist else []) + (["-select_streams", select] if select else [])
    options += ["-show_packets"] + (["-show_streams"] if streams else []) + (
        ["-show_data_hash", "CRC32"] if crc else []) + (["-show_entries", entries] if entries else [])
    return ffprobe(path, *options, **kw)


def stream_duration(path, select):
    """The duration, in seconds, ffprobe gives the stream `select` picks ("a:0", "v:0")."""
    out = ffprobe(path, "-select_streams", select, "-show_entries", "stream=duration", text=True)
    return float(json.loads(out.stdout)["streams"][0]["duration"])


def format_tags(path, **kw):
    """The container's tags as ffprobe lists them (format_tags), {} when it lists none."""
    try:
        return parsed(ffprobe(path, "-show_entries", "format_tags", **kw)).get("format", {}).get("tags", {})
    except ValueError:
        return {}
