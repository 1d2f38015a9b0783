#!/usr/bin/env python3
"""Checks `extract-audio probe --packets --json` against
`ffprobe -ignore_editlist 1 -show_packets` on every fixture of Scripts/fixtures.list and
the packet fixtures listed below, field by field: pts, dts, duration, size, pos (our
offset) and the key flag (our sync), per stream, each ffprobe stream mapped to our track
by its ID (ffprobe's stream `id` is the tkhd track ID).

Where FFmpeg 5.1 reports something other than the file holds, the case and the reason are
printed and the rest of that file is still checked; the value FFmpeg does not give is
derived independently with Scripts/mp4box.py (a Python box walker that shares no code
with the Swift reader):
  - PCM in QuickTime: FFmpeg regroups a chunk's samples into packets of <= 1024 samples,
    so its packets are not the file's samples. Checked instead: our samples equal
    mp4box.py's (offset, size, duration) from stsc/stsz/stco/stts, and cover the same
    bytes as FFmpeg's packets.
  - Durations in fragmented tracks: FFmpeg 5.1 reports for some samples (the first of a
    track, the last of a fragment, the last of the track) a duration other than the
    trun's, while its own next dts agrees with the trun. Checked instead against
    ffprobe's next dts minus this one, and for the track's last sample against the
    trun/tfhd/trex duration mp4box.py reads.
  - A chapter track (tref/chap): FFmpeg reads it as chapters, not as a stream. Checked
    against mp4box.py's table. A chapter track of images is an attached picture with
    timed thumbnails for ffprobe (one packet, its first image, without timestamps): a
    track without packets, checked the same way; cover art (attached pictures without
    a track) is left out.
  - Packet durations FFmpeg 5.1 does not take from stts (mov_read_packet sets one only in a
    track without ctts: the next sample's dts minus this one, for the last sample its
    stream duration minus its dts, unset when negative; in a track with ctts ffprobe
    prints libavformat's guess from the frame rate). Checked: ffprobe's last duration is
    that formula, and ours equals mp4box.py's stts.
  - Fragments with negative trun composition offsets: FFmpeg 5.1 presents every sample
    later by the largest of them (its dts_shift, added to pts since the dts are the
    tfdt's). Checked: ffprobe's pts minus ours is exactly that, for every sample.
  - Data streams: libavformat marks every packet a key frame (compute_pkt_fields); ours
    is stss's. Checked: a sample it marks that we do not is not in stss.
  - H.264 key frames: FFmpeg's parser also marks a non-IDR I picture a key frame when the
    SPS allows one reference frame (h264_parser.c, "heuristic to detect non marked
    keyframes"); ours is stss's. Checked: the sample's first slice is a non-IDR I slice,
    the only SPS has max_num_ref_frames <= 1 and the only PPS one default reference.
  - External data references (dref without the self-contained flag): FFmpeg's pos is an
    offset in another file; ours too, but FFmpeg reads no packets when the file is
    missing. Checked against mp4box.py's table.
  - One damaged part does not hide the rest (issue 20): a track whose tables are broken
    (no stsd, a chunk overlapping moov, counts that disagree) is listed as one object
    {"track_id", "problem", "reason"} and none of its packets, where FFmpeg lists what
    its tables say; a second moov is ignored with a warning, as FFmpeg ignores it.
    Checked: every other track's packets equal ffprobe's, and the damaged track has its
    problem object. A track whose only damage is its stsd (no sample description, tables
    intact) is listed after its problem object as ffprobe lists it, codec unknown (issue
    32), and compared like any other.
  - A file cut short (a regular file whose chunks run past its end, a fragmented one cut
    inside a fragment): FFmpeg returns the partial bytes of the sample the end cuts, then
    stops every track at the first sample of which no byte is in the file, in its read
    order; we list, after a problem object, the same samples (ReadOrder in the Swift
    reader) less that partial one. Checked: every track's packets equal FFmpeg's, its
    partial last packet excepted, and none of ours runs past the end of the file.
  - Files nothing can be listed from (a moov whose boxes are broken, no moov, not an MP4):
    FFmpeg may read what it can; we exit 65 with the box path. Checked: the exit status.

Usage:
  Scripts/packets-conformance.py [--binary PATH] [FIXTURE...]
                                            PATH: by default $EXTRACT_AUDIO, else a release build
  Scripts/packets-conformance.py --make-fixtures   writes the EXTRA fixtures (run by
                                              Scripts/make-fixtures.sh)
  Scripts/packets-conformance.py --write     writes Fixtures/expected/packets/NAME.json
                                              from ffprobe (not from our reader), for the
                                              Swift tests (PacketsConformanceTests)
Prints one line per file and ends with exactly `N passed, M failed`; exits 1 on failure.
"""

