#!/usr/bin/env bash
# Batch benchmark (issue 15): `extract-audio --jobs N IN... --output-dir OUT` against
# `xargs -P N ffmpeg ... -c:a copy` over the same files, for 100, 1,000 and 5,000 copies of a
# generated 10 s clip, warm and cold (drop_caches, where writable). Prints files/s per run and
# a Markdown table; the inputs are removed afterwards. Run through `Benchmarks/run.sh --jobs-mode`.
#
#   Benchmarks/jobs.sh BIN [--counts 100,1000,5000] [--jobs N] [--dir DIR] [--results FILE]
set -euo pipefail

BIN=${1:?usage: jobs.sh BIN [--counts A,B,C] [--jobs N] [--dir DIR] [--results FILE]}
shift
COUNTS=100,1000,5000 JOBS=$(nproc) WORK="${TMPDIR:-/tmp}/extract-audio-jobs" RESULTS=""
while [[ $# -gt 0 ]]; do
    case $1 in
        --counts) COUNTS=$2; shift ;;
        --jobs) JOBS=$2; shift ;;
        --dir) WORK=$2; shift ;;
        --results) RESULTS=$2; shift ;;
        *) echo "jobs.sh: unknown option $1" >&2; exit 64 ;;
    esac
    shift
done
log() { printf '== %s\n' "$*" >&2; }
mkdir -p "$WORK"
trap 'rm -rf "$WORK"' EXIT

# One 10 s clip (640x360 H.264 + AAC 128 kb/s), copied: every file is its own inode, so the
# cold runs really read each one from disk.
clip=$WORK/clip.mp4
ffmpeg -nostdin -v error -y -f lavfi -i "testsrc2=size=640x360:rate=25,noise=alls=12:allf=t" \
    -f lavfi -i "sine=frequency=440:sample_rate=48000,aformat=channel_layouts=stereo" -t 10 \
    -map 0:v -map 1:a -c:v libx264 -preset ultrafast -pix_fmt yuv420p -g 50 -b:v 540k \
    -c:a aac -b:a 128k "$clip"
log "clip: $(stat -c %s "$clip") bytes; --jobs $JOBS, xargs -P $JOBS"

can_cold=0
if { sync; echo 3 >/proc/sys/vm/drop_caches; } 2>/dev/null; then can_cold=1; fi

now() { date +%s.%N; }
calc() { awk "BEGIN { printf \"%.6f\", $1 }"; }
rows=()
IFS=, read -r -a counts <<<"$COUNTS"
for count in "${counts[@]}"; do
    in=$WORK/in-$count
    rm -rf "$in"
    mkdir -p "$in"
    for ((i = 0; i < count; i++)); do cp "$clip" "$in/clip$i.mp4"; done
    inputs=("$in"/*.mp4)
    for cache in warm cold; do
        [[ $cache == cold && $can_cold -eq 0 ]] && continue
        for tool in ours ffmpeg; do
            out=$WORK/out-$count-$tool
            rm -rf "$out"
            mkdir -p "$out"
            if [[ $cache == warm ]]; then cat "${inputs[@]}" >/dev/null; else sync; echo 3 >/proc/sys/vm/drop_caches; fi
            start=$(now)
            if [[ $tool == ours ]]; then
                "$BIN" --quiet --jobs "$JOBS" "${inputs[@]}" --output-dir "$out"
            else
                printf '%s\0' "${inputs[@]}" | xargs -0 -P "$JOBS" -I{} sh -c \
                    'ffmpeg -nostdin -v error -y -i "$1" -map 0:a:0 -vn -c:a copy -f ipod "$2/$(basename "$1" .mp4).m4a"' \
                    _ {} "$out"
            fi
            seconds=$(calc "$(now) - $start")
            made=$(find "$out" -name '*.m4a' | wc -l)
            [[ $made -eq $count ]] || { echo "jobs.sh: $tool wrote $made of $count files" >&2; exit 1; }
            rate=$(calc "$count / $seconds")
            printf -v line '%s\t%s\t%s\t%.3f\t%.1f' "$count" "$cache" "$tool" "$seconds" "$rate"
            rows+=("$line")
            log "$count files, $cache, $tool: $(printf '%.3f' "$seconds") s, $(printf '%.1f' "$rate") files/s"
            rm -rf "$out"
        done
    done
    rm -rf "$in"
done

{
    echo "## Batch: \`--jobs $JOBS\` against \`xargs -P $JOBS ffmpeg\` ($(date -u '+%Y-%m-%d %H:%M UTC'))"
    echo
    echo "10 s 640x360 clips of $(stat -c %s "$clip") bytes, copied N times; one run each."
    echo
    echo "| files | cache | ours s | ours files/s | ffmpeg s | ffmpeg files/s | ×ffmpeg |"
    echo "|---:|---|---:|---:|---:|---:|---:|"
    for ((i = 0; i < ${#rows[@]}; i += 2)); do
        IFS=$'\t' read -r n cache _ s1 r1 <<<"${rows[i]}"
        IFS=$'\t' read -r _ _ _ s2 r2 <<<"${rows[i + 1]}"
        printf '| %s | %s | %s | %s | %s | %s | %.1f× |\n' "$n" "$cache" "$s1" "$r1" "$s2" "$r2" "$(calc "$s2 / $s1")"
    done
} | tee "${RESULTS:-/dev/null}"
