#!/usr/bin/env bash
# Benchmark suite: extract-audio versus `ffmpeg -map 0:a:0 -vn -c:a copy -f ipod`.
# Generates its inputs with ffmpeg (kept between runs in a temporary folder), times both
# tools with hyperfine (warm page cache, and cold where drop_caches is writable), measures
# peak RSS and bytes read per process (Benchmarks/bench.py measure), checks that both
# outputs carry identical audio packets, and writes Benchmarks/RESULTS.md.
# See Benchmarks/README.md for what is measured and how.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)

usage() {
    cat <<'USAGE'
Usage: Benchmarks/run.sh [OPTIONS]

  --quick         only the 10 s clip and the 1-hour 360p file (for iteration)
  --only A,B      only these inputs (names as in README.md, e.g. 10h-audio,1h-360p-frag)
  --dir DIR       folder for generated inputs and outputs
                  (default: ${TMPDIR:-/tmp}/extract-audio-bench, reused between runs)
  --keep          keep the generated inputs afterwards (the default)
  --clean         delete the folder (inputs and outputs) when done; with --quick or
                  --only, pass --results FILE to keep the report
  --generate-only make the inputs, then stop
  --regenerate    throw away existing inputs and make them again
  --no-cold       skip the cold-cache runs even where drop_caches is writable
  --no-build      do not run `swift build -c release` first
  --bin PATH      the extract-audio binary to measure (default: .build/release/extract-audio)
  --results FILE  where to write the report (default: Benchmarks/RESULTS.md for a full
                  run, DIR/RESULTS-quick.md with --quick)
  --jobs-mode     instead of the default run: batch extraction with --jobs against
                  xargs -P ffmpeg over 100, 1,000 and 5,000 generated 10 s clips, warm and
                  cold (Benchmarks/jobs.sh; its table goes to --results when given)
  -h, --help      this text
USAGE
}

ONLY="" QUICK=0 CLEAN=0 GEN_ONLY=0 REGEN=0 COLD=1 BUILD=1 BIN="" RESULTS="" JOBS_MODE=0
WORK="${TMPDIR:-/tmp}/extract-audio-bench"
while [[ $# -gt 0 ]]; do
    case $1 in
        --quick) QUICK=1 ;;
        --only) ONLY=$2; shift ;;
        --dir) WORK=$2; shift ;;
        --keep) CLEAN=0 ;;
        --clean) CLEAN=1 ;;
        --generate-only) GEN_ONLY=1 ;;
        --regenerate) REGEN=1 ;;
        --no-cold) COLD=0 ;;
        --no-build) BUILD=0 ;;
        --bin) BIN=$2; shift ;;
        --results) RESULTS=$2; shift ;;
        --jobs-mode) JOBS_MODE=1 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "run.sh: unknown option $1" >&2; usage >&2; exit 64 ;;
    esac
    shift
done

log() { printf '== %s\n' "$*" >&2; }
die() { printf 'run.sh: %s\n' "$*" >&2; exit 1; }

# ---------------------------------------------------------------- tools
for tool in ffmpeg ffprobe python3; do
    command -v "$tool" >/dev/null || die "$tool is required (apt-get install -y ffmpeg python3)"
done
if ! command -v hyperfine >/dev/null; then
    log "installing hyperfine (apt-get install -y hyperfine)"
    if [[ $(id -u) -eq 0 ]]; then
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq hyperfine >/dev/null 2>&1 ||
            { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq hyperfine >/dev/null; }
    else
        sudo apt-get install -y -qq hyperfine >/dev/null
    fi
    command -v hyperfine >/dev/null || die "could not install hyperfine"
fi

