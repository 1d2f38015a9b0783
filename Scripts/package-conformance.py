#!/usr/bin/env python3
"""Conformance of `extract-audio package IN OUTDIR` (HLS and DASH by stream copy, issue 31).

Makes short inputs with ffmpeg in a temporary folder (H.264 with B-frames, 29.97 fps and
irregular GOPs + AAC 44.1 kHz; HEVC hvc1 + Opus; HEVC hev1 + AC-3; two audio languages; an
audio start delay; FLAC alone) and takes a few ../shared/corpus videos, packages each, and
checks what independent readers make of the output, never what our parser believes:
  - FFmpeg's hls demuxer on master.m3u8 and its dash demuxer on manifest.mpd (run from the
    MPD's folder) give every packet of every track with the source's payload CRC, in order
    (the source read with -ignore_editlist 1: package copies every sample and keeps the edit
    list in the init segment), and the same presentation times as the source where FFmpeg
    drops none of the source's packets (A/V offset kept to one tick);
  - GStreamer (hlsdemux, dashdemux over file://) decodes as many video frames as it does
    from the source; its audio is reported (hlsdemux does not apply the init's edit list);
  - GStreamer's hlsdemux2 and dashdemux2 (forced by rank, through uridecodebin3) over a
    loopback HTTP server of this script's that honours Range (206, Content-Range) decode the
    source's video frames, each the same picture (16x16 grey), and its audio as above; for
    --single-file the server must have answered byte ranges (dashdemux2 of GStreamer 1.22
    leaves out a SegmentBase's last sidx reference, FFmpeg's global_sidx files' too: there the
    frames must be the source's less that last segment's);
  - FFmpeg's decode of each audio track through master.m3u8 and manifest.mpd, trimmed by the
    init's edit list (read here: FFmpeg 5.1 does not apply it through those demuxers), equals
    its decode of the source sample for sample (gapless: the priming is what the edit skips);
  - the playlists, read by this script's own parser: EXT-X-INDEPENDENT-SEGMENTS, EXT-X-MEDIA
    with LANGUAGE/NAME/CHANNELS/DEFAULT, variants with CODECS, RESOLUTION, FRAME-RATE (3
    decimals), BANDWIDTH = video peak + largest audio peak and AVERAGE-BANDWIDTH, both
    recomputed here from the segment files' sizes (RFC 8216bis § 4.1); media playlists with
    VERSION >= 7, EXT-X-MAP, PLAYLIST-TYPE:VOD, EXTINF with >= 3 decimals, every rounded
    EXTINF <= the one TARGETDURATION shared by all, no last segment under half the target;
  - the segments, read by this script's own box walker: styp/moof/mdat, each tfdt equal to
    the MPD's S@t and to the previous tfdt plus its trun durations, every video segment
    starting with a sync sample, the init's elst equal to the source's (as fractions);
  - CODECS recomputed here: avc1/hvc1/hev1/av01/vp09 from the configuration box bytes,
    AAC from ffprobe's profile; VIDEO-RANGE (PQ, HLG, or left out for SDR) from the source's
    colr box read here, else ffprobe's color_transfer (two HDR clips: PQ H.264 with its colr
    renamed, so only the SPS VUI says it; HLG HEVC with a colr);
  - refusals: an encrypted input and a video without sync samples exit 69, an existing
    OUTDIR 73 without --overwrite; nothing is left behind.
Prints one ok/FAIL line per check and a final "N passed, M failed"; exits 1 on failure.
Missing oracles (ffmpeg, GStreamer's hlsdemux/dashdemux) skip their checks unless
REQUIRE_ORACLES=1. --single-file (two clips): one file per track holding the same bytes,
its sidx and byte ranges checked, both demuxers of both players reading it.
Set EXTRACT_AUDIO to a built binary to skip the release build.
Boxes are read by Scripts/mp4box.py, the scripts' one box parser.
"""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
from fractions import Fraction

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mp4box  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(os.path.dirname(ROOT), "shared", "corpus")
STRICT = os.environ.get("REQUIRE_ORACLES") == "1"
results = {"passed": 0, "failed": 0}


def check(ok, label, detail=""):
    results["passed" if ok else "failed"] += 1
    print(("ok   " if ok else "FAIL ") + label + ("" if ok or not detail else ": " + detail))
    return ok


def skip(label, why):
    if STRICT:
        check(False, label, "oracle missing: " + why)
    else:
        print(f"skip {label}: {why}")


def run(args, cwd=None, timeout=300):
    return subprocess.run(args, cwd=cwd, capture_output=True, timeout=timeout)


def binary():
    if os.environ.get("EXTRACT_AUDIO"):
        return os.environ["EXTRACT_AUDIO"]
    subprocess.run(["swift", "build", "-c", "release"], cwd=ROOT, check=True, capture_output=True)
    path = subprocess.run(["swift", "build", "-c", "release", "--show-bin-path"], cwd=ROOT, check=True,
                          capture_output=True, text=True).stdout.strip()
    return os.path.join(path, "extract-audio")


def have(tool):
    return shutil.which(tool) is not None


def gst_has(element):
    return have("gst-inspect-1.0") and run(["gst-inspect-1.0", element]).returncode == 0


# ---------------------------------------------------------------- boxes (our own walker)

def boxes(data, start=0, end=None):
    """(type, payload start, end) of each box in data[start:end], up to a damaged one (mp4box.py)."""
    return [(box.kind.decode("latin-1"), box.payload, box.end) for box in mp4box.boxes_of(data, start, end)]


def child(data, start, end, path):
    for kind, s, e in boxes(data, start, end):
        if kind == path[0]:
            return (s, e) if len(path) == 1 else child(data, s, e, path[1:])
    return None


def sample_entry(data):
    """The first trak's stsd entry: (format, payload start, end)."""
    stsd = child(data, 0, len(data), ["moov", "trak", "mdia", "minf", "stbl", "stsd"])
    if not stsd:
        return None
    s, e = stsd
    for kind, es, ee in boxes(data, s + 8, e):
        return kind, es, ee
    return None


def configuration(data, entry, box):
    kind, s, e = entry
    fixed = 78 if kind in ("avc1", "avc3", "hvc1", "hev1", "av01", "vp09", "dvh1", "dvhe") else 28
    for k, cs, ce in boxes(data, s + fixed, e):
        if k == box:
            return data[cs:ce]
    return None


