#!/usr/bin/env bash
# Builds the libFuzzer targets (swiftc -sanitize=fuzzer,address, library sources compiled
# directly: no Package.swift involved) and runs them.
#
#   Fuzz/run.sh TARGET SECONDS [libFuzzer flags...]   fuzz one target (box-parser, extraction, mux, structured, tags,
#                                                     recipes)
#   Fuzz/run.sh --ci                                  every target for $FUZZ_CI_SECONDS (60) s each,
#                                                     $FUZZ_CI_JOBS (2) at a time, seed
#                                                     $FUZZ_CI_SEED (fixed); exits non-zero on
#                                                     any crash, hang or OOM
#   Fuzz/run.sh --build                               build only
#   Fuzz/run.sh --merge TARGET                        minimise the working corpus into Fuzz/corpus/TARGET
#
# Build products and the working corpus go to $FUZZ_BUILD_DIR (default .build/fuzz, which is
# gitignored). Findings land in $FUZZ_BUILD_DIR/artifacts/TARGET/; see Fuzz/README.md for
# turning one into a regression under Fixtures/fuzz/.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
build="${FUZZ_BUILD_DIR:-$repo/.build/fuzz}"
targets=(box-parser extraction mux structured tags recipes)
# The limits that define a finding (> 1 s for one input, > 256 MiB resident or in one malloc)
# and a dictionary of box types.
options=(-rss_limit_mb=256 -malloc_limit_mb=256 -timeout=1 -max_len=65536 -dict="$repo/Fuzz/mp4.dict")
# The structure-aware target takes inputs up to 1 MiB (tables that claim more samples than
# 64 KB can hold). Each input runs extraction (twice when truncated), probe and a re-parse
# of the output; the largest legitimate ones take 0.1-0.3 s with ASan on an idle core, so
# 5 s leaves room for a loaded machine (2 s gave false timeouts next to other jobs) and
# still catches the hangs of issue 11 (8 s and more). One malloc over 64 MiB is a finding:
# issue 11 bounds peak RSS at 64 MiB for any input under 100 MB (RSS itself cannot be held
# that low under ASan and libFuzzer, so it keeps 256).
structured_options=(-rss_limit_mb=256 -malloc_limit_mb=64 -timeout=5 -max_len=1048576 -dict="$repo/Fuzz/mp4.dict")
# mux reads a video and its clips, plans the seams and writes the whole movie: an input does
# several times an extraction's work, and legitimate ones took up to 0.6 s under ASan on a
# loaded machine. 5 s still catches issue 11's hangs (20 s and more).
mux_options=(-rss_limit_mb=256 -malloc_limit_mb=256 -timeout=5 -max_len=65536 -dict="$repo/Fuzz/mp4.dict")
# recipes runs three remuxes, a cut, --split-chapters (up to 8 pieces) and two tag listings
# per input, each output read back: like mux, several extractions' work.
target_options() {
    case $1 in
    structured) echo "${structured_options[@]}" ;;
    mux | recipes) echo "${mux_options[@]}" ;;
    *) echo "${options[@]}" ;;
    esac
}

# Swift's own backtracer would catch the trap first and hide the stack from libFuzzer, which
# prints it symbolized. ASan's quarantine of freed memory (256 MiB by default) would count
# against the RSS limit, so it is kept small.
export SWIFT_BACKTRACE="${SWIFT_BACKTRACE:-enable=no}"
export ASAN_OPTIONS="${ASAN_OPTIONS:-quarantine_size_mb=16}"
symbolizer="$(dirname "$(command -v swiftc)")/llvm-symbolizer"
[[ -x $symbolizer ]] && export ASAN_SYMBOLIZER_PATH="${ASAN_SYMBOLIZER_PATH:-$symbolizer}"

# -package-name: the library uses `package` access (hexDigits), as SwiftPM builds it.
swift_flags=(-swift-version 6 -parse-as-library -O -g -sanitize=fuzzer,address -use-ld=lld -package-name extract_audio)

sources() { find "$repo/$1" -name '*.swift' | sort; }

# Rebuilds when any input is newer than the binary.
stale() {
    local binary=$1
    shift
    [[ ! -x $binary ]] && return 0
    [[ -n $(find "$@" "$repo/Fuzz/run.sh" -newer "$binary" -print -quit) ]]
}