import argparse
import json
import os
import struct
import subprocess
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FIXTURES = os.path.join(ROOT, "Fixtures")
EXPECTED = os.path.join(FIXTURES, "expected", "packets")
sys.path.insert(0, HERE)
import mp4box  # noqa: E402
from oracle.binary import extract_audio  # noqa: E402
from oracle.ffprobe import packets as ffprobe_packets  # noqa: E402
from oracle.run import run  # noqa: E402

# Packet fixtures beyond fixtures.list: video with B-frames (ctts), with negative
# composition offsets (ctts version 1, and the same offsets in a version-0 ctts as Apple's
# encoders write them), a fragmented file whose first tfdt is not 0.
# Fixtures/README.md gives the commands that made them.
# Then one damaged part next to readable ones (Scripts/damage.py).
EXTRA = ["video-bframes.mp4", "video-bframes-negative-cts.mp4", "video-ctts-v0-negative.mp4", "frag-tfdt-start.mp4",
         "frag-edit-duration-0.mp4", "damaged/audio-no-stsd.mp4", "damaged/second-moov.mp4",
         "damaged/audio-chunk-in-moov.mp4", "tracks-in-turn-truncated.mp4", "video-mpeg2-stps.mov",
         "video-stss-zero-based.mp4"]

# Fixtures whose expectations are stored in full; the others get per-track CRCs of the
# packet fields (Swift tests recompute the same CRC), to keep Fixtures/ small.
FULL = {"aac-h264-faststart.mp4", "frag-keyframe.mp4", "aac-quicktime.mov", "video-bframes.mp4",
        "video-bframes-negative-cts.mp4", "video-ctts-v0-negative.mp4", "frag-tfdt-start.mp4", "codec-alac.m4a", "mov-sound-v2-96k.mov",
        "aac-3gp.3gp", "aac-h264-faststart-truncated.mp4", "damaged/audio-no-stsd.mp4", "damaged/second-moov.mp4",
        "damaged/audio-chunk-in-moov.mp4"}

FIELDS = ("dts", "pts", "duration", "size", "offset", "sync")


def fixture_names():
    names = []
    with open(os.path.join(HERE, "fixtures.list")) as listing:
        for line in listing:
            line = line.split("#", 1)[0].split()
            if line:
                names.append((line[0], line[1]))
    return names + [(name, "packets") for name in EXTRA]


ENCRYPTION_INFO_REFUSED = set()  # The paths where ffprobe said so.


def ffprobe(path):
    result = ffprobe_packets(path, ignore_editlist=True, crc=False, streams=True, text=True)
    if result.returncode != 0:
        return None
    data = json.loads(result.stdout or "{}")
    # Cover art (a covr item) is an attached picture without a track; a chapter track of
    # images is an attached picture with timed thumbnails, whose one packet is its first
    # image without timestamps (FFmpeg reads the track as chapters): a track with no
    # packets, checked as other chapter tracks are.
    def disposition(stream, key):
        return (stream.get("disposition") or {}).get(key)
    streams = {s["index"]: s for s in data.get("streams", [])
               if "id" in s and not (disposition(s, "attached_pic") and not disposition(s, "timed_thumbnails"))}
    tracks = {}
    if not streams:
        return None
    for stream in streams.values():
        tracks[int(stream["id"], 16)] = {"codec": stream.get("codec_name", ""), "packets": [],
                                         "duration_ts": stream.get("duration_ts"), "type": stream.get("codec_type")}
    # FFmpeg 5.1 gives up on the encryption info (senc) of a fragment the end of the file
    # cuts, and stops reading there, early (a known difference, see compare).
    if "Incorrect number of samples in encryption info" in (result.stderr or ""):
        ENCRYPTION_INFO_REFUSED.add(path)
    for packet in data.get("packets", []):
        stream = streams.get(packet["stream_index"])
        if stream is None or disposition(stream, "attached_pic"):
            continue
        tracks[int(stream["id"], 16)]["packets"].append({
            "dts": int(packet["dts"]), "pts": int(packet["pts"]), "duration": int(packet.get("duration", 0)),
            "size": int(packet["size"]), "offset": int(packet["pos"]), "sync": "K" in packet["flags"]})
    return tracks


def ours(binary, path):
    """(exit status, {track_id: packets} or the error, {track_id: problem object})."""
    result = run(binary, "probe", "--packets", "--json", path, text=True)
    if result.returncode != 0:
        return result.returncode, (result.stderr.strip() or result.stdout.strip()), {}
    tracks = {}
    problems = {}
    for line in result.stdout.splitlines():
        packet = json.loads(line)
        if "problem" in packet:
            problems[packet["track_id"]] = packet
            continue
        tracks.setdefault(packet["track_id"], []).append(packet)
    return 0, tracks, problems


