#!/usr/bin/env bash
# Conformance against FFmpeg, for every fixture in Scripts/fixtures.list and
# Scripts/metadata.list:
#
#   good NAME      "NAME": our extract-audio output (OURS) must match FFmpeg's
#                  `ffmpeg -map 0:a:0 -c:a copy -f ipod` (or -f mp4, per fixture: REF) in
#                  everything ffprobe reports about the audio (packets with CRC-32s, stream
#                  and format fields), except the documented known_deviations of
#                  Fixtures/expected/NAME.json (OURS must have their "expected" values); must
#                  be a single audio stream FFmpeg decodes without complaint; and the committed
#                  expected/NAME.json must still be what REF gives today
#                  (Scripts/expectations.py check).
#                  "probe NAME": `extract-audio probe --json NAME` must agree with ffprobe on
#                  the tracks (Scripts/probe_check.py).
#   meta NAME      the two checks of a good fixture (OURS may also hold the input's cover art
#                  as attached pictures: expectations.py check-meta), then one line per check
#                  of Scripts/metadata_check.py: tags, times, udta, keys, cover art, chapters,
#                  AtomicParsley (installed with apt-get if missing; a FAIL if it cannot be),
#                  gapless, --no-metadata, probe chapters.
#   exit NAME      "exit NAME": extract-audio must fail with the listed exit status, write
#                  nothing and say one line on stderr.
#   salvage NAME   "exit NAME": exit 65 naming the file as truncated; "salvage NAME": with
#                  --salvage exit 0 with a warning on stderr, and OURS must match FFmpeg's copy
#                  of the uncut file's first N audio packets (`-frames:a N`), N = the samples
#                  wholly inside the truncated file per the box walker (expectations.py
#                  salvage-check).
#
# Prints "ok   CHECK" or "FAIL CHECK: reason" per check, then "N passed, M failed"; exits 0
# when all pass, 1 when any fails, 2 when the package does not build. Set EXTRACT_AUDIO to
# an extract-audio binary to test it instead of building one.
set -euo pipefail

cd "$(dirname "$0")/.."
FIX=Fixtures
LIST=Scripts/fixtures.list
META_LIST=Scripts/metadata.list
mapfile -t ENTRIES < <(grep -hv '^[[:space:]]*\(#\|$\)' "$LIST" "$META_LIST")