if [[ -z $BIN ]]; then
    # The Swift runtime linked statically, as a tool is shipped: it saves ~3 ms of dynamic
    # loading per run. Built in a scratch folder of its own so the debug/test build stays.
    if [[ $BUILD -eq 1 ]]; then
        log "swift build -c release --static-swift-stdlib"
        (cd "$ROOT" && swift build -c release --static-swift-stdlib --product extract-audio --scratch-path .build/bench -q) ||
            die "swift build -c release --static-swift-stdlib failed"
    fi
    BIN=$ROOT/.build/bench/release/extract-audio
fi
[[ -x $BIN ]] || die "no executable at $BIN (build with: swift build -c release --static-swift-stdlib --scratch-path .build/bench)"
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")

if [[ $JOBS_MODE -eq 1 ]]; then
    exec bash "$HERE/jobs.sh" "$BIN" ${RESULTS:+--results "$RESULTS"}
fi

mkdir -p "$WORK/inputs" "$WORK/out" "$WORK/json"
if [[ $CLEAN -eq 1 ]]; then trap 'rm -rf "$WORK"' EXIT; fi
# measure a private copy: a rebuild in the repository during the run must not swap the
# binary under the benchmark (the runtime libraries are found through the absolute RUNPATH)
cp "$BIN" "$WORK/extract-audio"
BIN_SOURCE=$BIN
BIN=$WORK/extract-audio

# ---------------------------------------------------------------- inputs
# Each input is made by stream-copying a short encoded clip in a loop (-stream_loop N -c copy),
# so generation costs a few seconds of encoding plus the time to write the file. A stamp
# file next to each input records its recipe and size; an input is reused only when both
# still match.
IN=$WORK/inputs
GEN_TIME=0

# a short clip: testsrc2 with temporal noise (so that x264 spends its bitrate) + a sine,
# H.264 (2 s GOP, 25 fps) + AAC-LC 128 kb/s 48 kHz stereo
encode_clip() { # OUT SECONDS WxH FPS VIDEO_KBPS [extra ffmpeg output args]
    local out=$1 secs=$2 size=$3 fps=$4 kbps=$5; shift 5
    ffmpeg -nostdin -v error -y \
        -f lavfi -i "testsrc2=size=$size:rate=$fps,noise=alls=12:allf=t" \
        -f lavfi -i "sine=frequency=440:beep_factor=4:sample_rate=48000,aformat=channel_layouts=stereo" \
        -t "$secs" -map 0:v -map 1:a \
        -c:v libx264 -preset ultrafast -pix_fmt yuv420p -g $((fps * 2)) -keyint_min $((fps * 2)) -sc_threshold 0 \
        -b:v "${kbps}k" -maxrate "${kbps}k" -bufsize "${kbps}k" \
        -c:a aac -b:a 128k -ar 48000 -ac 2 "$@" "$out"
}
loop_copy() { # SRC LOOPS OUT [extra ffmpeg output args]: SRC played LOOPS times, stream copy
    local src=$1 loops=$2 out=$3; shift 3
    ffmpeg -nostdin -v error -y -stream_loop $((loops - 1)) -i "$src" -map 0 -c copy "$@" "$out"
}

# name | recipe (the commands; also the stamp) -- the recipes are documented in README.md
declare -A RECIPE
RECIPE[clip-10s-720p]='encode_clip "$OUT" 10 1280x720 25 3000 -movflags +faststart'
RECIPE[base-360p]='encode_clip "$OUT" 48 640x360 25 540'
RECIPE[base-720p]='encode_clip "$OUT" 48 1280x720 25 4300'
RECIPE[base-tiny]='encode_clip "$OUT" 48 160x90 10 24'
RECIPE[1h-360p]='loop_copy "$IN/base-360p.mp4" 75 "$OUT"'
RECIPE[1h-720p]='loop_copy "$IN/base-720p.mp4" 75 "$OUT"'
RECIPE[10h-audio]='loop_copy "$IN/base-tiny.mp4" 750 "$OUT"'
RECIPE[1h-360p-frag]='ffmpeg -nostdin -v error -y -i "$IN/1h-360p.mp4" -map 0 -c copy -movflags frag_keyframe+empty_moov "$OUT"'
RECIPE[2.5h-720p-co64]='loop_copy "$IN/base-720p.mp4" 188 "$OUT"'
declare -A NEEDS=([1h-360p]=base-360p [1h-720p]=base-720p [10h-audio]=base-tiny
                  [1h-360p-frag]=1h-360p [2.5h-720p-co64]=base-720p)