def partial_last(path, track_id, packets):
    """Whether FFmpeg's last packet of a track is the partial bytes of a sample cut by the
    end of the file: it ends there, and the file's table (mp4box.py) says it is larger."""
    if not packets or packets[-1]["offset"] + packets[-1]["size"] != os.path.getsize(path):
        return False
    table = table_of(path, track_id)
    i = len(packets) - 1
    return i >= len(table) or table[i]["size"] > packets[-1]["size"]


def listed_part(path, table, got, damaged):
    """The part of mp4box.py's `table` a listing of a file cut short holds: its first
    len(got) samples, each wholly inside the file (the read stops earlier for every track:
    ReadOrder); the whole table otherwise."""
    if not any(d["problem"] == "endOfFile" for d in damaged.values()):
        return table
    size = os.path.getsize(path)
    inside = [t for t in table[:len(got)] if t["offset"] + t["size"] <= size]
    return inside


def crc(packets):
    """CRC-32 of the compared fields, one line per packet: what the Swift test recomputes."""
    text = "".join(f"{p['dts']} {p['pts']} {p['duration']} {p['size']} {p['offset']} {int(p['sync'])}\n"
                   for p in packets)
    return zlib.crc32(text.encode())


def tree(data):
    """mp4box.py's top-level boxes, a second moov left out: FFmpeg reads the first."""
    boxes = mp4box.read_tree(data, trailing_ok=True, truncated_ok=True)
    moovs = [box for box in boxes if box.kind == b"moov"]
    return [box for box in boxes if box.kind != b"moov" or box is moovs[0]]


def traks_of(path, track_id):
    """The file's bytes, its top-level boxes (tree) and the traks of moov with that track ID
    (a generator: the traks after the one used are not read)."""
    data = open(path, "rb").read()
    boxes = tree(data)
    moov = mp4box.top(boxes, b"moov")
    return data, boxes, (c for c in moov.children if c.kind == b"trak" and mp4box.track_id(data, c) == track_id)


def table_of(path, track_id):
    """mp4box.py's (offset, size, duration) for a track: stbl, then fragments."""
    data, boxes, traks = traks_of(path, track_id)
    for trak in traks:
        samples = [{"offset": o, "size": s, "duration": d} for o, s, d in mp4box.table_samples(data, trak)]
        if mp4box.is_fragmented(boxes):
            samples += mp4box.fragment_samples(data, boxes, track_id)
        return samples
    return []


def chapter_track(path, track_id):
    """Whether another track names `track_id` in its tref/chap."""
    data = open(path, "rb").read()
    boxes = tree(data)
    return any(kind == b"chap" and track_id in ids
               for tref in mp4box.walk(boxes) if tref.kind == b"tref"
               for kind, ids in mp4box.track_references(data, tref))


def trun_minimum_offset(path, track_id):
    """The least sample composition offset of a track's trun boxes (signed in version 1)."""
    data = open(path, "rb").read()
    least = 0
    for moof in (b for b in tree(data) if b.kind == b"moof"):
        for traf in (c for c in moof.children if c.kind == b"traf"):
            if mp4box.u32(data, traf.child(b"tfhd").payload + 4) != track_id:
                continue
            for trun in (c for c in traf.children if c.kind == b"trun"):
                version = data[trun.payload]
                flags = mp4box.full_box_flags(data, trun)
                count = mp4box.u32(data, trun.payload + 4)
                position = trun.payload + 8 + (4 if flags & 1 else 0) + (4 if flags & 4 else 0)
                for _ in range(count):
                    position += 4 * bool(flags & 0x100) + 4 * bool(flags & 0x200) + 4 * bool(flags & 0x400)
                    if flags & 0x800:
                        least = min(least, struct.unpack_from(">i" if version == 1 else ">I", data, position)[0])
                        position += 4
    return least


def sync_samples(path, track_id):
    """The 1-based sample numbers of a track's stss, or None without one (all samples sync)."""
    data, _, traks = traks_of(path, track_id)
    for trak in traks:
        for stss in (c for c in mp4box.stbl_of(trak).children if c.kind == b"stss"):
            count = mp4box.u32(data, stss.payload + 4)
            return set(struct.unpack_from(f">{count}I", data, stss.payload + 8))
    return None


def has_ctts(path, track_id):
    trak = next(traks_of(path, track_id)[2], None)
    return trak is not None and any(c.kind == b"ctts" for c in mp4box.stbl_of(trak).children)


