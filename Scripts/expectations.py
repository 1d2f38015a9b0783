#!/usr/bin/env python3
"""The FFmpeg oracle: what `ffmpeg -map 0:a:0 -c:a copy -f ipod` (or -f mp4) makes of a fixture.

usage:
  expectations.py write FIXTURE OUT.json [REF-OPTION ...]
      Make REF.m4a from FIXTURE with the reference command (in a temporary directory),
      ffprobe it and write OUT.json. REF-OPTIONs are the reference command's output
      options, by default `-f ipod` (see Scripts/fixtures.list).
  expectations.py reference FIXTURE REF.m4a [REF-OPTION ...]
      Only make REF.m4a.
  expectations.py check FIXTURE REF.m4a EXPECTED.json OURS.m4a [REF-OPTION ...]
      Conformance: re-derive the expectation from REF.m4a and require it to equal
      EXPECTED.json (ignoring ffmpeg_version); require OURS.m4a to match REF.m4a in
      ffprobe's packets, stream and format fields, except for the documented
      known_deviations (OURS must have their "expected" values instead); require OURS
      to hold exactly one stream, of type audio, and to decode with no FFmpeg
      diagnostics. Prints nothing and exits 0 when all hold; prints one reason and
      exits 1 otherwise.
  expectations.py check-meta FIXTURE REF.m4a EXPECTED.json OURS.m4a [REF-OPTION ...]
      The same for a metadata fixture (kind `meta`, Scripts/metadata.list): OURS must
      also hold the input's cover art, which FFmpeg shows as attached-picture streams,
      exactly as many as the input has (REF, made with -map 0:a:0, has none).
  expectations.py salvage-write TRUNCATED UNCUT OUT.json [REF-OPTION ...]
      For a truncated copy of the good fixture UNCUT: the number N of audio samples
      that lie wholly inside TRUNCATED (from the box walker), and the expectation of
      FFmpeg's copy of UNCUT's first N audio packets (the reference command with
      `-frames:a N`), whose packets are checked to be the first N of UNCUT's REF.
  expectations.py salvage-check TRUNCATED EXPECTED.json OURS.m4a
      OURS (made with --salvage) must match that copy like `check` does (packets, side
      data, stream and format fields, streams, decoding); EXPECTED.json must still be
      what FFmpeg and TRUNCATED give today.

The JSON schemas are described in Fixtures/README.md.
"""

import json
import os
import re
import sys
import tempfile
import zlib

sys.dont_write_bytecode = True  # no __pycache__ in Scripts/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mp4box  # noqa: E402
from oracle.run import run as oracle_run  # noqa: E402

REFERENCE_PREFIX = "ffmpeg -nostdin -v error -y -i IN -map 0:a:0 -c:a copy"
DEFAULT_OPTIONS = ["-f", "ipod"]


def reference_command(options):
    return " ".join([REFERENCE_PREFIX, *(options or DEFAULT_OPTIONS), "REF.m4a"])


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
    result = oracle_run(*args)
    if result.returncode != 0:
        raise CheckFailed(f"{' '.join(args)} exited {result.returncode}: "
                          f"{result.stderr.decode(errors='replace').strip()}")
    return result.stdout


def ffprobe_json(path, *options):
    return json.loads(run(["ffprobe", "-v", "error", *options, "-of", "json", path]))


def make_reference(fixture, ref, options=None):
    args = reference_command(options).split()
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
    both = ffprobe_json(path, "-show_format", "-show_chapters")
    fmt = {name: convert(both["format"].get(name), kind) for name, kind in FORMAT_FIELDS}
    chapters = [[c.get("start_time"), c.get("end_time"), c.get("tags", {}).get("title")]
                for c in both.get("chapters", [])]
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
        "other_streams": [[s.get("codec_type"), s.get("codec_tag_string")] for s in streams
                          if s is not audio[0]],
        "chapters": chapters,
        # FFmpeg shows each image of a covr item as a video stream with disposition
        # attached_pic (in file order, after the tracks).
        "attached_pictures": [s.get("index") for s in streams
                              if (s.get("disposition") or {}).get("attached_pic")],
        "all_streams": [[s.get("codec_type"), s.get("codec_tag_string"),
                         bool((s.get("disposition") or {}).get("attached_pic"))] for s in streams],
    }