def edit_list(data):
    """Per trak of `data`'s moov (by track ID): elst entries as (segment seconds, media time seconds)."""
    moov = child(data, 0, len(data), ["moov"])
    if not moov:
        return {}
    mvhd = child(data, moov[0], moov[1], ["mvhd"])
    version = data[mvhd[0]]
    movie_scale = struct.unpack(">I", data[mvhd[0] + (20 if version == 1 else 12):][:4])[0]
    result = {}
    for kind, s, e in boxes(data, moov[0], moov[1]):
        if kind != "trak":
            continue
        tkhd = child(data, s, e, ["tkhd"])
        tv = data[tkhd[0]]
        track_id = struct.unpack(">I", data[tkhd[0] + (20 if tv == 1 else 12):][:4])[0]
        mdhd = child(data, s, e, ["mdia", "mdhd"])
        mv = data[mdhd[0]]
        media_scale = struct.unpack(">I", data[mdhd[0] + (20 if mv == 1 else 12):][:4])[0]
        elst = child(data, s, e, ["edts", "elst"])
        entries = []
        if elst:
            ev = data[elst[0]]
            count = struct.unpack(">I", data[elst[0] + 4:elst[0] + 8])[0]
            p = elst[0] + 8
            for _ in range(count):
                if ev == 1:
                    duration, media_time = struct.unpack(">Qq", data[p:p + 16])
                    p += 20
                else:
                    duration, media_time = struct.unpack(">Ii", data[p:p + 8])
                    p += 12
                entries.append((Fraction(duration, movie_scale),
                                Fraction(media_time, media_scale) if media_time >= 0 else -1))
        ctts = child(data, s, e, ["mdia", "minf", "stbl", "ctts"])
        lowest = 0
        if ctts:
            count = struct.unpack(">I", data[ctts[0] + 4:ctts[0] + 8])[0]
            for k in range(count):
                lowest = min(lowest, struct.unpack(">i", data[ctts[0] + 12 + 8 * k:ctts[0] + 16 + 8 * k])[0])
        result[track_id] = (entries, Fraction(lowest, media_scale))
    return result


def same_presentation(ours, source):
    """Our init's edits against the source's: equal, but that (1) a track with negative
    composition offsets and edits has every offset and media time moved by the most negative
    offset (no negative offset is written: FFmpeg misplaces them after an edit), and (2) a last
    edit running past the end of the media is fitted to it (the project's presentation rule),
    by less than 0.1 s."""
    entries, _ = ours
    wanted, lowest = source
    if len(entries) != len(wanted):
        return False
    for k, ((d, t), (wd, wt)) in enumerate(zip(entries, wanted)):
        if wt != -1 and lowest < 0:
            wt -= lowest
        if t != wt:
            return False
        if d != wd and not (k == len(entries) - 1 and wd - Fraction(1, 10) < d < wd):
            return False
    return True


def fragment(data):
    """A media segment: (box types at top level, tfdt, sum of durations, first sample sync?)."""
    kinds = [k for k, _, _ in boxes(data)]
    moof = child(data, 0, len(data), ["moof"])
    traf = child(data, moof[0], moof[1], ["traf"])
    tfhd = child(data, traf[0], traf[1], ["tfhd"])
    flags = struct.unpack(">I", data[tfhd[0]:tfhd[0] + 4])[0] & 0xFFFFFF
    p = tfhd[0] + 8
    default_duration = default_flags = None
    if flags & 0x1:
        p += 8
    if flags & 0x2:
        p += 4
    if flags & 0x8:
        default_duration = struct.unpack(">I", data[p:p + 4])[0]
        p += 4
    if flags & 0x10:
        p += 4
    if flags & 0x20:
        default_flags = struct.unpack(">I", data[p:p + 4])[0]
    tfdt = child(data, traf[0], traf[1], ["tfdt"])
    version = data[tfdt[0]]
    decode = struct.unpack(">Q" if version == 1 else ">I", data[tfdt[0] + 4:tfdt[0] + (12 if version == 1 else 8)])[0]
    total = 0
    samples = 0
    first_flags = None
    for kind, s, e in boxes(data, traf[0], traf[1]):
        if kind != "trun":
            continue
        tflags = struct.unpack(">I", data[s:s + 4])[0] & 0xFFFFFF
        count = struct.unpack(">I", data[s + 4:s + 8])[0]
        samples += count
        p = s + 8
        if tflags & 0x1:
            p += 4
        first_sample_flags = None
        if tflags & 0x4:
            first_sample_flags = struct.unpack(">I", data[p:p + 4])[0]
            p += 4
        for i in range(count):
            duration = default_duration
            sample_flags = default_flags
            if tflags & 0x100:
                duration = struct.unpack(">I", data[p:p + 4])[0]
                p += 4
            if tflags & 0x200:
                p += 4
            if tflags & 0x400:
                sample_flags = struct.unpack(">I", data[p:p + 4])[0]
                p += 4
            if tflags & 0x800:
                p += 4
            if i == 0 and first_flags is None:
                first_flags = first_sample_flags if first_sample_flags is not None else sample_flags
            total += duration or 0
    sync = first_flags is not None and not (first_flags & 0x10000)
    return kinds, decode, total, sync, samples


# ---------------------------------------------------------------- CODECS, recomputed

def codec_string(init, stream):
    entry = sample_entry(init)
    if not entry:
        return None
    fmt = entry[0]
    if fmt in ("avc1", "avc3"):
        c = configuration(init, entry, "avcC")
        return f"{fmt}.{c[1]:02x}{c[2]:02x}{c[3]:02x}"
    if fmt in ("hvc1", "hev1"):
        c = configuration(init, entry, "hvcC")
        space = ["", "A", "B", "C"][c[1] >> 6]
        compat = int.from_bytes(c[2:6], "big")
        reversed_bits = int(f"{compat:032b}"[::-1], 2)
        constraints = list(c[6:12])
        while constraints and constraints[-1] == 0:
            constraints.pop()
        text = f"{fmt}.{space}{c[1] & 0x1F}.{reversed_bits:X}.{'H' if c[1] & 0x20 else 'L'}{c[12]}"
        return text + "".join(f".{b:X}" for b in constraints)
    if fmt == "av01":
        c = configuration(init, entry, "av1C")
        depth = 12 if c[2] & 0x40 and c[2] & 0x20 else 10 if c[2] & 0x40 else 8
        return f"av01.{c[1] >> 5}.{c[1] & 0x1F:02d}{'H' if c[2] & 0x80 else 'M'}.{depth:02d}"
    if fmt == "vp09":
        c = configuration(init, entry, "vpcC")
        return f"vp09.{c[4]:02d}.{c[5]:02d}.{c[6] >> 4:02d}"
    if fmt == "mp4a":
        profile = stream.get("profile", "")
        aot = {"LC": 2, "HE-AAC": 5, "HE-AACv2": 29, "Main": 1, "LTP": 4}.get(profile)
        return f"mp4a.40.{aot}" if aot else None
    return {"Opus": "Opus", "fLaC": "fLaC", "ac-3": "ac-3", "ec-3": "ec-3", "alac": "alac"}.get(fmt)