build_all() {
    mkdir -p "$build/modules"
    local lib="$repo/Sources"
    if stale "$build/fuzz-extraction" "$lib" "$repo/Fuzz/Extraction" || stale "$build/fuzz-box-parser" "$lib" "$repo/Fuzz/BoxParser" ||
        stale "$build/fuzz-mux" "$lib" "$repo/Fuzz/Mux" || stale "$build/fuzz-tags" "$lib" "$repo/Fuzz/Tags" ||
        stale "$build/fuzz-recipes" "$lib" "$repo/Fuzz/Recipes"; then
        echo "== building fuzz targets in $build"
        # CSystem: the C shim, instrumented like the rest, with a module map for `import CSystem`.
        clang -c -O1 -g -fsanitize=address,fuzzer-no-link -I "$lib/CSystem/include" \
            "$lib/CSystem/CSystem.c" -o "$build/CSystem.o"
        printf 'module CSystem {\n    header "%s"\n    export *\n}\n' "$lib/CSystem/include/CSystem.h" \
            >"$build/modules/module.modulemap"
        local module
        for module in ISOBMFF AudioRemux; do
            # shellcheck disable=SC2046
            swiftc "${swift_flags[@]}" -wmo -module-name "$module" -I "$build/modules" -I "$build" \
                -emit-module -emit-module-path "$build/$module.swiftmodule" \
                -c $(sources "Sources/$module") -o "$build/$module.o"
        done
        # shellcheck disable=SC2046
        swiftc "${swift_flags[@]}" -I "$build" $(sources Fuzz/BoxParser) "$build/ISOBMFF.o" \
            -o "$build/fuzz-box-parser"
        # shellcheck disable=SC2046
        swiftc "${swift_flags[@]}" -I "$build" -I "$build/modules" $(sources Fuzz/Extraction) \
            "$build/AudioRemux.o" "$build/ISOBMFF.o" "$build/CSystem.o" -o "$build/fuzz-extraction"
        # shellcheck disable=SC2046
        swiftc "${swift_flags[@]}" -I "$build" -I "$build/modules" $(sources Fuzz/Mux) \
            "$build/AudioRemux.o" "$build/ISOBMFF.o" "$build/CSystem.o" -o "$build/fuzz-mux"
        # shellcheck disable=SC2046
        swiftc "${swift_flags[@]}" -I "$build" -I "$build/modules" $(sources Fuzz/Tags) \
            "$build/AudioRemux.o" "$build/ISOBMFF.o" "$build/CSystem.o" -o "$build/fuzz-tags"
        # shellcheck disable=SC2046
        swiftc "${swift_flags[@]}" -I "$build" -I "$build/modules" $(sources Fuzz/Recipes) \
            "$build/AudioRemux.o" "$build/ISOBMFF.o" "$build/CSystem.o" -o "$build/fuzz-recipes"
    fi
    build_structured
}

# The structure-aware target: its own mutator (LLVMFuzzerCustomMutator) over the library
# objects built above.
build_structured() {
    if stale "$build/fuzz-structured" "$repo/Sources" "$repo/Fuzz/Structured"; then
        echo "== building fuzz-structured"
        # shellcheck disable=SC2046
        swiftc "${swift_flags[@]}" -I "$build" -I "$build/modules" $(sources Fuzz/Structured) \
            "$build/AudioRemux.o" "$build/ISOBMFF.o" "$build/CSystem.o" -o "$build/fuzz-structured"
    fi
}

check_target() {
    local t
    for t in "${targets[@]}"; do [[ $1 == "$t" ]] && return 0; done
    echo "unknown target '$1' (targets: ${targets[*]})" >&2
    exit 2
}

# Seeds: the committed minimised corpus, then every fixture (libFuzzer reads directories
# recursively and cuts inputs to -max_len). New inputs go to the first directory only.
seed_dirs() { echo "$repo/Fuzz/corpus/$1" "$repo/Fixtures"; }