tmp=$(mktemp -d "${TMPDIR:-/tmp}/conformance.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

if [[ -n ${EXTRACT_AUDIO:-} ]]; then
    EXTRACT=$EXTRACT_AUDIO
elif swift build -c release -q >"$tmp/build.log" 2>&1; then
    EXTRACT="$(swift build -c release --show-bin-path)/extract-audio"
else
    cat "$tmp/build.log"
    for entry in "${ENTRIES[@]}"; do
        read -r name _ <<<"$entry"
        echo "FAIL $name: swift build -c release failed"
    done
    echo "0 passed, ${#ENTRIES[@]} failed"
    exit 2
fi

passed=0
failed=0
report() { # report CHECK REASON (empty reason = ok)
    if [[ -z $2 ]]; then
        echo "ok   $1"
        passed=$((passed + 1))
    else
        echo "FAIL $1: ${2//$'\n'/ }"
        failed=$((failed + 1))
    fi
}

# run_extract OUTPUT_PREFIX ARGS...: runs extract-audio, leaves its status in $rc and its
# stderr in OUTPUT_PREFIX.err.
run_extract() {
    local prefix=$1
    shift
    rc=0
    "$EXTRACT" "$@" >"$prefix.out" 2>"$prefix.err" || rc=$?
}

# AtomicParsley, for the metadata checks: installed (once) if missing. If it cannot be, the
# AtomicParsley check of each metadata fixture fails, saying why.
atomicparsley_state=""
ensure_atomicparsley() {
    [[ -n $atomicparsley_state ]] && return
    atomicparsley_state=missing
    if ! command -v AtomicParsley >/dev/null; then
        { apt-get install -y atomicparsley || { apt-get update && apt-get install -y atomicparsley; }; } \
            >"$tmp/apt.log" 2>&1 || true
    fi
    if command -v AtomicParsley >/dev/null; then
        atomicparsley_state=ready
        export ATOMICPARSLEY
        ATOMICPARSLEY=$(command -v AtomicParsley)
    else
        export ATOMICPARSLEY="" ATOMICPARSLEY_MISSING
        ATOMICPARSLEY_MISSING="apt-get install -y atomicparsley failed: $(tail -n 1 "$tmp/apt.log" 2>/dev/null)"
    fi
}

index=0
for entry in "${ENTRIES[@]}"; do
    read -r name kind args <<<"$entry"
    index=$((index + 1))
    dir="$tmp/$index"
    mkdir "$dir"
    input="$FIX/$name"
    expected="$FIX/expected/$(basename "${name%.*}").json"
    case $kind in
    good | meta)
        reason=""
        ref="$dir/REF.m4a"
        ours="$dir/OURS.m4a"
        # shellcheck disable=SC2206  # the reference options are words
        options=($args)
        if [[ ! -f $input || ! -f $expected ]]; then
            reason="missing $input or $expected (run Scripts/make-fixtures.sh)"
        elif ! out=$(python3 Scripts/expectations.py reference "$input" "$ref" "${options[@]}" 2>&1); then
            reason="reference ffmpeg failed: $out"
        else
            run_extract "$dir/x" "$input" "$ours"
            if [[ $rc -ne 0 ]]; then
                reason="extract-audio exited $rc: $(head -c 400 "$dir/x.err")"
            elif [[ ! -s $ours ]]; then
                reason="extract-audio succeeded but wrote no $ours"
            elif ! out=$(python3 Scripts/expectations.py "$([[ $kind == meta ]] && echo check-meta || echo check)" \
                    "$input" "$ref" "$expected" "$ours" "${options[@]}" 2>&1); then
                reason=$out
            fi
        fi
        report "$name (REF ${options[*]})" "$reason"
        reason=""
        note=""
        if [[ ! -f $input ]]; then
            reason="missing $input"
        elif ! out=$(python3 Scripts/probe_check.py "$EXTRACT" "$input" 2>&1); then
            reason=$out
        elif [[ -n $out ]]; then
            note=" (${out//$'\n'/; })"
        fi
        report "probe $name$note" "$reason"
        [[ $kind == meta ]] || continue
        ensure_atomicparsley
        mkdir "$dir/meta"
        if [[ ! -f $input ]]; then
            report "metadata $name" "missing $input"
            continue
        fi
        # One line per check: ok<TAB>CHECK<TAB>NOTE or FAIL<TAB>CHECK<TAB>REASON.
        meta_out=$(python3 Scripts/metadata_check.py "$EXTRACT" "$input" "$dir/meta" "${options[@]}" 2>&1) \
            || true
        lines=0
        while IFS=$'\t' read -r status check detail; do
            if [[ $status == ok ]]; then
                report "$check${detail:+ ($detail)}" ""
                lines=$((lines + 1))
            elif [[ $status == FAIL ]]; then
                report "$check" "${detail:-failed}"
                lines=$((lines + 1))
            fi
        done <<<"$meta_out"
        if [[ $lines -eq 0 ]]; then
            report "metadata $name" "Scripts/metadata_check.py printed no checks: $(head -c 400 <<<"$meta_out")"
        elif grep -qv $'^\(ok\|FAIL\)\t' <<<"$meta_out"; then
            report "metadata $name" "Scripts/metadata_check.py: $(grep -v $'^\(ok\|FAIL\)\t' <<<"$meta_out" | head -c 400)"
        fi
        ;;
    exit | salvage)
        want=$args
        [[ $kind == salvage ]] && want=65
        reason=""
        out_file="$dir/OUT.m4a"
        if [[ ! -f $input ]]; then
            reason="missing $input (run Scripts/make-fixtures.sh)"
        else
            run_extract "$dir/x" "$input" "$out_file"
            lines=$(wc -l <"$dir/x.err")
            if [[ $rc -ne $want ]]; then
                reason="extract-audio exited $rc, want $want: $(head -c 300 "$dir/x.err")"
            elif [[ -e $out_file ]] || [[ -n $(find "$dir" -name '.OUT.m4a*') ]]; then
                reason="exited $rc but left $(ls -a "$dir" | grep OUT | tr '\n' ' ')behind"
            elif [[ $lines -ne 1 ]]; then
                reason="want one line on stderr, got $lines: $(head -c 300 "$dir/x.err")"
            elif [[ $kind == salvage ]] && ! grep -qi truncated "$dir/x.err"; then
                reason="the message does not say the file is truncated: $(cat "$dir/x.err")"
            fi
        fi
        report "exit $name ($want)" "$reason"
        [[ $kind == salvage ]] || continue
        reason=""
        uncut="$FIX/$args"
        ours="$dir/SALVAGED.m4a"
        if [[ ! -f $input || ! -f $uncut || ! -f $expected ]]; then
            reason="missing $input, $uncut or $expected (run Scripts/make-fixtures.sh)"
        else
            run_extract "$dir/s" --salvage "$input" "$ours"
            if [[ $rc -ne 0 ]]; then
                reason="extract-audio --salvage exited $rc: $(head -c 300 "$dir/s.err")"
            elif ! grep -qi 'warning.*truncated' "$dir/s.err"; then
                reason="no warning naming the truncation on stderr: $(head -c 300 "$dir/s.err")"
            elif [[ ! -s $ours ]]; then
                reason="extract-audio --salvage succeeded but wrote no $ours"
            elif ! out=$(python3 Scripts/expectations.py salvage-check "$input" "$expected" \
                    "$ours" 2>&1); then
                reason=$out
            fi
        fi
        report "salvage $name" "$reason"
        ;;
    *)
        report "$name" "unknown kind '$kind' in $LIST or $META_LIST"
        ;;
    esac
done

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