def video_range(data, source_streams):
    """VIDEO-RANGE recomputed: the transfer characteristics of the source's first video track,
    from its sample entry's colr box (nclx/nclc, read here) when it has one, else ffprobe's
    color_transfer (the decoder's reading of the SPS VUI); PQ for 16 (smpte2084), HLG for 18
    (arib-std-b67), None (left out) for anything else. Returns (range, where it came from)."""
    moov = child(data, 0, len(data), ["moov"])
    for kind, s, e in boxes(data, moov[0], moov[1]) if moov else []:
        hdlr = child(data, s, e, ["mdia", "hdlr"]) if kind == "trak" else None
        if not hdlr or data[hdlr[0] + 8:hdlr[0] + 12] != b"vide":
            continue
        stsd = child(data, s, e, ["mdia", "minf", "stbl", "stsd"])
        for fmt, es, ee in boxes(data, stsd[0] + 8, stsd[1]):
            for k, cs, ce in boxes(data, es + 78, ee):
                if k == "colr" and data[cs:cs + 4] in (b"nclx", b"nclc") and ce - cs >= 10:
                    transfer = struct.unpack(">H", data[cs + 6:cs + 8])[0]
                    return {16: "PQ", 18: "HLG"}.get(transfer), f"colr transfer {transfer}"
            break
        break
    video = next((st for st in source_streams if st["codec_type"] == "video"), {})
    transfer = video.get("color_transfer")
    return {"smpte2084": "PQ", "arib-std-b67": "HLG"}.get(transfer), f"ffprobe color_transfer {transfer}"


# ---------------------------------------------------------------- playlists (our own parser)

def attributes(text):
    return {m.group(1): m.group(2).strip('"')
            for m in re.finditer(r'([A-Z0-9-]+)=("[^"]*"|[^,]*)', text)}


def read_media(path):
    lines = open(path).read().splitlines()
    tags = {}
    segments = []
    duration = None
    for line in lines:
        if line.startswith("#EXTINF:"):
            duration = line[8:].split(",")[0]
        elif line.startswith("#") and ":" in line:
            key, _, value = line.partition(":")
            tags.setdefault(key, value)
        elif line.startswith("#"):
            tags.setdefault(line, "")
        elif line.strip():
            segments.append((duration, line.strip()))
            duration = None
    return lines, tags, segments


def peak(sizes, durations, target):
    best = None
    for i in range(len(sizes)):
        b = t = 0
        for j in range(i, len(sizes)):
            b += sizes[j]
            t += durations[j]
            if t > 1.5 * target:
                break
            if t >= 0.5 * target:
                best = max(best or 0, b * 8 / t)
    if best is None:
        best = sum(sizes) * 8 / sum(durations)
    return best


def check_playlists(name, out, source_streams, source_bytes):
    master_path = os.path.join(out, "master.m3u8")
    lines = open(master_path).read().splitlines()
    check(lines[0] == "#EXTM3U" and "#EXT-X-INDEPENDENT-SEGMENTS" in lines, f"{name}: master has "
          "EXTM3U and EXT-X-INDEPENDENT-SEGMENTS")
    media = [attributes(l[13:]) for l in lines if l.startswith("#EXT-X-MEDIA:")]
    variants = [(attributes(l[18:]), lines[i + 1]) for i, l in enumerate(lines) if l.startswith("#EXT-X-STREAM-INF:")]
    uris = [m["URI"] for m in media] + [v[1] for v in variants]
    targets = {}
    measured = {}
    for uri in uris:
        plines, tags, segments = read_media(os.path.join(out, uri))
        version = int(tags.get("#EXT-X-VERSION", "0"))
        target = int(tags.get("#EXT-X-TARGETDURATION", "0"))
        targets[uri] = target
        ok = (version >= 7 and "#EXT-X-MAP" in tags and tags.get("#EXT-X-PLAYLIST-TYPE") == "VOD"
              and plines[-1] == "#EXT-X-ENDLIST" and segments)
        check(ok, f"{name}: {uri} has VERSION >= 7, EXT-X-MAP, PLAYLIST-TYPE:VOD, ENDLIST", str(tags))
        decimals = all(len(d.split(".")[1]) >= 3 for d, _ in segments if "." in d) \
            and all("." in d for d, _ in segments)
        rounded = [int(Fraction(d) + Fraction(1, 2)) for d, _ in segments]
        check(decimals and max(rounded) <= target, f"{name}: {uri}: EXTINF with >= 3 decimals, rounded <= "
              f"TARGETDURATION {target}", f"largest rounded {max(rounded)}")
        last = Fraction(segments[-1][0])
        check(len(segments) == 1 or last >= Fraction(target, 2), f"{name}: {uri}: last segment "
              f"{float(last):.3f} s not under half the target", f"{len(segments)} segments")
        sizes = [os.path.getsize(os.path.join(out, u)) for _, u in segments]
        durations = [float(Fraction(d)) for d, _ in segments]
        measured[uri] = (peak(sizes, durations, target), sum(sizes) * 8 / sum(durations))
        # The same segment files in the playlist and on disk.
        check(all(os.path.exists(os.path.join(out, u)) for _, u in segments), f"{name}: {uri}: every segment exists")
    check(len(set(targets.values())) == 1, f"{name}: one TARGETDURATION for every media playlist", str(targets))
    for m in media:
        check(all(k in m for k in ("NAME", "CHANNELS", "DEFAULT", "GROUP-ID")) and
              m.get("TYPE") == "AUDIO", f"{name}: EXT-X-MEDIA {m.get('URI')} has NAME, CHANNELS, DEFAULT")
    groups = {}
    for m in media:
        groups.setdefault(m["GROUP-ID"], []).append(m)
    for group, members in groups.items():
        check(sum(1 for m in members if m["DEFAULT"] == "YES") == 1, f"{name}: group {group} has one DEFAULT=YES")
    for attrs, uri in variants:
        video_peak, video_avg = measured[uri]
        group = groups.get(attrs.get("AUDIO"), [])
        audio_peak = max([measured[m["URI"]][0] for m in group], default=0)
        audio_avg = max([measured[m["URI"]][1] for m in group], default=0)
        expected_peak = video_peak + audio_peak
        expected_avg = video_avg + audio_avg
        bandwidth = int(attrs.get("BANDWIDTH", 0))
        average = int(attrs.get("AVERAGE-BANDWIDTH", 0))
        # Ours round each EXTINF to the microsecond and each rate up: a bit per second each.
        check(abs(bandwidth - expected_peak) <= 3 and abs(average - expected_avg) <= 3,
              f"{name}: {uri}: BANDWIDTH {bandwidth} = measured peak {expected_peak:.0f}, AVERAGE-BANDWIDTH "
              f"{average} = {expected_avg:.0f}")
        has_video = any(s["codec_type"] == "video" for s in source_streams)
        if has_video:
            rate = attrs.get("FRAME-RATE", "")
            check(re.fullmatch(r"\d+\.\d{3}", rate) is not None and "RESOLUTION" in attrs,
                  f"{name}: {uri}: RESOLUTION and FRAME-RATE with 3 decimals", str(attrs))
    if any(s["codec_type"] == "video" for s in source_streams):
        expected, origin = video_range(source_bytes, source_streams)
        listed = [attributes(l.split(":", 1)[1]).get("VIDEO-RANGE") for l in lines
                  if l.startswith("#EXT-X-STREAM-INF:") or l.startswith("#EXT-X-I-FRAME-STREAM-INF:")]
        check(listed and all(v == expected for v in listed), f"{name}: VIDEO-RANGE {expected or 'left out (SDR)'} on "
              f"every variant, as the source's {origin} says", str(listed))
    return media, variants