fuzz() {
    local target=$1 seconds=$2 corpus=$3
    shift 3
    mkdir -p "$corpus" "$build/artifacts/$target" "$repo/Fuzz/corpus/$target"
    # shellcheck disable=SC2046
    # shellcheck disable=SC2046
    "$build/fuzz-$target" $(target_options "$target") -max_total_time="$seconds" -print_final_stats=1 \
        -artifact_prefix="$build/artifacts/$target/" "$@" "$corpus" $(seed_dirs "$target")
}

cd "$repo"
case "${1:-}" in
--build)
    build_all
    ;;
--ci)
    build_all
    seconds="${FUZZ_CI_SECONDS:-60}"
    scratch="$(mktemp -d)"
    trap 'rm -rf "$scratch"' EXIT
    status=0
    # A fixed seed: CI replays the same mutations every run (as far as its time allows), so a
    # green run here is one the developer can reproduce, and a red one names a real finding
    # rather than a new random draw. Long campaigns (TARGET SECONDS) draw their own seeds.
    seed="${FUZZ_CI_SEED:-20261201}"
    # Two targets at a time (each libFuzzer process is one thread; CI has two cores), so
    # the six take three rounds of $seconds s instead of six.
    jobs="${FUZZ_CI_JOBS:-2}"
    report() {
        local target=$1 result=$2
        if [[ $result -ne 0 ]]; then
            tail -n 60 "$scratch/$target.log"
            echo "== $target: FAILED (reproducer in $build/artifacts/$target/)"
            status=1
        else
            grep -E '^(stat::number_of_executed_units|stat::average_exec_per_sec|#[0-9]+ +DONE)' \
                "$scratch/$target.log" || true
            echo "== $target: no findings"
        fi
    }
    for ((first = 0; first < ${#targets[@]}; first += jobs)); do
        round=("${targets[@]:first:jobs}")
        pids=()
        for target in "${round[@]}"; do
            echo "== fuzzing $target for $seconds s (seed $seed)"
            fuzz "$target" "$seconds" "$scratch/$target" -seed="$seed" >"$scratch/$target.log" 2>&1 &
            pids+=($!)
        done
        for index in "${!round[@]}"; do
            result=0
            wait "${pids[$index]}" || result=$?
            report "${round[$index]}" "$result"
        done
    done
    exit $status
    ;;
--merge)
    check_target "${2:-}"
    build_all
    target=$2
    scratch="$(mktemp -d)"
    trap 'rm -rf "$scratch"' EXIT
    # The committed corpus stays small (Fixtures/ already seeds every run): the inputs of at
    # most $FUZZ_MERGE_MAX_BYTES (2048) bytes, from the working and committed corpora, that
    # reach coverage the fixtures do not. libFuzzer's merge keeps the smallest such inputs.
    mkdir -p "$scratch/fixtures" "$scratch/small" "$build/corpus/$target" "$repo/Fuzz/corpus/$target"
    find "$repo/Fixtures" -type f -not -path '*/fuzz/*' -exec cp {} "$scratch/fixtures/" \;
    ls "$scratch/fixtures" >"$scratch/before"
    find "$build/corpus/$target" "$repo/Fuzz/corpus/$target" -type f -size -"$((${FUZZ_MERGE_MAX_BYTES:-2048} + 1))"c \
        -exec cp {} "$scratch/small/" \;
    # shellcheck disable=SC2046
    "$build/fuzz-$target" $(target_options "$target") -merge=1 "$scratch/fixtures" "$scratch/small"
    rm -rf "$repo/Fuzz/corpus/$target"
    mkdir -p "$repo/Fuzz/corpus/$target"
    ls "$scratch/fixtures" | grep -vxF -f "$scratch/before" | while read -r name; do
        cp "$scratch/fixtures/$name" "$repo/Fuzz/corpus/$target/"
    done
    echo "$(ls "$repo/Fuzz/corpus/$target" | wc -l) files, $(du -sh "$repo/Fuzz/corpus/$target" | cut -f1)"
    ;;
"" | -h | --help)
    sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
    ;;
*)
    check_target "$1"
    [[ ${2:-} =~ ^[0-9]+$ ]] || { echo "usage: Fuzz/run.sh TARGET SECONDS [libFuzzer flags...]" >&2; exit 2; }
    build_all
    target=$1 seconds=$2
    shift 2
    fuzz "$target" "$seconds" "$build/corpus/$target" "$@"
    ;;
esac