class Bits:
    """An RBSP's bits (emulation prevention bytes removed), Exp-Golomb codes."""

    def __init__(self, nal):
        self.bytes = bytearray()
        zeros = 0
        for byte in nal:
            if zeros >= 2 and byte == 3:
                zeros = 0
                continue
            zeros = zeros + 1 if byte == 0 else 0
            self.bytes.append(byte)
        self.position = 0

    def bit(self):
        value = self.bytes[self.position >> 3] >> (7 - (self.position & 7)) & 1
        self.position += 1
        return value

    def bits(self, count):
        value = 0
        for _ in range(count):
            value = value << 1 | self.bit()
        return value

    def ue(self):
        zeros = 0
        while not self.bit():
            zeros += 1
        return (1 << zeros) - 1 + self.bits(zeros)

    def se(self):
        value = self.ue()
        return (value + 1) // 2 if value & 1 else -(value // 2)


def avc_parameter_sets(data, trak):
    """(SPS list, PPS list) of the first avcC of a trak, and its NAL length size."""
    stsd = mp4box.stbl_of(trak).child(b"stsd")
    entry = stsd.children[0]
    position = data.find(b"avcC", entry.payload, entry.end) + 4
    length_size = (data[position + 4] & 3) + 1
    count = data[position + 5] & 31
    position += 6
    sps = []
    for _ in range(count):
        size = struct.unpack_from(">H", data, position)[0]
        sps.append(data[position + 2:position + 2 + size])
        position += 2 + size
    pps = []
    for _ in range(data[position]):
        size = struct.unpack_from(">H", data, position + 1)[0]
        pps.append(data[position + 3:position + 3 + size])
        position += 2 + size
    return sps, pps, length_size


def sps_max_num_ref_frames(nal):
    """max_num_ref_frames of an SPS NAL unit (ITU-T H.264 § 7.3.2.1.1)."""
    bits = Bits(nal[1:])
    profile = bits.bits(8)
    bits.bits(16)  # constraint flags, level
    bits.ue()  # seq_parameter_set_id
    if profile in (100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135):
        if bits.ue() == 3:  # chroma_format_idc
            bits.bit()
        bits.ue()
        bits.ue()
        bits.bit()
        if bits.bit():  # seq_scaling_matrix_present_flag
            for i in range(8):
                if bits.bit():
                    last, following = 8, 8
                    for _ in range(16 if i < 6 else 64):
                        if following:
                            following = (last + bits.se() + 256) % 256
                        last = following or last
    bits.ue()  # log2_max_frame_num_minus4
    poc_type = bits.ue()
    if poc_type == 0:
        bits.ue()
    elif poc_type == 1:
        bits.bit()
        bits.se()
        bits.se()
        for _ in range(bits.ue()):
            bits.se()
    return bits.ue()


def pps_ref_count_l0(nal):
    """num_ref_idx_l0_default_active_minus1 + 1 of a PPS without slice groups, else None."""
    bits = Bits(nal[1:])
    bits.ue()
    bits.ue()
    bits.bit()
    bits.bit()
    if bits.ue():  # num_slice_groups_minus1
        return None
    return bits.ue() + 1


def h264_parser_key_frame(path, track_id, offset, size):
    """Whether FFmpeg's H.264 parser's heuristic makes this sample a key frame: its first
    slice is a non-IDR I slice, and its SPS has max_num_ref_frames <= 1 and its PPS a
    default of <= 1 reference in list 0 (the file's only SPS and PPS)."""
    data = open(path, "rb").read()
    moov = mp4box.top(tree(data), b"moov")
    trak = next(t for t in (c for c in moov.children if c.kind == b"trak") if mp4box.track_id(data, t) == track_id)
    sps, pps, length_size = avc_parameter_sets(data, trak)
    if len(sps) != 1 or len(pps) != 1:
        return False
    if sps_max_num_ref_frames(sps[0]) > 1 or (pps_ref_count_l0(pps[0]) or 2) > 1:
        return False
    position = offset
    while position + length_size < offset + size:
        length = int.from_bytes(data[position:position + length_size], "big")
        nal = data[position + length_size:position + length_size + length]
        kind = nal[0] & 31
        if kind == 5:
            return False
        if kind == 1:
            bits = Bits(nal[1:8])
            bits.ue()  # first_mb_in_slice
            return bits.ue() in (2, 7)  # I
        position += length_size + length
    return False


def is_fragmented(path):
    data = open(path, "rb").read()
    boxes = tree(data)
    return mp4box.is_fragmented(boxes)


