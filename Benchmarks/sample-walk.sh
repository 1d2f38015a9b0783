#!/usr/bin/env bash
# The reader's sample walk on the 10-hour benchmark file: `extract-audio probe --packets
# --json IN > /dev/null` visits every sample of every track (1.7 M AAC packets, 360 k
# video frames) through MovieReader/SampleIndex and formats a JSON line for each. Prints
# the wall time, samples per second, peak RSS (Benchmarks/bench.py measure: VmHWM at exit)
# and, to compare with it, the size of the compressed sample tables in the file's moov.
# Not part of run.sh: generating the input takes minutes the first time, and the walk
# itself more than a few seconds.
#
# Usage: Benchmarks/sample-walk.sh [--dir DIR] [--bin PATH] [--track-id ID]
#   --dir DIR      run.sh's folder of inputs (default ${TMPDIR:-/tmp}/extract-audio-bench);
#                  10h-audio.mp4 is generated there by run.sh when missing
#   --bin PATH     the extract-audio to measure (default: .build/release/extract-audio,
#                  built first)
#   --track-id ID  walk one track only
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
WORK="${TMPDIR:-/tmp}/extract-audio-bench"
BIN="" TRACK=()
while [[ $# -gt 0 ]]; do
    case $1 in
        --dir) WORK=$2; shift ;;
        --bin) BIN=$2; shift ;;
        --track-id) TRACK=(--track-id "$2"); shift ;;
        -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "sample-walk.sh: unknown option $1" >&2; exit 64 ;;
    esac
    shift
done

if [[ -z $BIN ]]; then
    (cd "$ROOT" && swift build -c release --product extract-audio >/dev/null)
    BIN=$ROOT/.build/release/extract-audio
fi
INPUT=$WORK/inputs/10h-audio.mp4
if [[ ! -f $INPUT ]]; then
    bash "$HERE/run.sh" --dir "$WORK" --generate-only --only 10h-audio --no-build --bin "$BIN"
fi

result=$(mktemp "${TMPDIR:-/tmp}/sample-walk.XXXXXX")
trap 'rm -f "$result"' EXIT
python3 "$HERE/bench.py" measure --json "$result" -- "$BIN" probe --packets --json "${TRACK[@]}" "$INPUT"
python3 - "$result" "$INPUT" "$BIN" "${TRACK[@]}" <<'PY'
import json, os, struct, subprocess, sys

result, path, binary = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
track = int(sys.argv[5]) if len(sys.argv) > 5 else None
if result["exit"] != 0:
    sys.exit(f"sample-walk: probe --packets exited {result['exit']}")

def boxes(f, start, end):
    """(type, offset, size, header) of the boxes in [start, end) of file f."""
    position = start
    while position + 8 <= end:
        f.seek(position)
        size, kind = struct.unpack(">I4s", f.read(8))
        header = 8
        if size == 1:
            size, header = struct.unpack(">Q", f.read(8))[0], 16
        elif size == 0:
            size = end - position
        yield kind, position, size, header
        position += size

# The compressed tables: every stts/ctts/stsc/stsz/stz2/stco/co64/stss box, per track.
tables = {}
samples = {}
with open(path, "rb") as f:
    length = os.path.getsize(path)
    moov = next(b for b in boxes(f, 0, length) if b[0] == b"moov")
    for trak in (b for b in boxes(f, moov[1] + moov[3], moov[1] + moov[2]) if b[0] == b"trak"):
        def walk(box):
            for child in boxes(f, box[1] + box[3], box[1] + box[2]):
                yield child
                if child[0] in (b"mdia", b"minf", b"stbl"):
                    yield from walk(child)
        found = list(walk(trak))
        tkhd = next(b for b in found if b[0] == b"tkhd")
        f.seek(tkhd[1] + tkhd[3])
        version = f.read(1)[0]
        f.seek(tkhd[1] + tkhd[3] + 4 + (16 if version == 1 else 8))
        tid = struct.unpack(">I", f.read(4))[0]
        tables[tid] = sum(b[2] for b in found if b[0] in (b"stts", b"ctts", b"stsc", b"stsz", b"stz2", b"stco",
                                                           b"co64", b"stss"))
        stsz = next(b for b in found if b[0] in (b"stsz", b"stz2"))
        f.seek(stsz[1] + stsz[3] + 8)
        samples[tid] = struct.unpack(">I", f.read(4))[0]
    moov_size = moov[2]
walked = {t: n for t, n in samples.items() if track is None or t == track}
count = sum(walked.values())
rss = result["peak_rss_kib"] or result["ru_maxrss_kib"]
table_bytes = sum(tables[t] for t in walked)
print(f"input: {path} ({os.path.getsize(path) / 1e6:.0f} MB, moov {moov_size / 1e6:.1f} MB)")
print(f"walked: {count:,} samples ({', '.join(f'track {t}: {n:,}' for t, n in sorted(walked.items()))})")
print(f"time: {result['wall_s']:.2f} s wall ({result['user_s']:.2f} s user), "
      f"{count / result['wall_s'] / 1e6:.2f} M samples/s")
print(f"peak RSS: {rss / 1024:.1f} MiB; compressed tables of the walked tracks: {table_bytes / 2**20:.1f} MiB "
      f"({rss * 1024 / count:.1f} bytes per sample, all included)")
PY