# ---------------------------------------------------------------- oracles

def packets(path, cwd=None, ignore_editlist=False):
    """Per codec type, per stream, the packets in order as (size, crc, pts seconds): sizes and
    payload CRCs by FFmpeg's framecrc muxer, times by ffprobe (a muxer would shift them to
    avoid negative times). One stream at a time: FFmpeg 5.1's dash demuxer, asked for all
    streams at once, ends before the last packet of one (measured: 239 of 240 video packets,
    all 240 when the video alone is read)."""
    edit = ["-ignore_editlist", "1"] if ignore_editlist else []
    probe = run(["ffprobe", "-v", "error"] + edit + ["-show_streams", "-of", "json", path], cwd=cwd)
    streams = [s for s in json.loads(probe.stdout or b"{}").get("streams", [])
               if s["codec_type"] in ("audio", "video")]
    by_type = {}
    codes = 0
    errors = ""
    for stream in streams:
        index = stream["index"]
        out = run(["ffmpeg", "-v", "error"] + edit + ["-i", path, "-map", f"0:{index}", "-c", "copy",
                                                     "-f", "framecrc", "-"], cwd=cwd)
        codes |= out.returncode
        errors += out.stderr.decode()[-300:]
        crcs = [tuple(f.strip() for f in line.split(","))[4:6] for line in out.stdout.decode().splitlines()
                if line.strip() and not line.startswith("#")]
        listed = run(["ffprobe", "-v", "error"] + edit + ["-select_streams", str(index), "-show_entries",
                                                         "packet=pts", "-of", "csv=p=0", path], cwd=cwd)
        num, den = stream["time_base"].split("/")
        pts = [Fraction(int(line.split(",")[0])) * Fraction(int(num), int(den)) if line.split(",")[0] not in
               ("", "N/A") else None for line in listed.stdout.decode().splitlines() if line.strip()]
        by_type.setdefault(stream["codec_type"], []).append(
            [(int(size), crc, pts[k] if k < len(pts) else None) for k, (size, crc) in enumerate(crcs)])
    return by_type, codes, errors


def gst_decode(uri, has_video, has_audio, folder, demuxer=None, frames_out=None):
    """Video frames and audio samples (per channel) GStreamer decodes from `uri`. With
    `demuxer` (hlsdemux2, dashdemux2), that element is forced by rank (the others of its kind
    ranked NONE), read through uridecodebin3 (the adaptivedemux2 elements need a
    streams-aware bin), and the return code is 1 unless the pipeline names it. The video
    frames (GRAY8, 16x16) go to `frames_out` (a list) when given."""
    video = os.path.join(folder, "v.raw")
    audio = os.path.join(folder, "a.raw")
    for f in (video, audio):
        if os.path.exists(f):
            os.unlink(f)
    env = None
    bin_name = "uridecodebin"
    if demuxer:
        kind = "hls" if demuxer.startswith("hls") else "dash"
        env = dict(os.environ, GST_PLUGIN_FEATURE_RANK=f"{kind}demux2:MAX,{kind}demux:NONE",
                   GST_DEBUG="adaptivedemux2:1", GST_DEBUG_NO_COLOR="1")
        bin_name = "uridecodebin3"
    args = ["gst-launch-1.0", "-v" if demuxer else "-q", bin_name, f"uri={uri}", "name=d"]
    if has_video:
        args += ["d.", "!", "queue", "!", "videoconvert", "!", "videoscale", "!",
                 "video/x-raw,format=GRAY8,width=16,height=16", "!", "filesink", f"location={video}"]
    if has_audio:
        args += ["d.", "!", "queue", "!", "audioconvert", "!", "audio/x-raw,format=S16LE,channels=1", "!",
                 "filesink", f"location={audio}"]
    def play():
        # A demux2 pipeline over HTTP has hung once in about 60 runs of a loaded CI (a corpus
        # clip GStreamer plays in a second otherwise): a hang is a run that failed, not a
        # crash of the script.
        try:
            return subprocess.run(args, capture_output=True, timeout=120 if demuxer else 300, env=env)
        except subprocess.TimeoutExpired:
            return subprocess.CompletedProcess(args, -9, b"", b"hung: no end after 120 s")

    result = play()
    # GStreamer 1.22's adaptivedemux2 races on a short stream served fast: every fragment
    # is downloaded before its pad is exposed, and it fails ("Can't push EOS on non-exposed
    # pad", then "Couldn't download fragments"; 1 run in 10 of the 3 s AV1 clip under load),
    # and now and then hangs. Those two failures alone are retried, and said: up to 6 times,
    # since 2 left 1 run in 40 failing under load (a check that fails by chance would fail
    # CI, not our output); any other failure counts at once.
    for attempt in range(6):
        if not (demuxer and result.returncode and (b"non-exposed pad" in result.stdout + result.stderr
                                                   or result.returncode == -9)):
            break
        what = "hang" if result.returncode == -9 else "pad-exposure race (non-exposed pad)"
        print(f"note GStreamer {demuxer}: its {what} on {uri}: run again")
        for f in (video, audio):
            if os.path.exists(f):
                os.unlink(f)
        result = play()
    code = result.returncode
    if demuxer and ("Gst" + {"hlsdemux2": "HLSDemux2", "dashdemux2": "DashDemux2"}[demuxer]).encode() \
            not in result.stdout:
        code = code or 1  # Another element read it: not the check asked for.
    frames = os.path.getsize(video) // 256 if has_video and os.path.exists(video) else None
    samples = os.path.getsize(audio) // 2 if has_audio and os.path.exists(audio) else None
    if frames_out is not None and has_video and os.path.exists(video):
        data = open(video, "rb").read()
        frames_out.extend(data[k:k + 256] for k in range(0, len(data) - 255, 256))
    return frames, samples, code