def compare(name, kind, path, binary):
    """(ok, message, notes)."""
    status, mine, damaged = ours(binary, path)
    theirs = ffprobe(path)
    if kind == "exit" and status != 0:
        if True:
            return status == 65, f"refused (exit {status}), FFmpeg read " \
                f"{sum(len(t['packets']) for t in (theirs or {}).values())} packets: {mine.splitlines()[-1][:90]}", []
    if status != 0:
        return False, f"probe --packets exited {status}: {mine}", []
    if theirs is None and damaged:
        # FFmpeg refuses the whole file for one damaged table; we list the other tracks.
        problems = []
        for track_id, got in sorted(mine.items()):
            table = listed_part(path, table_of(path, track_id), got, damaged)
            if [(p["offset"], p["size"], p["duration"]) for p in got] != \
                    [(t["offset"], t["size"], t["duration"]) for t in table]:
                problems.append(f"track {track_id}: samples differ from mp4box.py's table")
        notes = [f"FFmpeg refuses the file; track {tid} is damaged ({d['problem']}), the others are checked against "
                 "mp4box.py's table" for tid, d in sorted(damaged.items())]
        counts = ", ".join(f"{tid}:{len(t)}" for tid, t in sorted(mine.items()))
        return not problems and bool(mine), "; ".join(problems) or f"tracks {counts}", notes
    if theirs is None:
        return False, "ffprobe failed", []
    notes = []
    problems = []
    fragmented = is_fragmented(path)
    size = os.path.getsize(path)
    truncated = any(d["problem"] == "endOfFile" for d in damaged.values())
    refused_encryption = path in ENCRYPTION_INFO_REFUSED
    for track_id, track in sorted(theirs.items()):
        got = mine.get(track_id, [])
        want = track["packets"]
        problem = damaged.get(track_id)
        if problem and not got:
            notes.append(f"track {track_id}: damaged ({problem['problem']}), listed as a problem where FFmpeg lists "
                         f"{len(want)} packets: {problem['reason'][:100]}")
            continue
        if truncated:
            # FFmpeg gives the partial bytes of the sample the end of the file cuts, then stops
            # at the first sample of which no byte is there, for every track; we list the
            # same samples less that partial one (issue 32).
            if partial_last(path, track_id, want):
                want = want[:-1]
                notes.append(f"track {track_id}: cut short; FFmpeg's last packet is the partial bytes of a "
                             "sample cut by the end of the file, not listed")
            if any(p["offset"] + p["size"] > size for p in got):
                problems.append(f"track {track_id}: a listed sample runs past the end of the file")
        if problem and problem["problem"] == "endOfFile":
            pass
        elif problem and "stsd" in problem["reason"]:
            # No readable sample description, the other tables intact (issue 32): listed as
            # ffprobe lists them, codec unknown, and compared below like any track.
            notes.append(f"track {track_id}: no readable stsd ({problem['problem']}), its {len(got)} samples "
                         "listed with the codec unknown")
        elif problem:
            problems.append(f"track {track_id}: problem {problem['problem']} but {len(got)} packets listed")
            continue
        if track["codec"].startswith("pcm_") and len(got) != len(want):
            table = listed_part(path, table_of(path, track_id), got, damaged)
            same = [(p["offset"], p["size"], p["duration"]) for p in got] == \
                [(s["offset"], s["size"], s["duration"]) for s in table]
            covered = sum(p["size"] for p in got) == sum(p["size"] for p in want)
            notes.append(f"track {track_id}: PCM, FFmpeg regroups {len(got)} samples into {len(want)} packets; "
                         f"checked against mp4box.py's table" + ("" if covered else " (bytes differ!)"))
            if not same or not covered:
                problems.append(f"track {track_id}: PCM samples differ from mp4box.py's table")
            continue
        if not want and got and os.path.basename(path).startswith("dref-external"):
            table = listed_part(path, table_of(path, track_id), got, damaged)
            same = [(p["offset"], p["size"], p["duration"]) for p in got] == \
                [(s["offset"], s["size"], s["duration"]) for s in table]
            notes.append(f"track {track_id}: external data reference, FFmpeg reads no packets; checked "
                         "against mp4box.py's table")
            if not same:
                problems.append(f"track {track_id}: samples differ from mp4box.py's table")
            continue
        if not want and got and chapter_track(path, track_id):
            table = listed_part(path, table_of(path, track_id), got, damaged)
            same = [(p["offset"], p["size"], p["duration"]) for p in got] == \
                [(s["offset"], s["size"], s["duration"]) for s in table]
            notes.append(f"track {track_id}: a chapter track (tref/chap), which FFmpeg reads as chapters, not as "
                         "a stream; checked against mp4box.py's table")
            if not same:
                problems.append(f"track {track_id}: samples differ from mp4box.py's table")
            continue
        if truncated and refused_encryption and len(got) > len(want):
            # FFmpeg 5.1 refuses the encryption info of the fragment the cut lies in and stops
            # reading the file early (the 75 % cut gives fewer packets than the 50 % one):
            # checked on what it lists, a prefix of ours.
            notes.append(f"track {track_id}: FFmpeg stops early ('Incorrect number of samples in encryption "
                         f"info'): its {len(want)} packets compared, of our {len(got)}")
            got = got[:len(want)]
        if len(got) != len(want):
            problems.append(f"track {track_id}: {len(got)} samples, ffprobe {len(want)}")
            continue
        table = table_of(path, track_id)
        fragment_ends = 0
        guessed = []
        parser_keys = []
        ctts = not fragmented and has_ctts(path, track_id)
        pts_shift = None
        shifted = 0
        stss = None
        data_keys = 0
        for i, (g, w) in enumerate(zip(got, want)):
            for field in FIELDS:
                if g[field] == w[field]:
                    continue
                if field == "duration" and fragmented:
                    # FFmpeg 5.1's packet durations in fragments are not always the trun's
                    # (the first sample, the last of a fragment, the last of the track).
                    # The file's: up to the next sample's dts (ffprobe's own), or for the
                    # track's last sample, the trun's (mp4box.py).
                    derived = want[i + 1]["dts"] - w["dts"] if i + 1 < len(want) else table[i]["duration"]
                    fragment_ends += 1
                    if g[field] != derived:
                        problems.append(f"track {track_id} sample {i}: duration {g[field]}, the file's {derived}")
                    continue
                if field == "duration" and (ctts or i == len(want) - 1) and i < len(table):
                    # FFmpeg 5.1's mov_read_packet sets a packet's duration only in a track
                    # without ctts, as the next sample's dts minus its own, for the last
                    # sample its stream duration minus its dts (left unset, printed as none,
                    # when that is negative); in a track with ctts it sets none and ffprobe
                    # prints libavformat's guess (compute_pkt_fields: the frame rate). Ours
                    # is the file's: checked against mp4box.py's stts.
                    if not ctts:
                        end = int(track["duration_ts"]) - w["dts"] if track.get("duration_ts") else None
                        if end is None or w[field] != max(end, 0):
                            problems.append(f"track {track_id} sample {i}: duration {g[field]}, ffprobe {w[field]}, "
                                            f"not its stream duration minus dts ({end})")
                            break
                    if g[field] != table[i]["duration"]:
                        problems.append(f"track {track_id} sample {i}: duration {g[field]}, the file's "
                                        f"{table[i]['duration']}")
                        break
                    guessed.append(i)
                    continue
                if field == "pts" and fragmented and pts_shift is None:
                    pts_shift = -min(0, trun_minimum_offset(path, track_id))
                if field == "pts" and fragmented and pts_shift and w["pts"] - g["pts"] == pts_shift:
                    # FFmpeg 5.1 in fragments: negative trun composition offsets make it
                    # present every sample later by the largest of them (mov_read_trun:
                    # dts_shift), the dts staying the tfdt's; ours is the file's pts.
                    shifted += 1
                    continue
                if field == "sync" and w[field] and not g[field] and track.get("type") == "data" \
                        and not fragmented:
                    # libavformat marks every packet of a data stream a key frame
                    # (compute_pkt_fields: "codec_type == AVMEDIA_TYPE_DATA || is_intra_only");
                    # ours is the file's stss. Checked against mp4box.py's reading of it.
                    if stss is None:
                        stss = sync_samples(path, track_id)
                    if stss is not None and i + 1 not in stss:
                        data_keys += 1
                        continue
                if field == "sync" and w[field] and not g[field] and track["codec"] == "h264" \
                        and h264_parser_key_frame(path, track_id, g["offset"], g["size"]):
                    # FFmpeg's H.264 parser marks a non-IDR I picture a key frame when the
                    # SPS allows one reference frame (h264_parser.c, "heuristic to detect non
                    # marked keyframes"); the container (stss) does not list it, nor does
                    # the bitstream make it a random access point (no IDR, no recovery point).
                    parser_keys.append(i)
                    continue
                problems.append(f"track {track_id} sample {i}: {field} {g[field]}, ffprobe {w[field]}")
                break
            if len(problems) > 3:
                break
        if data_keys:
            notes.append(f"track {track_id}: {data_keys} sample(s) key for FFmpeg, which marks every packet of a "
                         "data stream so; not in stss")
        if shifted:
            notes.append(f"track {track_id}: {shifted} sample(s) presented {pts_shift} ticks later by FFmpeg, the "
                         "largest negative trun composition offset (its dts_shift in fragments); ours the file's pts")
        if guessed:
            notes.append(f"track {track_id}: {len(guessed)} sample(s) whose FFmpeg duration is its guess "
                         f"({'a track with ctts' if ctts else 'the last sample: its stream duration minus dts'}), "
                         f"first {guessed[0]}; checked against mp4box.py's stts")
        if parser_keys:
            notes.append(f"track {track_id}: samples {parser_keys[:5]} are key frames only for FFmpeg's H.264 parser "
                         "(non-IDR I picture, one reference frame); not in stss")
        if fragment_ends:
            notes.append(f"track {track_id}: {fragment_ends} fragmented sample(s) whose FFmpeg duration is not the "
                         "file's; checked against ffprobe's next dts (the last: mp4box.py's trun duration)")
    for track_id in sorted(set(damaged) - set(theirs)):
        notes.append(f"track {track_id}: damaged ({damaged[track_id]['problem']}), not a stream for ffprobe")
    extra = sorted(set(mine) - set(theirs))
    if extra:
        problems.append(f"tracks {extra} are not streams for ffprobe")
    counts = ", ".join(f"{tid}:{len(t)}" for tid, t in sorted(mine.items()))
    if problems:
        return False, "; ".join(problems[:4]), notes
    return True, f"tracks {counts}", notes