# rough sizes in MB, for the disk-space check
declare -A APPROX_MB=([clip-10s-720p]=4 [base-360p]=4 [base-720p]=27 [base-tiny]=1 [1h-360p]=300
                      [1h-720p]=2000 [10h-audio]=700 [1h-360p-frag]=300 [2.5h-720p-co64]=5100)

# the stamp: the recipe, a digest of the functions it calls and of ffmpeg's version, the size
recipe_id() { printf '%s | %s' "${RECIPE[$1]}" "$( { declare -f encode_clip loop_copy; ffmpeg -version | head -n 1; } | md5sum | cut -c1-12)"; }
have_input() { # NAME: the input exists and matches its stamp
    local f=$IN/$1.mp4 stamp=$IN/$1.stamp
    [[ -f $f && -f $stamp ]] || return 1
    [[ "$(sed -n 1p "$stamp")" == "$(recipe_id "$1")" ]] || return 1
    [[ "$(sed -n 2p "$stamp")" == "$(stat -c %s "$f")" ]] || return 1
}
avail_mb() { df -Pm "$WORK" | awk 'NR == 2 { print $4 }'; }

make_input() { # NAME
    local name=$1
    if [[ $REGEN -eq 1 && -z ${REGENERATED[$name]:-} ]]; then rm -f "$IN/$name.mp4" "$IN/$name.stamp"; fi
    REGENERATED[$name]=1
    have_input "$name" && return 0
    if [[ -n ${NEEDS[$name]:-} ]]; then make_input "${NEEDS[$name]}"; fi
    local need=${APPROX_MB[$name]}
    if (( $(avail_mb) < need + 2048 )); then
        log "skipping $name: needs ~${need} MB, $(avail_mb) MB free in $WORK"
        return 1
    fi
    log "generating $name.mp4"
    local OUT=$IN/$name.mp4.part.mp4 t0=$SECONDS
    rm -f "$IN/$name.stamp"
    eval "${RECIPE[$name]}"
    mv "$OUT" "$IN/$name.mp4"
    printf '%s\n%s\n' "$(recipe_id "$name")" "$(stat -c %s "$IN/$name.mp4")" >"$IN/$name.stamp"
    GEN_TIME=$((GEN_TIME + SECONDS - t0))
    log "  $name.mp4: $(stat -c %s "$IN/$name.mp4") bytes in $((SECONDS - t0)) s"
}
declare -A REGENERATED

if [[ -n $ONLY ]]; then
    IFS=, read -r -a NAMES <<<"$ONLY"
    for name in "${NAMES[@]}"; do [[ -n ${RECIPE[$name]:-} ]] || die "unknown input $name"; done
    QUICK=2   # a partial run: the report goes to DIR/RESULTS-quick.md unless --results says otherwise
elif [[ $QUICK -eq 1 ]]; then
    NAMES=(clip-10s-720p 1h-360p)
else
    NAMES=(clip-10s-720p 1h-360p 1h-720p 10h-audio 1h-360p-frag 2.5h-720p-co64)
fi
INPUTS=()
for name in "${NAMES[@]}"; do
    if make_input "$name"; then INPUTS+=("$name"); fi
done
log "inputs ready in $IN (generation took ${GEN_TIME} s this time)"
[[ $GEN_ONLY -eq 1 ]] && exit 0

