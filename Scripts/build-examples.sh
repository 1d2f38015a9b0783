#!/usr/bin/env bash
# Builds the example apps that embed the library (each under Examples/, its own SwiftPM
# package depending on this one by path) and runs them:
#   - BatchExtract on Fixtures/ into a temporary folder: every good fixture must come out as
#     an .m4a, no bad one may, and nothing temporary may be left behind;
#   - CopyTracks: fixtures copied progressive and fragmented; a regular copy fragmented and
#     copied back must come back byte for byte;
#   - SilentAAC: a 2-second silent AAC file, progressive and fragmented.
# Prints one line on success; on failure the reason and the app's output.
# Exit status: 0 when all is well, 1 otherwise.
set -euo pipefail

cd "$(dirname "$0")/.."
PACKAGE=Examples/BatchExtract
# The good and bad fixtures, as Fixtures/README.md describes them.
GOOD=(aac-h264-moov-end.mp4 aac-h264-faststart.mp4 aac-audio-first.mp4 aac-two-audio.mp4
      aac-48k-mono.mp4 aac-5.1.mp4 aac-quicktime.mov)
BAD=(video-only.mp4 truncated-no-moov.mp4 pcm-in-mov.mov)

start=$SECONDS
tmp=$(mktemp -d "${TMPDIR:-/tmp}/build-examples.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

fail() {
    echo "build-examples: FAIL: $*" >&2
    exit 1
}

if ! swift build --package-path "$PACKAGE" -q >"$tmp/build.log" 2>&1; then
    cat "$tmp/build.log" >&2
    fail "swift build --package-path $PACKAGE failed"
fi
app="$(swift build --package-path "$PACKAGE" --show-bin-path)/BatchExtract"

out="$tmp/out"
status=0
"$app" Fixtures "$out" >"$tmp/stdout" 2>"$tmp/stderr" </dev/null || status=$?
show_output() {
    echo "--- $app Fixtures $out (exit status $status)" >&2
    cat "$tmp/stdout" "$tmp/stderr" >&2
}
# 1: some inputs failed, as the bad fixtures must.
if [[ $status -ne 1 ]]; then
    show_output
    fail "BatchExtract exited with status $status, expected 1 (the bad fixtures fail)"
fi
problems=()
for fixture in "${GOOD[@]}"; do
    output="$out/${fixture%.*}.m4a"
    if [[ ! -s $output ]]; then
        problems+=("no $output for the good fixture $fixture")
    elif [[ $(head -c 12 "$output" | tail -c 8) != "ftypM4A " ]]; then
        problems+=("$output does not start with an ftyp box of brand 'M4A '")
    elif ! grep -q "^ok    $fixture -> " "$tmp/stdout"; then
        problems+=("no 'ok' line for $fixture")
    fi
done
for fixture in "${BAD[@]}"; do
    [[ -e "$out/${fixture%.*}.m4a" ]] && problems+=("an output was written for the bad fixture $fixture")
    grep -q "^fail  $fixture \[" "$tmp/stdout" || problems+=("no 'fail' line for $fixture")
done
leftovers=$(find "$out" -name '.*' -type f | head -3)
[[ -z $leftovers ]] || problems+=("temporary files left behind: $leftovers")
# Other fixtures may come and go; these must be counted.
oks=$(grep -c '^ok    ' "$tmp/stdout" || true)
fails=$(grep -c '^fail  ' "$tmp/stdout" || true)
grep -q "^$oks of $((oks + fails)) extracted (.* s of audio), $fails failed$" "$tmp/stdout" \
    || problems+=("the summary line is missing or does not count $oks ok and $fails failed")

if [[ ${#problems[@]} -gt 0 ]]; then
    show_output
    printf 'build-examples: %s\n' "${problems[@]}" >&2
    fail "${#problems[@]} problem(s) with $PACKAGE"
fi
# The writer's examples.
build() {
    if ! swift build --package-path "Examples/$1" -q >"$tmp/build-$1.log" 2>&1; then
        cat "$tmp/build-$1.log" >&2
        fail "swift build --package-path Examples/$1 failed"
    fi
    echo "$(swift build --package-path "Examples/$1" --show-bin-path)/$1"
}
run() {
    "$@" >"$tmp/run.log" 2>&1 </dev/null || { cat "$tmp/run.log" >&2; fail "$* exited with status $?"; }
}
copy=$(build CopyTracks)
silent=$(build SilentAAC)
run "$copy" Fixtures/aac-h264-faststart.mp4 "$tmp/copy.mp4"
run "$copy" --fragment 1 Fixtures/aac-h264-faststart.mp4 "$tmp/fragmented.mp4"
run "$copy" --track 2 Fixtures/aac-h264-faststart.mp4 "$tmp/audio.mp4"
# Byte for byte through fragments: an input without sample groups (fragments do not carry
# them), itself fragmented, copied to a regular file, fragmented and back.
run "$copy" Fixtures/frag-keyframe.mp4 "$tmp/regular.mp4"
run "$copy" --fragment 1 "$tmp/regular.mp4" "$tmp/refragmented.mp4"
run "$copy" "$tmp/refragmented.mp4" "$tmp/back.mp4"
cmp -s "$tmp/regular.mp4" "$tmp/back.mp4" || fail "CopyTracks: regular -> fragmented -> regular changed the file"
[[ $(head -c 12 "$tmp/fragmented.mp4" | tail -c 8) == ftypiso6 ]] || fail "CopyTracks --fragment wrote no iso6 ftyp"
grep -q moof "$tmp/fragmented.mp4" || fail "CopyTracks --fragment wrote no moof"
run "$silent" "$tmp/silent.mp4" 2
run "$silent" --fragment 1 "$tmp/silent-fragmented.mp4" 2
[[ -s $tmp/silent.mp4 && -s $tmp/silent-fragmented.mp4 ]] || fail "SilentAAC wrote nothing"
if command -v ffmpeg >/dev/null; then
    for file in copy.mp4 fragmented.mp4 audio.mp4 silent.mp4 silent-fragmented.mp4; do
        errors=$(ffmpeg -v error -i "$tmp/$file" -f null - 2>&1) || fail "ffmpeg cannot decode $file"
        [[ -z $errors ]] || fail "ffmpeg reports errors decoding $file: $errors"
    done
fi

echo "build-examples: ok, CopyTracks and SilentAAC wrote playable files;" \
    "BatchExtract extracted the ${#GOOD[@]} good fixtures and refused the ${#BAD[@]} bad ones" \
    "($oks of $((oks + fails)) movies extracted, $((SECONDS - start)) s)"