def make_fixtures():
    """Writes the EXTRA fixtures (Fixtures/README.md describes them)."""
    def run(*args):
        subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", *args], check=True)
    bitexact = ["-fflags", "+bitexact", "-flags:v", "+bitexact", "-map_metadata", "-1", "-threads", "1"]
    run("-f", "lavfi", "-i", "testsrc=size=64x48:rate=25", "-t", "1", "-c:v", "libx264", "-bf", "2", "-g", "12",
        "-pix_fmt", "yuv420p", *bitexact, os.path.join(FIXTURES, "video-bframes.mp4"))
    run("-i", os.path.join(FIXTURES, "video-bframes.mp4"), "-c", "copy", "-movflags", "+negative_cts_offsets",
        *bitexact, os.path.join(FIXTURES, "video-bframes-negative-cts.mp4"))
    # The same negative offsets in a version-0 ctts, as Apple's encoders (iPhone, Core
    # Media) store them: only the version byte changes. FFmpeg reads them as signed.
    data = bytearray(open(os.path.join(FIXTURES, "video-bframes-negative-cts.mp4"), "rb").read())
    ctts = [box for box in mp4box.walk(mp4box.read_tree(bytes(data))) if box.kind == b"ctts"]
    assert len(ctts) == 1 and data[ctts[0].payload] == 1
    data[ctts[0].payload] = 0
    with open(os.path.join(FIXTURES, "video-ctts-v0-negative.mp4"), "wb") as f:
        f.write(data)
    # frag-keyframe.mp4 with every tfdt moved 90000 ticks later: a track that starts at a
    # decode time other than 0, as a live stream's segments do.
    data = bytearray(open(os.path.join(FIXTURES, "frag-keyframe.mp4"), "rb").read())
    for box in mp4box.walk(mp4box.read_tree(bytes(data))):
        if box.kind == b"tfdt":
            layout = ">Q" if data[box.payload] == 1 else ">I"
            time = struct.unpack_from(layout, data, box.payload + 4)[0]
            struct.pack_into(layout, data, box.payload + 4, time + 90000)
    with open(os.path.join(FIXTURES, "frag-tfdt-start.mp4"), "wb") as f:
        f.write(data)
    # frag-default-base-moof.mp4 with an edit list of duration 0 in each trak, as DASH and
    # HLS init segments carry it (ISO/IEC 14496-12 § 8.6.6: the edit runs to the end of the
    # media): video from media time 0, audio from 1024 (the AAC priming). Offsets in its
    # fragments count from each moof, so growing moov moves nothing they point at.
    write_edit_duration_zero(os.path.join(FIXTURES, "frag-default-base-moof.mp4"),
                             os.path.join(FIXTURES, "frag-edit-duration-0.mp4"))
    # video-only.mp4 (moov last) with its video delayed by an empty edit of 5 s, longer than
    # its 3 s of media: FFmpeg and GStreamer start the track at 5 s.
    write_with_edits(os.path.join(FIXTURES, "video-only.mp4"), os.path.join(FIXTURES, "video-delay-5s.mp4"),
                     lambda handler: [(5000, -1), (3000, 0)])
    # Open-GOP MPEG-2 in QuickTime: FFmpeg's mov muxer lists the GOPs' I pictures that
    # need the previous GOP's pictures for their leading B pictures in stps (partial sync
    # samples), the first one alone in stss; FFmpeg's demuxer reads both as key frames.
    run("-f", "lavfi", "-i", "testsrc=size=64x48:rate=25", "-t", "2", "-c:v", "mpeg2video", "-bf", "2", "-g", "12",
        *bitexact, "-f", "mov", os.path.join(FIXTURES, "video-mpeg2-stps.mov"))
    # video-bframes.mp4 with its stss counting samples from 0 (as some writers wrongly do):
    # FFmpeg reads such a table as 0-based when its first entry is 0.
    data = bytearray(open(os.path.join(FIXTURES, "video-bframes.mp4"), "rb").read())
    stss = [box for box in mp4box.walk(mp4box.read_tree(bytes(data))) if box.kind == b"stss"]
    assert len(stss) == 1
    count = struct.unpack_from(">I", data, stss[0].payload + 4)[0]
    assert count >= 2 and struct.unpack_from(">I", data, stss[0].payload + 8)[0] == 1
    for n in range(count):
        at = stss[0].payload + 8 + 4 * n
        struct.pack_into(">I", data, at, struct.unpack_from(">I", data, at)[0] - 1)
    with open(os.path.join(FIXTURES, "video-stss-zero-based.mp4"), "wb") as f:
        f.write(data)


