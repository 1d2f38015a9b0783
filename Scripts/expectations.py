#!/usr/bin/env python3
"""The FFmpeg oracle: what `ffmpeg -map 0:a:0 -c:a copy -f ipod` makes of a fixture.

usage:
  expectations.py write FIXTURE OUT.json
      Make REF.m4a from FIXTURE with the reference command (in a temporary directory),
      ffprobe it and write OUT.json.
  expectations.py check FIXTURE REF.m4a EXPECTED.json OURS.m4a
      Conformance: re-derive the expectation from REF.m4a and require it to equal
      EXPECTED.json (ignoring ffmpeg_version); require OURS.m4a to match REF.m4a in
      ffprobe's packets, stream and format fields; require OURS to hold exactly one
      stream, of type audio, and to decode with no FFmpeg diagnostics. Prints nothing
      and exits 0 when all hold; prints one reason and exits 1 otherwise.

The JSON schema is described in Fixtures/README.md.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import zlib

sys.dont_write_bytecode = True  # no __pycache__ in Scripts/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mp4box  # noqa: E402

REFERENCE_COMMAND = "ffmpeg -nostdin -v error -y -i IN -map 0:a:0 -c:a copy -f ipod REF.m4a"

# Stream fields recorded, and the type each is stored as (ffprobe prints some as strings).
STREAM_FIELDS = [
    ("codec_name", str), ("codec_tag_string", str), ("profile", str),
    ("sample_rate", int), ("channels", int), ("channel_layout", str),
    ("time_base", str), ("start_pts", int), ("start_time", str),
    ("duration_ts", int), ("duration", str), ("nb_frames", int),
]
FORMAT_FIELDS = [("start_time", str), ("duration", str), ("nb_streams", int)]


class CheckFailed(Exception):
    pass


def run(args):
    result = subprocess.run(args, stdin=subprocess.DEVNULL, capture_output=True)
    if result.returncode != 0:
        raise CheckFailed(f"{' '.join(args)} exited {result.returncode}: "
                          f"{result.stderr.decode(errors='replace').strip()}")
    return result.stdout


def ffprobe_json(path, *options):
    return json.loads(run(["ffprobe", "-v", "error", *options, "-of", "json", path]))


def make_reference(fixture, ref):
    args = REFERENCE_COMMAND.split()
    args[args.index("IN")] = fixture
    args[args.index("REF.m4a")] = ref
    run(args)


def ffmpeg_version():
    first_line = run(["ffmpeg", "-version"]).decode().splitlines()[0]
    match = re.match(r"ffmpeg version (\S+)", first_line)
    return match.group(1) if match else first_line


def hexdump_to_bytes(dump):
    """ffprobe's -show_data hexdump ("00000000: 1210 56e5 00    ..V..") to bytes.
    The hex columns are the 40 characters after the 10-character offset prefix."""
    out = bytearray()
    for line in dump.splitlines():
        if line.strip():
            out += bytes.fromhex(line[10:50].replace(" ", ""))
    return bytes(out)


def convert(value, kind):
    if value is None or value == "N/A":
        return None
    return kind(value)


def probe(path):
    """Everything the oracle and the comparison need from ffprobe, for stream a:0."""
    streams = ffprobe_json(path, "-show_streams", "-show_data")["streams"]
    audio = [s for s in streams if s.get("codec_type") == "audio"]
    if not audio:
        raise CheckFailed("no audio stream")
    s = audio[0]
    stream = {name: convert(s.get(name), kind) for name, kind in STREAM_FIELDS}
    stream["extradata"] = hexdump_to_bytes(s.get("extradata", "")).hex()
    fmt = ffprobe_json(path, "-show_format")["format"]
    fmt = {name: convert(fmt.get(name), kind) for name, kind in FORMAT_FIELDS}
    raw_packets = ffprobe_json(path, "-select_streams", "a:0", "-show_packets",
                               "-show_data_hash", "CRC32")["packets"]
    packets, side_data, positions = [], [], []
    for p in raw_packets:
        digest = p["data_hash"]
        if not digest.startswith("CRC32:"):
            raise CheckFailed(f"unexpected data_hash {digest}")
        packets.append([convert(p.get("pts"), int), convert(p.get("dts"), int),
                        convert(p.get("duration"), int), int(p["size"]),
                        digest[len("CRC32:"):].lower(), p["flags"]])
        side_data.append(p.get("side_data_list", []))
        positions.append(convert(p.get("pos"), int))
    return {
        "stream": stream, "format": fmt, "packets": packets, "side_data": side_data,
        "positions": positions, "codec_types": [s.get("codec_type") for s in streams],
    }


def derive(fixture_name, ref):
    """The expectation object for a fixture whose reference output is `ref`."""
    facts = probe(ref)
    with open(ref, "rb") as f:
        data = f.read()

    # ffprobe's CRC32 is zlib's CRC-32 of the packet's bytes: check it on every packet.
    for index, (packet, pos) in enumerate(zip(facts["packets"], facts["positions"])):
        size, digest = packet[3], packet[4]
        if pos is None or f"{zlib.crc32(data[pos:pos + size]):08x}" != digest:
            raise CheckFailed(f"packet {index}: ffprobe CRC32 {digest} is not zlib.crc32 "
                              f"of bytes {pos}..+{size}")

    boxes = mp4box.read_tree(data)
    trak = mp4box.first_audio_trak(data, boxes)
    stsd = mp4box.stbl_of(trak).child(b"stsd")
    asc = mp4box.esds_layout(data, mp4box.find_esds(stsd.children[0]))["asc"]
    if asc.hex() != facts["stream"]["extradata"]:
        raise CheckFailed(f"ffprobe extradata {facts['stream']['extradata']} is not the "
                          f"esds AudioSpecificConfig {asc.hex()}")
    movie_timescale, _ = mp4box.timescale_and_duration(data, mp4box.top(boxes, b"moov").child(b"mvhd"))
    media_timescale, _ = mp4box.timescale_and_duration(data, trak.child(b"mdia").child(b"mdhd"))

    return {
        "fixture": fixture_name,
        "reference_command": REFERENCE_COMMAND,
        "ffmpeg_version": ffmpeg_version(),
        "stream": facts["stream"],
        "format": facts["format"],
        "movie_timescale": movie_timescale,
        "media_timescale": media_timescale,
        "elst": mp4box.edit_list(data, trak),
        "packets": facts["packets"],
    }


def dumps(expectation):
    """Compact but diff-friendly: one line per top-level key and one per packet."""
    compact = lambda value: json.dumps(value, separators=(", ", ": "))  # noqa: E731
    lines = []
    for key, value in expectation.items():
        if key == "packets":
            body = ",\n".join("    " + compact(p) for p in value)
            lines.append(f'  "packets": [\n{body}\n  ]')
        else:
            lines.append(f"  {json.dumps(key)}: {compact(value)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def first_difference(a, b, path="$"):
    """A description of where two JSON values first differ, or None."""
    if type(a) is not type(b):
        return f"{path}: {a!r} != {b!r}"
    if isinstance(a, dict):
        for key in list(a) + [k for k in b if k not in a]:
            if key not in a or key not in b:
                return f"{path}.{key}: only in {'first' if key in a else 'second'}"
            found = first_difference(a[key], b[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(a, list):
        for index, (x, y) in enumerate(zip(a, b)):
            found = first_difference(x, y, f"{path}[{index}]")
            if found:
                return found
        if len(a) != len(b):
            return f"{path}: length {len(a)} != {len(b)}"
        return None
    return None if a == b else f"{path}: {a!r} != {b!r}"


def write(fixture, out):
    with tempfile.TemporaryDirectory(prefix="expectations.") as tmp:
        ref = os.path.join(tmp, "REF.m4a")
        make_reference(fixture, ref)
        text = dumps(derive(os.path.basename(fixture), ref))
    with open(out, "w") as f:
        f.write(text)


def check(fixture, ref, expected_path, ours):
    # 1. The committed expectation is what the reference command gives today.
    with open(expected_path) as f:
        committed = json.load(f)
    live = json.loads(dumps(derive(os.path.basename(fixture), ref)))
    committed_cmp = dict(committed, ffmpeg_version=None)
    live_cmp = dict(live, ffmpeg_version=None)
    found = first_difference(committed_cmp, live_cmp)
    if found:
        raise CheckFailed(f"stale expectation {os.path.basename(expected_path)} "
                          f"(committed vs live REF) at {found}")

    # 2. OURS is a one-stream audio file ...
    theirs, mine = probe(ref), probe(ours)
    if mine["codec_types"] != ["audio"]:
        raise CheckFailed(f"OURS streams are {mine['codec_types']}, want exactly one audio stream")
    # ... with REF's packets (pts, dts, duration, size, CRC32, flags) and their side data
    # (skip samples / discard padding, derived from the edit list) ...
    if len(mine["packets"]) != len(theirs["packets"]):
        raise CheckFailed(f"{len(mine['packets'])} packets, REF has {len(theirs['packets'])}")
    for index, (a, b) in enumerate(zip(theirs["packets"], mine["packets"])):
        if a != b:
            raise CheckFailed(f"packet {index}: REF [pts, dts, duration, size, crc32, flags] "
                              f"{a} != OURS {b}")
    for index, (a, b) in enumerate(zip(theirs["side_data"], mine["side_data"])):
        if a != b:
            raise CheckFailed(f"packet {index} side data: REF {a} != OURS {b}")
    # ... REF's stream and format fields ...
    for section in ("stream", "format"):
        found = first_difference(theirs[section], mine[section], section)
        if found:
            raise CheckFailed(f"REF vs OURS {found}")
    # ... and FFmpeg decodes it without a word.
    result = subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-i", ours, "-f", "null", "-"],
                            stdin=subprocess.DEVNULL, capture_output=True)
    said = (result.stdout + result.stderr).decode(errors="replace").strip()
    if result.returncode != 0 or said:
        raise CheckFailed(f"ffmpeg decode of OURS (exit {result.returncode}): {said[:300]}")


def main():
    try:
        if len(sys.argv) == 4 and sys.argv[1] == "write":
            write(sys.argv[2], sys.argv[3])
        elif len(sys.argv) == 6 and sys.argv[1] == "check":
            check(*sys.argv[2:])
        else:
            sys.exit(__doc__)
    except CheckFailed as failure:
        print(failure)
        sys.exit(1)


if __name__ == "__main__":
    main()