class RangeServer:
    """A loopback HTTP server over `root` that honours `Range: bytes=a-b`, `a-` and `-n` with
    206 and Content-Range (416 past the end), as a CDN does: Python's http.server sends the
    whole file with 200 instead, and an HLS/DASH reader asking for a byte range then gets
    every byte after it (one read 900 frames of 300). Counts the 206 answers per folder."""

    def __init__(self, root):
        import functools
        import http.server
        import threading
        server = self
        self.partial = {}

        class Handler(http.server.SimpleHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # Keep-alive: a reader fetching segments reuses its connection.

            def log_message(self, *args):
                pass

            def send_head(self):
                path = self.translate_path(self.path)
                if not os.path.isfile(path):
                    self.send_error(404)
                    return None
                size = os.path.getsize(path)
                match = re.fullmatch(r"bytes=(\d*)-(\d*)", self.headers.get("Range", "").strip())
                start, end = 0, size - 1
                if match and (match.group(1) or match.group(2)):
                    if match.group(1):
                        start = int(match.group(1))
                        end = min(int(match.group(2)), size - 1) if match.group(2) else size - 1
                    else:
                        start = max(0, size - int(match.group(2)))
                    if start > end:
                        self.send_response(416)
                        self.send_header("Content-Range", f"bytes */{size}")
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                        return None
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
                    folder = self.path.lstrip("/").split("/")[0]
                    server.partial[folder] = server.partial.get(folder, 0) + 1
                else:
                    self.send_response(200)
                self.send_header("Content-Type", self.guess_type(path))
                self.send_header("Content-Length", str(end - start + 1))
                self.send_header("Accept-Ranges", "bytes")
                self.end_headers()
                f = open(path, "rb")
                f.seek(start)
                self.left = end - start + 1
                return f

            def copyfile(self, source, destination):
                while self.left > 0:
                    chunk = source.read(min(1 << 16, self.left))
                    if not chunk:
                        break
                    destination.write(chunk)
                    self.left -= len(chunk)

        class Server(http.server.ThreadingHTTPServer):
            # The default backlog of 5 refused a connection now and then when the readers
            # opened several at once on a loaded machine (hlsdemux2: "Couldn't download
            # fragments", 1 run in 15).
            request_queue_size = 128
            daemon_threads = True

        self.httpd = Server(("127.0.0.1", 0), functools.partial(Handler, directory=root))
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def url(self, path):
        return f"http://127.0.0.1:{self.port}/{path}"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


SERVER = {}


def http_checks(name, source, out, has_video, has_audio, work, last_segment_frames=None):
    """GStreamer's hlsdemux2 and dashdemux2 over the loopback Range server: the same video
    frames as the source (each decoded frame, scaled to 16x16 grey, byte for byte), audio as
    with hlsdemux. `last_segment_frames`: a single file, whose DASH SegmentBase GStreamer
    1.22's dashdemux2 reads without its sidx's last reference (measured on FFmpeg's own
    global_sidx output too: 7 of 8 references, 175 of 200 frames): there the frames must be
    the source's but for that last segment's, in order."""
    if not (gst_has("hlsdemux2") and gst_has("dashdemux2")):
        skip(f"{name}: GStreamer over HTTP", "hlsdemux2/dashdemux2 (gstreamer1.0-plugins-good >= 1.22) not installed")
        return
    if "server" not in SERVER:
        SERVER["server"] = RangeServer(work)
    server = SERVER["server"]
    wanted = []
    frames, samples, _ = gst_decode("file://" + os.path.abspath(source), has_video, has_audio, work,
                                    frames_out=wanted)
    folder = os.path.basename(out)
    for demuxer, path in (("hlsdemux2", "master.m3u8"), ("dashdemux2", "manifest.mpd")):
        got = []
        got_frames, got_samples, code = gst_decode(server.url(f"{folder}/{path}"), has_video, has_audio, work,
                                                   demuxer=demuxer, frames_out=got)
        if has_video:
            expected = wanted
            note = ""
            if demuxer == "dashdemux2" and last_segment_frames:
                expected = wanted[:len(wanted) - last_segment_frames]
                note = f" (less the last sidx reference's {last_segment_frames}: GStreamer 1.22's)"
            check(code == 0 and got == expected and got, f"{name}: GStreamer {demuxer} over HTTP: {got_frames} video "
                  f"frames, the source's {len(expected)}{note}, each the same picture", f"exit {code}")
        if has_audio and samples and not (demuxer == "dashdemux2" and last_segment_frames):
            difference = None if got_samples is None else got_samples - samples
            check(code == 0 and difference is not None and 0 <= difference <= 2048,
                  f"{name}: GStreamer {demuxer} over HTTP: {got_samples} audio samples, the source's {samples} and "
                  f"{difference} the edit hides (at most 2048)", f"exit {code}")



# ---------------------------------------------------------------- one input

def ffmpeg_checks(name, source, out, source_streams, times):
    """FFmpeg's hls demuxer on master.m3u8 and dash demuxer on manifest.mpd (from its folder):
    every packet of every track with the source's size and CRC, in order (the source read with
    -ignore_editlist 1); with `times`, where FFmpeg drops none of the source's packets, the
    same presentation times to one tick."""
    want, _, _ = packets(source, ignore_editlist=True)
    presented, _, _ = packets(source) if times else ({}, 0, "")
    for label, path, cwd in (("hls", os.path.join(out, "master.m3u8"), None), ("dash", "manifest.mpd", out)):
        got, code, err = packets(path, cwd=cwd)
        for kind in want:
            a = [p[:2] for track in want[kind] for p in track]
            b = [p[:2] for track in got.get(kind, []) for p in track]
            check(code == 0 and a == b, f"{name}: FFmpeg {label}: {len(b)} {kind} packets with the source's CRC, in "
                  f"order", f"source {len(a)}; {err}")
            if presented.get(kind) and [p[:2] for t in presented[kind] for p in t] == a and b == a:
                scale = max(int(s.get("time_base", "1/1").split("/")[1]) for s in source_streams
                            if s["codec_type"] == kind)
                pairs = list(zip([p for t in presented[kind] for p in t], [p for t in got[kind] for p in t]))
                if any(x[2] is None or y[2] is None for x, y in pairs):
                    check(False, f"{name}: FFmpeg {label}: {kind} packets without a time")
                    continue
                worst = max(abs(x[2] - y[2]) for x, y in pairs)
                check(worst <= Fraction(1, scale), f"{name}: FFmpeg {label}: {kind} presentation times equal the "
                      f"source's (worst {float(worst) * 1e6:.1f} µs)")


def decoded_audio(path, index, cwd=None, ignore_editlist=False):
    """FFmpeg's decode of audio stream `index` of `path` as interleaved signed 16-bit samples."""
    edit = ["-ignore_editlist", "1"] if ignore_editlist else []
    result = run(["ffmpeg", "-v", "error"] + edit + ["-i", path, "-map", f"0:a:{index}", "-f", "s16le",
                                                    "-c:a", "pcm_s16le", "-"], cwd=cwd)
    return result.returncode, result.stdout, result.stderr.decode()[-200:]


def presented_span(entries, rate):
    """The samples an edit list presents, as (first, count or None for all) at `rate`:
    leading empty edits skipped, then the media edit's media_time and duration (rounded to
    the nearest sample); None for more than one media edit."""
    media = [(d, t) for d, t in entries if t != -1]
    if len(media) > 1:
        return None
    if not media:
        return 0, None
    return int(media[0][1] * rate), int(media[0][0] * rate + Fraction(1, 2))


def gapless_checks(name, source, out, report, source_streams):
    """Decoded audio through the playlists equals the source's, sample for sample. FFmpeg 5.1
    applies neither the edit list of an init segment read through its hls or dash demuxer nor
    (for Opus) the source's own, so both are decoded whole (the source with -ignore_editlist)
    and trimmed here: the source's decode by the source's edit list, the package's by its
    init's, each read by this script (``presented_span``). The two spans must be the same
    samples; the priming the edit skips is gone from both. One tolerance, at the end only:
    where the source's last edit runs past the end of its media (FFmpeg then decodes to the
    media's end), the package fits it to the media in the movie timescale, rounded down
    (the project's presentation rule), so its span may end up to one movie tick early -- at
    most ceil(rate / movie timescale) samples (44 at 44.1 kHz over 1/1000 s); every sample
    both present must be equal. A track whose edit list has more than one media edit is
    noted, not compared."""
    audio_tracks = [t for t in report["tracks"] if t["kind"] == "audio"]
    audio_streams = [s for s in source_streams if s["codec_type"] == "audio"]
    source_edits = edit_list(open(source, "rb").read())
    for k, (track, stream) in enumerate(zip(audio_tracks, audio_streams)):
        tid = track["input_track_id"]
        rate = int(stream["sample_rate"])
        width = 2 * int(stream["channels"])
        init = open(os.path.join(out, f"track{tid}_init.mp4"), "rb").read()
        ours = presented_span((list(edit_list(init).values()) or [([], 0)])[0][0], rate)
        theirs = presented_span(source_edits.get(tid, ([], 0))[0], rate)
        if ours is None or theirs is None:
            print(f"note {name}: track {tid}: more than one media edit: decoded audio not compared")
            continue
        skip, keep = ours
        code, wanted, err = decoded_audio(source, k, ignore_editlist=True)
        overrun = theirs[1] is not None and theirs[0] + theirs[1] > len(wanted) // width
        mvhd = child(init, *child(init, 0, len(init), ["moov"]), ["mvhd"])
        scale = struct.unpack(">I", init[mvhd[0] + (20 if init[mvhd[0]] == 1 else 12):][:4])[0]
        tolerance = -(-rate // scale) if overrun else 0
        wanted = wanted[theirs[0] * width:]
        wanted = wanted[:theirs[1] * width] if theirs[1] is not None else wanted
        for label, path, cwd in (("hls", os.path.join(out, "master.m3u8"), None), ("dash", "manifest.mpd", out)):
            got_code, got, got_err = decoded_audio(path, k, cwd=cwd)
            trimmed = got[skip * width:]
            trimmed = trimmed[:keep * width] if keep is not None else trimmed
            common = min(len(trimmed), len(wanted))
            short = (len(wanted) - len(trimmed)) // width
            same = code == 0 and got_code == 0 and trimmed[:common] == wanted[:common] and common > 0 \
                and 0 <= short <= tolerance
            first = next((i // width for i in range(0, common, width)
                          if trimmed[i:i + width] != wanted[i:i + width]), None)
            check(same, f"{name}: track {tid}: FFmpeg {label}: decoded audio, less the init's edit ({skip} samples "
                  f"skipped, {keep if keep is not None else 'all'} kept), equals the source's decode sample for "
                  f"sample ({len(trimmed) // width} samples" + (f"; {short} fewer at the end, of at most {tolerance}"
                                                               if tolerance else "") + ")",
                  f"source {len(wanted) // width} samples, first difference at {first}; {err}{got_err}")


def package_and_check(tool, name, source, work, segment=None, extra=()):
    out = os.path.join(work, name + "-out")
    args = [tool, "package", source, out, "--json"] + (["--segment-duration", str(segment)] if segment else []) \
        + list(extra)
    result = run(args)
    if not check(result.returncode == 0, f"{name}: package exits 0", result.stderr.decode()[-300:]):
        return
    report = json.loads(result.stdout)
    probe = json.loads(run(["ffprobe", "-v", "error", "-show_streams", "-of", "json", source]).stdout)
    source_streams = [s for s in probe["streams"] if s["codec_type"] in ("audio", "video")]
    leftovers = [f for f in os.listdir(work) if f.startswith("." + name + "-out.package")]
    check(not leftovers, f"{name}: no temporary folder left", str(leftovers))

    source_bytes = open(source, "rb").read()
    media, variants = check_playlists(name, out, source_streams, source_bytes)

    # Segments and init segments, by our own box walker.
    source_edits = edit_list(source_bytes)
    mpd = open(os.path.join(out, "manifest.mpd")).read()
    for track in report["tracks"]:
        tid = track["input_track_id"]
        init = open(os.path.join(out, f"track{tid}_init.mp4"), "rb").read()
        edits = list(edit_list(init).values())[0]
        check(same_presentation(edits, source_edits.get(tid, ([], 0))),
              f"{name}: track {tid}: init keeps the edit list", f"{edits} vs {source_edits.get(tid)}")
        stream = next((s for s in source_streams if s.get("id") in (hex(tid), f"0x{tid:x}") or
                       s["index"] == tid - 1), {})
        expected = codec_string(init, stream)
        check(expected == track["codecs"], f"{name}: track {tid}: CODECS {track['codecs']} recomputed as {expected}")
        rep = re.search(r'<Representation id="%d".*?</Representation>' % tid, mpd, re.S)
        timeline = [(int(t), int(d), int(r or 0)) for t, d, r in
                    re.findall(r'<S t="(\d+)" d="(\d+)"(?: r="(\d+)")?/>', rep.group(0))] if rep else []
        starts = []
        for t, d, r in timeline:
            for k in range(r + 1):
                starts.append((t + k * d, d))
        check(rep is not None and f'codecs="{track["codecs"]}"' in rep.group(0), f"{name}: track {tid}: MPD codecs")
        decode = None
        ok_continuous = ok_sync = ok_boxes = ok_mpd = True
        for k in range(track["segments"]):
            data = open(os.path.join(out, f"track{tid}_{k + 1}.m4s"), "rb").read()
            kinds, tfdt, duration, sync, _ = fragment(data)
            ok_boxes &= kinds == ["styp", "moof", "mdat"]
            if decode is not None:
                ok_continuous &= tfdt == decode
            decode = tfdt + duration
            if track["kind"] == "video":
                ok_sync &= sync
            ok_mpd &= k < len(starts) and starts[k] == (tfdt, duration)
        check(ok_boxes, f"{name}: track {tid}: every segment is styp + moof + mdat")
        check(ok_continuous, f"{name}: track {tid}: tfdt continuous over {track['segments']} segments")
        check(ok_mpd and len(starts) == track["segments"], f"{name}: track {tid}: MPD S@t = each tfdt, d = its "
              "duration")
        if track["kind"] == "video":
            check(ok_sync, f"{name}: track {tid}: every video segment starts with a sync sample")

    # FFmpeg's demuxers against the source's packets, and its decoded audio (gapless).
    ffmpeg_checks(name, source, out, source_streams, times=True)
    gapless_checks(name, source, out, report, source_streams)

    # GStreamer decodes the same video frames.
    has_video = any(s["codec_type"] == "video" for s in source_streams)
    has_audio = any(s["codec_type"] == "audio" for s in source_streams)
    http_checks(name, source, out, has_video, has_audio, work)
    if not (gst_has("hlsdemux") and gst_has("dashdemux")):
        skip(f"{name}: GStreamer", "hlsdemux/dashdemux (gstreamer1.0-plugins-bad) not installed")
        return
    frames, samples, _ = gst_decode("file://" + os.path.abspath(source), has_video, has_audio, work)
    for label, path in (("hlsdemux", "master.m3u8"), ("dashdemux", "manifest.mpd")):
        got_frames, got_samples, code = gst_decode("file://" + os.path.join(os.path.abspath(out), path),
                                                   has_video, has_audio, work)
        if has_video:
            check(got_frames == frames, f"{name}: GStreamer {label}: {got_frames} video frames, the source's "
                  f"{frames}")
        if has_audio:
            # hlsdemux/dashdemux push each fragment without the init's edit list: the samples
            # the edit hides (AAC's 1024 of priming, the last frame's padding) are decoded too,
            # at most two AAC frames; never fewer samples than from the source.
            if not samples:
                print(f"note {name}: GStreamer {label}: no audio decoded from the source itself "
                      f"({got_samples} through the package): not compared")
                continue
            difference = None if got_samples is None else got_samples - samples
            check(difference is not None and 0 <= difference <= 2048,
                  f"{name}: GStreamer {label}: {got_samples} audio samples, the source's {samples} and "
                  f"{difference} the edit hides (at most 2048)")


def single_file_check(tool, name, source, work, segment):
    """--single-file: one trackN.mp4 per track holding the separate files' bytes (init, then
    a sidx whose references are the segments' sizes, then the segments), the byte ranges of
    the playlists on them, and both demuxers of both players reading every packet."""
    separate = os.path.join(work, name + "-out")
    out = os.path.join(work, name + "-single")
    result = run([tool, "package", source, out, "--json", "--single-file", "--iframes", "--segment-duration",
                  str(segment)])
    if not check(result.returncode == 0, f"{name} --single-file: package exits 0", result.stderr.decode()[-300:]):
        return
    report = json.loads(result.stdout)
    for track in report["tracks"]:
        tid = track["input_track_id"]
        data = open(os.path.join(out, f"track{tid}.mp4"), "rb").read()
        init = open(os.path.join(separate, f"track{tid}_init.mp4"), "rb").read()
        segments = [open(os.path.join(separate, f"track{tid}_{k + 1}.m4s"), "rb").read()
                    for k in range(track["segments"])]
        top = list(boxes(data))
        sidx = next(((s, e) for k, s, e in top if k == "sidx"), None)
        check(data.startswith(init) and sidx is not None and sidx[0] - 8 == len(init)
              and data[sidx[1]:] == b"".join(segments),
              f"{name} --single-file: track{tid}.mp4 = the init segment, a sidx, the separate segments byte for byte")
        if sidx is None:
            continue
        s0 = sidx[0]
        count = struct.unpack(">H", data[s0 + 30:s0 + 32])[0]
        references = [struct.unpack(">III", data[s0 + 32 + 12 * k:s0 + 44 + 12 * k]) for k in range(count)]
        check([r[0] & 0x7FFFFFFF for r in references] == [len(x) for x in segments]
              and [fragment(x)[2] for x in segments] == [r[1] for r in references],
              f"{name} --single-file: track {tid}: sidx references = the segments' sizes and durations")
        lines, tags, listed = read_media(os.path.join(out, f"track{tid}.m3u8"))
        ranges = [l.split(":", 1)[1] for l in lines if l.startswith("#EXT-X-BYTERANGE:")]
        offset = sidx[1]
        expected = []
        for x in segments:
            expected.append(f"{len(x)}@{offset}")
            offset += len(x)
        check(ranges == expected and tags.get("#EXT-X-MAP") == f'URI="track{tid}.mp4",BYTERANGE="{len(init)}@0"',
              f"{name} --single-file: track {tid}: EXT-X-BYTERANGE on each segment, quoted BYTERANGE on EXT-X-MAP",
              f"{tags.get('#EXT-X-MAP')}")
        mpd = open(os.path.join(out, "manifest.mpd")).read()
        check(f'indexRange="{sidx[0] - 8}-{sidx[1] - 1}"' in mpd and f'<Initialization range="0-{len(init) - 1}"/>'
              in mpd, f"{name} --single-file: track {tid}: SegmentBase indexRange is the sidx")
    probe = json.loads(run(["ffprobe", "-v", "error", "-show_streams", "-of", "json", source]).stdout)
    ffmpeg_checks(name + " --single-file", source, out, probe["streams"], times=False)
    video = next((t for t in report["tracks"] if t["kind"] == "video"), None)
    if video:
        last = open(os.path.join(separate, f"track{video['input_track_id']}_{video['segments']}.m4s"), "rb").read()
        before = SERVER["server"].partial.get(os.path.basename(out), 0) if "server" in SERVER else 0
        http_checks(name + " --single-file", source, out, True,
                    any(s["codec_type"] == "audio" for s in probe["streams"]), work,
                    last_segment_frames=fragment(last)[4])
        if "server" in SERVER:
            answered = SERVER["server"].partial.get(os.path.basename(out), 0) - before
            check(answered > 0, f"{name} --single-file: the readers over HTTP asked for byte ranges "
                  f"({answered} answered 206)")
    if gst_has("hlsdemux") and gst_has("dashdemux"):
        frames, _, _ = gst_decode("file://" + os.path.abspath(source), True, False, work)
        for label, path in (("hlsdemux", "master.m3u8"), ("dashdemux", "manifest.mpd")):
            got_frames, _, _ = gst_decode("file://" + os.path.join(os.path.abspath(out), path), True, False, work)
            check(got_frames == frames, f"{name} --single-file: GStreamer {label}: {got_frames} video frames, the "
                  f"source's {frames}")
    else:
        skip(f"{name} --single-file: GStreamer", "hlsdemux/dashdemux (gstreamer1.0-plugins-bad) not installed")


def refusal(tool, label, source, status, work):
    out = os.path.join(work, "refused-out")
    result = run([tool, "package", source, out])
    left = [f for f in os.listdir(work) if f.startswith("refused-out") or f.startswith(".refused-out")]
    check(result.returncode == status and not left and result.stderr.decode().count("\n") == 1,
          f"refusal: {label} exits {status}, one line, nothing left",
          f"exit {result.returncode}, left {left}, {result.stderr.decode()[:200]}")


def without_sync_samples(source, target):
    """`source` with its video stss emptied: a video track with no sync sample."""
    data = bytearray(open(source, "rb").read())
    index = data.find(b"stss")
    if index < 0:
        return False
    data[index + 8:index + 12] = b"\0\0\0\0"
    open(target, "wb").write(bytes(data))
    return True


def main():
    if not (have("ffmpeg") and have("ffprobe")):
        skip("package conformance", "ffmpeg/ffprobe not installed")
        print(f"{results['passed']} passed, {results['failed']} failed")
        return 1 if results["failed"] else 0
    tool = binary()
    work = tempfile.mkdtemp(prefix="package-conformance-")
    try:
        def make(name, args):
            path = os.path.join(work, name)
            r = run(["ffmpeg", "-v", "error", "-y"] + args + [path])
            if r.returncode != 0:
                check(False, f"make {name}", r.stderr.decode()[-300:])
                return None
            return path

        testsrc = ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30000/1001"]
        sine = ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100"]
        sine48 = ["-f", "lavfi", "-i", "sine=frequency=660:sample_rate=48000"]
        clips = [
            ("h264-aac-2997", testsrc + sine + [
                "-t", "16", "-c:v", "libx264", "-bf", "2", "-g", "300", "-sc_threshold", "0",
                "-force_key_frames", "0,1.3,2.2,5.9,6.1,9.7,13.4", "-c:a", "aac", "-b:a", "96k",
                "-metadata:s:a:0", "language=eng"], 2),
            ("h264-aac-default", testsrc + sine + [
                "-t", "16", "-c:v", "libx264", "-bf", "3", "-g", "60", "-c:a", "aac"], None),
            ("hevc-hvc1-opus", ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25"] + sine48 + [
                "-t", "8", "-c:v", "libx265", "-tag:v", "hvc1", "-x265-params",
                "keyint=40:min-keyint=40:scenecut=0:bframes=3:log-level=error", "-c:a", "libopus", "-b:a", "64k"], 2),
            ("hevc-hev1-ac3", ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30"] + sine48 + [
                "-t", "8", "-c:v", "libx265", "-tag:v", "hev1", "-x265-params",
                "keyint=45:min-keyint=45:scenecut=0:bframes=2:log-level=error", "-c:a", "ac3"], 2),
            ("two-languages", testsrc + sine + sine48 + [
                "-t", "8", "-map", "0", "-map", "1", "-map", "2", "-c:v", "libx264", "-g", "48", "-c:a", "aac",
                "-metadata:s:a:0", "language=eng", "-metadata:s:a:1", "language=fra"], 2),
            ("start-delay", testsrc + ["-itsoffset", "0.5"] + sine + [
                "-t", "8", "-map", "0", "-map", "1", "-c:v", "libx264", "-bf", "2", "-g", "30", "-c:a", "aac"], 2),
            ("flac-audio-only", sine48 + ["-t", "7", "-c:a", "flac", "-strict", "-2"], 2),
            # HDR: x264/x265 write the transfer in the SPS VUI, FFmpeg a colr box beside it;
            # the "-vui" clip has its colr renamed "free", so that only the SPS says PQ.
            ("hdr-pq-h264-vui", testsrc + sine + [
                "-t", "8", "-c:v", "libx264", "-g", "48", "-color_trc", "smpte2084", "-color_primaries", "bt2020",
                "-colorspace", "bt2020nc", "-c:a", "aac"], 2),
            ("hdr-hlg-hevc-colr", ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25"] + sine48 + [
                "-t", "8", "-c:v", "libx265", "-tag:v", "hvc1", "-pix_fmt", "yuv420p10le", "-x265-params",
                "keyint=50:min-keyint=50:scenecut=0:log-level=error", "-color_trc", "arib-std-b67",
                "-color_primaries", "bt2020", "-colorspace", "bt2020nc", "-c:a", "aac"], 2),
        ]
        for name, args, segment in clips:
            path = make(name + ".mp4", args)
            if path and name.endswith("-vui"):
                data = bytearray(open(path, "rb").read())
                at = data.find(b"colr")
                check(at > 0, f"make {name}: a colr box to rename")
                data[at:at + 4] = b"free"
                open(path, "wb").write(bytes(data))
            if path:
                package_and_check(tool, name, path, work, segment)
                if name in ("h264-aac-2997", "hevc-hvc1-opus"):
                    single_file_check(tool, name, path, work, segment)
        corpus = ["sp_bear_avc_aac_faststart.mp4", "sp_bear_hev1_aac.mp4", "sp_bear_vp9_aac.mp4",
                  "sp_bear_avc_ec3.mp4", "sio_coremedia_h264_aac.mov", "sp_bbb_piff_smooth.ismv",
                  "sp_bear_av1_frag.mp4", "nomexif_coremedia_hevc.mp4"]
        for file in corpus:
            path = os.path.join(CORPUS, file)
            if not os.path.exists(path):
                skip(f"corpus {file}", "not present")
                continue
            package_and_check(tool, "corpus-" + file.rsplit(".", 1)[0], path, work, 1)

        # Refusals, and an existing output.
        encrypted = os.path.join(CORPUS, "sp_bear_frag_cenc_senc.mp4")
        if os.path.exists(encrypted):
            refusal(tool, "an encrypted input", encrypted, 69, work)
        base = os.path.join(work, "h264-aac-2997.mp4")
        nosync = os.path.join(work, "no-sync.mp4")
        if os.path.exists(base) and without_sync_samples(base, nosync):
            refusal(tool, "a video without sync samples", nosync, 69, work)
        if os.path.exists(base):
            out = os.path.join(work, "existing")
            os.mkdir(out)
            open(os.path.join(out, "keep.txt"), "w").write("mine")
            r = run([tool, "package", base, out])
            check(r.returncode == 73 and os.listdir(out) == ["keep.txt"], "an existing OUTDIR: exit 73, untouched")
            r = run([tool, "package", base, out, "--overwrite"])
            check(r.returncode == 73 and os.listdir(out) == ["keep.txt"],
                  "--overwrite leaves a folder package did not write alone (73)")
            shutil.rmtree(out)
            first = run([tool, "package", base, out, "-q"])
            second = run([tool, "package", base, out, "-q", "--overwrite", "--segment-duration", "4"])
            check(first.returncode == 0 and second.returncode == 0 and "track1_8.m4s" not in os.listdir(out),
                  "--overwrite replaces a package's folder whole (no stale segment)", str(sorted(os.listdir(out))))
    finally:
        if "server" in SERVER:
            SERVER.pop("server").close()
        shutil.rmtree(work, ignore_errors=True)
    print(f"{results['passed']} passed, {results['failed']} failed")
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