def write_edit_duration_zero(source, target):
    write_with_edits(source, target, lambda handler: [(0, 1024 if handler == b"soun" else 0)])


def write_with_edits(source, target, edits_for):
    """`source` with each trak's edit list replaced by (or given) `edits_for(handler)`:
    (segment_duration, media_time) pairs, a version-0 elst. Only moov grows, so the file
    stays valid where no chunk offset points past moov (moov last, or offsets counted from
    each moof)."""
    data = bytes(open(source, "rb").read())
    moov = mp4box.top(mp4box.read_tree(data), b"moov")
    out = bytearray(data[:moov.offset])
    body = bytearray()
    for child in moov.children:
        chunk = data[child.offset:child.end]
        if child.kind == b"trak":
            entries = edits_for(mp4box.handler_type(data, child))
            elst = struct.pack(">I4sB3xI", 16 + 12 * len(entries), b"elst", 0, len(entries))
            elst += b"".join(struct.pack(">IiHH", duration, media_time, 1, 0) for duration, media_time in entries)
            edts = struct.pack(">I4s", 8 + len(elst), b"edts") + elst
            tkhd = child.child(b"tkhd")
            kept = data[tkhd.offset:tkhd.end] + edts + b"".join(
                data[c.offset:c.end] for c in child.children if c.kind not in (b"edts", b"tkhd"))
            chunk = struct.pack(">I4s", 8 + len(kept), b"trak") + kept
        body += chunk
    out += struct.pack(">I4s", 8 + len(body), b"moov") + body + data[moov.end:]
    with open(target, "wb") as f:
        f.write(out)