# ---------------------------------------------------------------- measurements
OUTD=$WORK/out JS=$WORK/json
BENCH=(python3 "$HERE/bench.py")
rm -f "$JS"/*.json
"${BENCH[@]}" meta --bin "$BIN" --bin-source "$BIN_SOURCE" --root "$ROOT" --json "$JS/meta.json"

CAN_COLD=0
if [[ $COLD -eq 1 ]] && { sync; echo 3 >/proc/sys/vm/drop_caches; } 2>/dev/null; then CAN_COLD=1; fi
[[ $COLD -eq 1 && $CAN_COLD -eq 0 ]] && log "cannot write /proc/sys/vm/drop_caches: warm-cache runs only"

# start-up cost of each program (dynamic loader, libraries), measured on --version / -version:
# subtracted from rchar to get the bytes read from the input, shown next to the cold read_bytes
for c in warm cold; do
    [[ $c == cold && $CAN_COLD -eq 0 ]] && continue
    drop=(); [[ $c == cold ]] && drop=(--drop-caches)
    "${BENCH[@]}" measure "${drop[@]}" --json "$JS/baseline-ours-$c.json" -- "$BIN" --version 2>/dev/null
    "${BENCH[@]}" measure "${drop[@]}" --json "$JS/baseline-ffmpeg-$c.json" -- ffmpeg -version 2>/dev/null
done

# The floor (issue 15): ../shared/bench/ideal_extract.c, the least work an extractor can do
# (parse the tables, copy the audio ranges, -s: fsync the output), built here and run beside
# ours in the warm runs, with its pread and mmap read paths. Where it is absent the report's
# floor columns say so.
FLOOR="" FLOOR_SRC=$ROOT/../shared/bench/ideal_extract.c
if [[ -f $FLOOR_SRC ]] && command -v cc >/dev/null && cc -O2 -o "$WORK/ideal_extract" "$FLOOR_SRC" 2>/dev/null; then
    FLOOR=$WORK/ideal_extract
else
    log "the floor ($FLOOR_SRC) is absent or does not build: no floor columns"
fi

# hyperfine runs per input: warm runs, warm-up runs, cold runs (each run is a few seconds at most)
declare -A RUNS=([clip-10s-720p]="30 5 5" [1h-360p]="10 2 5" [1h-720p]="10 2 3" [10h-audio]="5 1 3"
                 [1h-360p-frag]="10 2 3" [2.5h-720p-co64]="5 1 3")
q() { printf '%q' "$1"; }
T0=$SECONDS
for name in "${INPUTS[@]}"; do
    in=$IN/$name.mp4 ours=$OUTD/$name.ours.m4a ref=$OUTD/$name.ffmpeg.m4a
    read -r warm_runs warmup cold_runs <<<"${RUNS[$name]}"
    OURS_CMD="$(q "$BIN") $(q "$in") $(q "$ours")"
    FF_CMD="ffmpeg -nostdin -v error -y -i $(q "$in") -map 0:a:0 -vn -c:a copy -f ipod $(q "$ref")"
    log "$name ($(stat -c %s "$in") bytes)"
    "${BENCH[@]}" info "$in" --json "$JS/$name.info.json"
    cat "$in" >/dev/null   # into the page cache

    # one plain run of each: exit status, and the outputs for the packet comparison
    rm -f "$ours" "$ref"
    ours_exit=0
    ours_err=$(eval "$OURS_CMD" 2>&1 >/dev/null) || ours_exit=$?
    eval "$FF_CMD" || die "ffmpeg failed on $in"
    printf '{"ours_exit": %d}\n' "$ours_exit" >"$JS/$name.status.json"
    if [[ $ours_exit -eq 0 ]]; then
        if "${BENCH[@]}" compare "$ours" "$ref" --json "$JS/$name.verify.json"; then
            log "  same audio packets as ffmpeg"
        else
            log "  PACKETS DIFFER from ffmpeg's (see $JS/$name.verify.json)"
        fi
        NAMES_HF=(-n ours "$OURS_CMD" -n ffmpeg "$FF_CMD")
    else
        if [[ $ours_exit -eq 69 ]]; then
            log "  extract-audio: unsupported (exit 69): $ours_err"
        else
            log "  extract-audio FAILED (exit $ours_exit): $ours_err"
        fi
        "${BENCH[@]}" compare - "$ref" --json "$JS/$name.verify.json"
        NAMES_HF=(-n ffmpeg "$FF_CMD")
    fi

    # peak RSS and bytes read: one run each, warm then (if possible) cold
    for tool in ours ffmpeg; do
        [[ $tool == ours && $ours_exit -ne 0 ]] && continue
        if [[ $tool == ours ]]; then cmd=("$BIN" "$in" "$ours") out=$ours; else
            cmd=(ffmpeg -nostdin -v error -y -i "$in" -map 0:a:0 -vn -c:a copy -f ipod "$ref") out=$ref; fi
        "${BENCH[@]}" measure --json "$JS/$name.measure-$tool-warm.json" --rm "$out" -- "${cmd[@]}" 2>/dev/null
        if [[ $CAN_COLD -eq 1 ]]; then
            "${BENCH[@]}" measure --drop-caches --json "$JS/$name.measure-$tool-cold.json" --rm "$out" -- "${cmd[@]}" 2>/dev/null
        fi
    done

    # wall time, warm page cache; the floor beside ours (fsync included, as ours does)
    FLOOR_HF=()
    if [[ -n $FLOOR ]]; then
        floor_out=$OUTD/$name.floor.bin
        FLOOR_HF=(-n floor-pread "$(q "$FLOOR") -s -m pread $(q "$in") $(q "$floor_out")"
                  -n floor-mmap "$(q "$FLOOR") -s -m mmap $(q "$in") $(q "$floor_out")")
    fi
    cat "$in" >/dev/null
    hyperfine -N --style basic --warmup "$warmup" --runs "$warm_runs" \
        --prepare "sh -c $(q "rm -f $(q "$ours") $(q "$ref") $(q "$OUTD/$name.floor.bin"); sync")" \
        --export-json "$JS/$name.warm.json" "${NAMES_HF[@]}" "${FLOOR_HF[@]}" >"$JS/$name.warm.txt" 2>&1 ||
        log "  hyperfine (warm) failed: $(tail -n 3 "$JS/$name.warm.txt")"
    grep -E '^(Benchmark|  Time|  Range)' "$JS/$name.warm.txt" | sed 's/^/   warm /' >&2 || true
    # wall time, cold page cache
    if [[ $CAN_COLD -eq 1 ]]; then
        hyperfine -N --style basic --runs "$cold_runs" \
            --prepare "sh -c $(q "rm -f $(q "$ours") $(q "$ref"); sync; echo 3 > /proc/sys/vm/drop_caches")" \
            --export-json "$JS/$name.cold.json" "${NAMES_HF[@]}" >"$JS/$name.cold.txt" 2>&1 ||
            log "  hyperfine (cold) failed: $(tail -n 3 "$JS/$name.cold.txt")"
        grep -E '^(Benchmark|  Time|  Range)' "$JS/$name.cold.txt" | sed 's/^/   cold /' >&2 || true
    fi
    rm -f "$ours" "$ref" "$OUTD/$name.floor.bin"
done

if [[ -z $RESULTS ]]; then
    if [[ $QUICK -ne 0 ]]; then RESULTS=$WORK/RESULTS-quick.md; else RESULTS=$HERE/RESULTS.md; fi
fi
MODE=full; [[ $QUICK -eq 1 ]] && MODE=quick; [[ $QUICK -eq 2 ]] && MODE=partial
"${BENCH[@]}" report --work "$WORK" --out "$RESULTS" --mode "$MODE" \
    --inputs "${INPUTS[@]}"
log "measurements took $((SECONDS - T0)) s; report written to $RESULTS"