def check_extradata(data, trak, extradata):
    """ffprobe's extradata must be what the sample entry holds: the esds
    AudioSpecificConfig (mp4a; none for MP3/MP2), the whole 'alac' atom (ALAC), the
    STREAMINFO block of dfLa (FLAC). AC-3/E-AC-3 have none; Opus's is FFmpeg's OpusHead
    built from dOps, recorded as is."""
    entry = mp4box.stbl_of(trak).child(b"stsd").children[0]
    if entry.kind == b"mp4a":
        asc = mp4box.esds_layout(data, mp4box.find_esds(entry))["asc"]
        want, what = (asc or b"").hex(), "esds AudioSpecificConfig"
    elif entry.kind == b"alac":
        atom = entry.child(b"alac")
        want, what = data[atom.offset:atom.end].hex(), "alac atom"
    elif entry.kind == b"fLaC":
        dfla = entry.child(b"dfLa")
        # FullBox header (4), then the metadata block header (4) of STREAMINFO (34 bytes).
        want, what = data[dfla.payload + 8:dfla.payload + 8 + 34].hex(), "dfLa STREAMINFO"
    elif entry.kind in (b"ac-3", b"ec-3"):
        want, what = "", "nothing (dac3/dec3 are not extradata)"
    else:
        return
    if want != extradata:
        raise CheckFailed(f"ffprobe extradata {extradata} is not the {what} {want}")