def write_expectations():
    os.makedirs(EXPECTED, exist_ok=True)
    written = 0
    for name, kind in fixture_names():
        path = os.path.join(FIXTURES, name)
        theirs = ffprobe(path)
        if not theirs or kind == "exit":
            continue
        if any(t["codec"].startswith("pcm_") for t in theirs.values()):
            continue  # FFmpeg's packets are not the file's samples.
        if name.startswith("dref-external"):
            continue
        fragmented = is_fragmented(path)
        tracks = []
        for track_id, track in sorted(theirs.items()):
            packets = track["packets"]
            if not packets and chapter_track(path, track_id):
                continue  # FFmpeg reads it as chapters, not as a stream.
            if partial_last(path, track_id, packets):
                packets = packets[:-1]  # FFmpeg's partial bytes of a sample cut by the end of the file.
            if fragmented and packets:
                # FFmpeg's durations in fragments are not always the file's (see the top):
                # store ffprobe's next dts minus this one, and mp4box.py's for the last.
                for this, following in zip(packets, packets[1:]):
                    this["duration"] = following["dts"] - this["dts"]
                table = table_of(path, track_id)
                if table:
                    packets[-1]["duration"] = table[-1]["duration"]
            entry = {"track_id": track_id, "count": len(packets), "crc32": crc(packets)}
            if name in FULL:
                entry["packets"] = [[p[f] if f != "sync" else int(p[f]) for f in FIELDS] for p in packets]
            tracks.append(entry)
        out = os.path.join(EXPECTED, os.path.basename(name) + ".json")
        with open(out, "w") as f:
            json.dump({"file": name, "fields": list(FIELDS), "source": "ffprobe -ignore_editlist 1 -show_packets",
                       "tracks": tracks}, f, separators=(",", ":"))
            f.write("\n")
        written += 1
    print(f"wrote {written} files to {os.path.relpath(EXPECTED, ROOT)}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", help="the extract-audio to test (default: $EXTRACT_AUDIO, else a release build)")
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--make-fixtures", action="store_true")
    parser.add_argument("fixtures", nargs="*")
    args = parser.parse_args()
    if args.make_fixtures:
        make_fixtures()
        return 0
    if args.write:
        write_expectations()
        return 0
    binary = args.binary or extract_audio(ROOT)
    if binary is None:
        return 1
    names = fixture_names()
    if args.fixtures:
        names = [(n, k) for n, k in names if n in args.fixtures]
    passed = failed = 0
    for name, kind in names:
        path = os.path.join(FIXTURES, name)
        try:
            ok, message, notes = compare(name, kind, path, binary)
        except Exception as error:  # A crash of the script is a failure, not a pass.
            ok, message, notes = False, f"script error: {error!r}", []
        print(f"{'PASS' if ok else 'FAIL'}  {name}: {message}")
        for note in notes:
            print(f"      known difference: {note}")
        passed += ok
        failed += not ok
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