def ceil_div(a, b):
    return -(-a // b)


def seconds(ticks, timescale):
    """ffprobe's "%f" of a duration in seconds."""
    return f"{ticks / timescale:.6f}"


def known_deviations(input_path, facts, movie_timescale, media_timescale, elst):
    """The documented differences between FFmpeg's copy and the right answer, or None.

    One is known (FFmpeg 5.1): for a fragmented input, the mov demuxer gives the LAST
    sample of the track the default duration of its track fragment (tfhd
    default_sample_duration, else trex) instead of the duration the trun states for it.
    The right value is read here from the input's last trun, by mp4box (independent of
    the Swift code). The stream duration, the movie duration (format duration) and the
    edit list FFmpeg writes follow from the packet durations, so their right values are
    computed from that one duration with the rules FFmpeg's muxer uses, after checking
    that those rules reproduce FFmpeg's own values from its own last duration."""
    with open(input_path, "rb") as f:
        data = f.read()
    boxes = mp4box.read_tree(data, trailing_ok=True)
    if not mp4box.is_fragmented(boxes):
        found = dict(trimmed_last_packet(data, boxes, facts, movie_timescale, media_timescale, elst)
                     or {})
        found.update(dropped_tail_samples(data, boxes, facts, movie_timescale, media_timescale, elst)
                     or {})
        return found or None
    _, samples = mp4box.audio_samples(data, boxes)
    packets = facts["packets"]
    if len(packets) != len(samples):
        raise CheckFailed(f"REF has {len(packets)} packets, the input's audio track {len(samples)} samples")
    for index, (packet, sample) in enumerate(zip(packets, samples)):
        if packet[3] != sample["size"] or (index < len(packets) - 1 and packet[2] != sample["duration"]):
            raise CheckFailed(f"REF packet {index} {packet} does not match input sample {sample}")
    last = samples[-1]
    ffmpeg_last = packets[-1][2]
    if ffmpeg_last == last["duration"]:
        return None
    if ffmpeg_last != last["default_duration"]:
        raise CheckFailed(f"REF's last packet lasts {ffmpeg_last}, neither the trun's "
                          f"{last['duration']} nor the fragment default {last['default_duration']}")
    delta = last["duration"] - ffmpeg_last
    stream, fmt = facts["stream"], facts["format"]
    # FFmpeg's stream duration is the span of the packets, its format duration the mvhd
    # duration, which its muxer rounds up to the movie timescale (as the edit list).
    ticks = stream["duration_ts"]
    start = max(stream["start_pts"] or 0, 0)
    span = packets[-1][0] + ffmpeg_last - start
    movie = ceil_div(ticks * movie_timescale, media_timescale)
    if ticks != span or stream["duration"] != seconds(ticks, media_timescale) \
            or fmt["duration"] != seconds(movie, movie_timescale) \
            or (elst is not None and (len(elst) != 1 or elst[0][0] != movie)):
        raise CheckFailed(f"REF's durations do not follow from its packets "
                          f"(duration_ts {ticks}, span {span}, movie {movie}, elst {elst})")
    new_ticks = ticks + delta
    new_movie = ceil_div(new_ticks * movie_timescale, media_timescale)
    where = (f"trun at byte {last['trun']} (moof at byte {last['moof']}), its sample "
             f"{last['index']}")
    deviations = {
        "last_packet_duration": {
            "ffmpeg": ffmpeg_last, "expected": last["duration"],
            "source": where + (" (explicit sample_duration)" if last["explicit_duration"]
                               else " (no sample_duration: the default)"),
            "why": "FFmpeg 5.1's mov demuxer reports the last sample of a fragmented track "
                   "with its fragment's default duration (tfhd default_sample_duration or "
                   "trex), not the duration its trun gives; our output keeps the trun's.",
        },
        "stream.duration_ts": {"ffmpeg": ticks, "expected": new_ticks,
                               "why": "the packets' span, with the expected last duration"},
        "stream.duration": {"ffmpeg": stream["duration"],
                            "expected": seconds(new_ticks, media_timescale),
                            "why": "duration_ts in seconds"},
        "format.duration": {"ffmpeg": fmt["duration"],
                            "expected": seconds(new_movie, movie_timescale),
                            "why": "the mvhd duration: duration_ts rounded up to the movie timescale"},
    }
    if elst is not None:
        deviations["elst"] = {"ffmpeg": elst, "expected": [[new_movie] + elst[0][1:]],
                              "why": "FFmpeg's one edit for a track that starts at 0: the "
                                     "samples' total duration rounded up to the movie timescale"}
    return deviations


def trimmed_last_packet(data, boxes, facts, movie_timescale, media_timescale, elst):
    """The second known difference (FFmpeg 5.1), for regular files with one edit: for
    some codecs (AC-3, E-AC-3) FFmpeg's muxer computes the movie duration from the packets
    it copied, with the last packet untrimmed, so its mvhd (the format duration) runs up to
    a movie tick past the end of the edit list it writes itself (2011 ms for an edit of
    2010). Ours is the edit list's duration: what plays. Returns None when FFmpeg's movie
    duration is the edit's."""
    if elst is None or len(elst) != 1:
        return None
    edit = elst[0][0]
    ffmpeg = facts["format"]["duration"]
    expected = seconds(edit, movie_timescale)
    if ffmpeg == expected:
        return None
    if float(ffmpeg) <= float(expected) or float(ffmpeg) - float(expected) > 1.0 / movie_timescale + 1e-9:
        raise CheckFailed(f"REF's movie duration {ffmpeg} is neither its edit's {expected} nor one tick more")
    return {
        "format.duration": {
            "ffmpeg": ffmpeg, "expected": expected,
            "why": "FFmpeg's movie duration counts its last packet untrimmed, a tick past the end of "
                   "the edit list it writes; ours is the edit list's duration (what plays)",
        },
    }


def dropped_tail_samples(data, boxes, facts, movie_timescale, media_timescale, elst):
    """The third known difference (FFmpeg 5.1): samples that lie wholly after the end of
    the edit list are dropped by FFmpeg's copy, so its stsz (ffprobe's nb_frames) counts
    fewer samples than the input. Ours copies every sample; the edit list keeps them
    silent, and ffprobe lists the same packets for both. Returns None when FFmpeg kept
    them all."""
    _, samples = mp4box.audio_samples(data, boxes)
    ffmpeg = facts["stream"]["nb_frames"]
    if ffmpeg is None or len(samples) <= ffmpeg:
        return None
    return {
        "stream.nb_frames": {
            "ffmpeg": ffmpeg, "expected": len(samples),
            "why": f"FFmpeg's copy drops the {len(samples) - ffmpeg} sample(s) lying wholly after the edit "
                   "list's end; ours copies all the input's samples (the edit list still hides them)",
        },
    }


def derive(fixture, ref, options=None, deviations=True):
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
    check_extradata(data, trak, facts["stream"]["extradata"])
    movie_timescale, _ = mp4box.timescale_and_duration(data, mp4box.top(boxes, b"moov").child(b"mvhd"))
    media_timescale, _ = mp4box.timescale_and_duration(data, trak.child(b"mdia").child(b"mdhd"))
    elst = mp4box.edit_list(data, trak)

    expectation = {
        "fixture": os.path.basename(fixture),
        "reference_command": reference_command(options),
        "ffmpeg_version": ffmpeg_version(),
        "stream": facts["stream"],
        "format": facts["format"],
        "movie_timescale": movie_timescale,
        "media_timescale": media_timescale,
        "elst": elst,
    }
    # Only when there are any (FFmpeg copies chapters, as a QuickTime chapter text track).
    if facts["other_streams"]:
        expectation["other_streams"] = facts["other_streams"]
    if facts["chapters"]:
        expectation["chapters"] = facts["chapters"]
    found = deviations and known_deviations(fixture, facts, movie_timescale, media_timescale, elst)
    if found:
        expectation["known_deviations"] = found
    expectation["packets"] = facts["packets"]
    return expectation


def dumps(expectation):
    """Compact but diff-friendly: one line per top-level key, one per packet and one per
    known deviation."""
    compact = lambda value: json.dumps(value, separators=(", ", ": "))  # noqa: E731
    lines = []
    for key, value in expectation.items():
        if key == "packets":
            body = ",\n".join("    " + compact(p) for p in value)
            lines.append(f'  "packets": [\n{body}\n  ]')
        elif key == "known_deviations":
            body = ",\n".join(f"    {json.dumps(k)}: {compact(v)}" for k, v in value.items())
            lines.append(f'  "known_deviations": {{\n{body}\n  }}')
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


def write(fixture, out, options):
    with tempfile.TemporaryDirectory(prefix="expectations.") as tmp:
        ref = os.path.join(tmp, "REF.m4a")
        make_reference(fixture, ref, options)
        text = dumps(derive(fixture, ref, options))
    with open(out, "w") as f:
        f.write(text)


def compare_committed(committed_path, live):
    with open(committed_path) as f:
        committed = json.load(f)
    found = first_difference(dict(committed, ffmpeg_version=None),
                             dict(json.loads(dumps(live)), ffmpeg_version=None))
    if found:
        raise CheckFailed(f"stale expectation {os.path.basename(committed_path)} "
                          f"(committed vs live) at {found}")
    return committed


def check_decodes(ours):
    result = oracle_run("ffmpeg", "-nostdin", "-v", "error", "-i", ours, "-f", "null", "-")
    said = (result.stdout + result.stderr).decode(errors="replace").strip()
    if result.returncode != 0 or said:
        raise CheckFailed(f"ffmpeg decode of OURS (exit {result.returncode}): {said[:300]}")


FIELDS = ["pts", "dts", "duration", "size", "crc32", "flags"]


def compare_packets(wanted, wanted_side_data, mine, label):
    if len(mine["packets"]) != len(wanted):
        raise CheckFailed(f"{len(mine['packets'])} packets, {label} has {len(wanted)}")
    for index, (a, b) in enumerate(zip(wanted, mine["packets"])):
        if a != b:
            field = next(name for name, x, y in zip(FIELDS, a, b) if x != y)
            raise CheckFailed(f"packet {index} {field}: {label} {a} != OURS {b} "
                              f"([pts, dts, duration, size, crc32, flags])")
    for index, (a, b) in enumerate(zip(wanted_side_data, mine["side_data"])):
        if a != b:
            raise CheckFailed(f"packet {index} side data: {label} {a} != OURS {b}")


def without_pictures(facts):
    """facts with the attached-picture streams (cover art) left out of the stream lists."""
    kept = [[kind, tag] for kind, tag, picture in facts["all_streams"] if not picture]
    audio = next((i for i, (kind, _) in enumerate(kept) if kind == "audio"), None)
    return dict(facts, codec_types=[kind for kind, _ in kept],
                other_streams=[s for i, s in enumerate(kept) if i != audio])


def check_streams(theirs, mine, pictures=None):
    """pictures: None, or how many attached pictures (cover art) OURS must hold besides
    REF's streams (REF, made with -map 0:a:0, cannot have them)."""
    if pictures is not None:
        if len(mine["attached_pictures"]) != pictures:
            raise CheckFailed(f"OURS has {len(mine['attached_pictures'])} attached pictures "
                              f"(cover art), the input {pictures}")
        mine = without_pictures(mine)
    if theirs["codec_types"][0] != "audio" or theirs["codec_types"].count("audio") != 1:
        raise CheckFailed(f"REF streams are {theirs['codec_types']}")
    if [mine["codec_types"][0]] + [t for t, _ in mine["other_streams"]] != mine["codec_types"] \
            or mine["codec_types"][0] != "audio" \
            or mine["other_streams"] != theirs["other_streams"]:
        raise CheckFailed(f"OURS streams are {mine['codec_types']} {mine['other_streams'] or ''}, "
                          f"want one audio stream" + (f" then {theirs['other_streams']} like REF"
                                                      if theirs["other_streams"] else ""))
    if mine["chapters"] != theirs["chapters"]:
        raise CheckFailed(f"chapters: REF {theirs['chapters']} != OURS {mine['chapters']}")


def input_pictures(fixture):
    """How many attached pictures (cover art) ffprobe shows in the input."""
    streams = ffprobe_json(fixture, "-show_streams")["streams"]
    return sum(1 for s in streams if (s.get("disposition") or {}).get("attached_pic"))


def check(fixture, ref, expected_path, ours, options, pictures_ok=False):
    # 1. The committed expectation is what the reference command gives today.
    committed = compare_committed(expected_path, derive(fixture, ref, options))
    deviations = committed.get("known_deviations") or {}

    # 2. OURS is a one-stream audio file (plus the chapter track and chapters when REF has
    # them; for metadata fixtures, plus the input's cover art as attached pictures) ...
    theirs, mine = probe(ref), probe(ours)
    check_streams(theirs, mine, input_pictures(fixture) if pictures_ok else None)
    if pictures_ok:
        # The format's stream count then holds the pictures too (checked just above).
        mine["format"] = dict(mine["format"], nb_streams=mine["format"]["nb_streams"]
                              - len(mine["attached_pictures"]))
    # ... with REF's packets (pts, dts, duration, size, CRC32, flags) and their side data
    # (skip samples / discard padding, derived from the edit list), except where a known
    # deviation says what the right value is ...
    wanted = [list(p) for p in theirs["packets"]]
    label = "REF"
    if "last_packet_duration" in deviations:
        deviation = deviations["last_packet_duration"]
        if wanted and wanted[-1][2] == deviation["ffmpeg"]:
            wanted[-1][2] = deviation["expected"]
            label = "REF (last duration per known_deviations)"
    compare_packets(wanted, theirs["side_data"], mine, label)
    # ... REF's stream and format fields (or the deviations' expected values) ...
    for section in ("stream", "format"):
        want = dict(theirs[section])
        for key, deviation in deviations.items():
            if key.startswith(section + "."):
                want[key.split(".", 1)[1]] = deviation["expected"]
        for key in want:
            if want[key] != mine[section].get(key):
                source = (f"known_deviations {section}.{key} expected; REF has {theirs[section][key]!r}"
                          if want[key] != theirs[section][key] else "REF")
                raise CheckFailed(f"{section}.{key}: want {want[key]!r} ({source}), OURS has "
                                  f"{mine[section].get(key)!r}")
    # ... and FFmpeg decodes it without a word.
    check_decodes(ours)


def complete_samples(truncated):
    """(N, cut box) for a truncated file: N = how many of the audio track's samples (in
    decode order) lie wholly inside the file, from the box walker; the cut box is the
    top-level box that runs past the end."""
    with open(truncated, "rb") as f:
        data = f.read()
    boxes = mp4box.read_tree(data, truncated_ok=True)
    cut = [b for b in boxes if b.truncated]
    _, samples = mp4box.audio_samples(data, boxes)
    complete = 0
    for sample in samples:
        if sample["offset"] + sample["size"] > len(data):
            break
        complete += 1
    cut_box = {"type": cut[0].kind.decode("latin-1"), "offset": cut[0].offset,
               "size": cut[0].size} if cut else None
    return complete, cut_box, len(data), data, samples


def salvage_derive(truncated, uncut, options, tmp):
    """The salvage expectation: what FFmpeg's own copy of the first N packets of UNCUT
    gives (`-frames:a N` added to UNCUT's reference command), N from complete_samples.
    Its packets must be the first N packets of UNCUT's full REF, except that the last
    one's duration may be shorter: FFmpeg's edit list is rounded to the movie timescale,
    and ffprobe trims the last packet to it."""
    complete, cut_box, length, data, samples = complete_samples(truncated)
    full, ref = os.path.join(tmp, "UNCUT-REF.m4a"), os.path.join(tmp, "REF.m4a")
    make_reference(uncut, full, options)
    limited = ["-frames:a", str(complete), *(options or DEFAULT_OPTIONS)]
    make_reference(uncut, ref, limited)
    # (No known deviation: the last of N packets is not the track's last sample.)
    expectation = derive(uncut, ref, limited, deviations=False)
    whole = probe(full)["packets"][:complete]
    packets = expectation["packets"]
    for index, (a, b) in enumerate(zip(whole, packets)):
        same = a == b or (index == complete - 1 and a[:2] + a[3:] == b[:2] + b[3:] and b[2] <= a[2])
        if not same:
            raise CheckFailed(f"packet {index}: the -frames:a copy {b} is not the full REF's {a}")
    for index, (packet, sample) in enumerate(zip(packets, samples)):
        chunk = data[sample["offset"]:sample["offset"] + sample["size"]]
        if packet[3] != sample["size"] or f"{zlib.crc32(chunk):08x}" != packet[4]:
            raise CheckFailed(f"REF packet {index} {packet} is not the truncated file's sample {sample}")
    if len(packets) != complete:
        raise CheckFailed(f"the -frames:a {complete} copy has {len(packets)} packets")
    salvage = {
        "fixture": os.path.basename(truncated),
        "uncut": os.path.basename(uncut),
        "file_length": length,
        "cut_box": cut_box,
        "complete_packets": complete,
        "uncut_packets": len(probe(full)["packets"]),
        "uncut_last_kept_duration": whole[-1][2] if whole else None,
    }
    expectation.pop("fixture")
    return dict(salvage, **expectation)


def salvage_write(truncated, uncut, out, options):
    with tempfile.TemporaryDirectory(prefix="expectations.") as tmp:
        text = dumps(salvage_derive(truncated, uncut, options, tmp))
    with open(out, "w") as f:
        f.write(text)


def salvage_check(truncated, expected_path, ours):
    with open(expected_path) as f:
        committed = json.load(f)
    words = committed["reference_command"].split()[len(REFERENCE_PREFIX.split()):-1]
    options = words[2:]                                   # without "-frames:a N"
    uncut = os.path.join(os.path.dirname(truncated), committed["uncut"])
    with tempfile.TemporaryDirectory(prefix="expectations.") as tmp:
        compare_committed(expected_path, salvage_derive(truncated, uncut, options, tmp))
        ref = os.path.join(tmp, "REF.m4a")
        theirs, mine = probe(ref), probe(ours)
        check_streams(theirs, mine)
        compare_packets(theirs["packets"], theirs["side_data"], mine,
                        f"REF (the first {committed['complete_packets']} packets of {committed['uncut']})")
        # The same movie-duration difference as for whole files (trimmed_last_packet).
        with open(ref, "rb") as f:
            data = f.read()
        boxes = mp4box.read_tree(data)
        trak = mp4box.first_audio_trak(data, boxes)
        movie_timescale, _ = mp4box.timescale_and_duration(data, mp4box.top(boxes, b"moov").child(b"mvhd"))
        deviation = trimmed_last_packet(data, boxes, theirs, movie_timescale, None,
                                        mp4box.edit_list(data, trak)) or {}
        for section in ("stream", "format"):
            for key in theirs[section]:
                want = theirs[section][key]
                if f"{section}.{key}" in deviation:
                    want = deviation[f"{section}.{key}"]["expected"]
                if want != mine[section].get(key):
                    raise CheckFailed(f"{section}.{key}: want {want!r} (REF), OURS has "
                                      f"{mine[section].get(key)!r}")
    check_decodes(ours)


def main():
    args = sys.argv[1:]
    try:
        if len(args) >= 3 and args[0] == "write":
            write(args[1], args[2], args[3:])
        elif len(args) >= 3 and args[0] == "reference":
            make_reference(args[1], args[2], args[3:])
        elif len(args) >= 5 and args[0] == "check":
            check(*args[1:5], args[5:])
        elif len(args) >= 5 and args[0] == "check-meta":
            check(*args[1:5], args[5:], pictures_ok=True)
        elif len(args) >= 4 and args[0] == "salvage-write":
            salvage_write(*args[1:4], args[4:])
        elif len(args) == 4 and args[0] == "salvage-check":
            salvage_check(*args[1:4])
        else:
            sys.exit(__doc__)
    except CheckFailed as failure:
        print(failure)
        sys.exit(1)


if __name__ == "__main__":
    main()
