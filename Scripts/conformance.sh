#!/usr/bin/env bash
# Conformance against FFmpeg: for each good fixture, our extract-audio output (OURS) must
# match `ffmpeg -map 0:a:0 -c:a copy -f ipod` (REF) in everything ffprobe reports about
# the audio (packets with CRC-32s, stream and format fields), must be a single audio
# stream FFmpeg decodes without complaint, and the committed Fixtures/expected/*.json
# must still be what REF gives today. Checks are in Scripts/expectations.py ("check").
# Prints "ok   NAME" or "FAIL NAME: reason" per fixture, then "N passed, M failed";
# exits 0 when all pass, 1 when any fails, 2 when the package does not build.
set -euo pipefail

cd "$(dirname "$0")/.."
FIX=Fixtures
GOOD=(aac-h264-moov-end.mp4 aac-h264-faststart.mp4 aac-audio-first.mp4 aac-two-audio.mp4
      aac-48k-mono.mp4 aac-5.1.mp4 aac-quicktime.mov)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/conformance.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

if ! swift build -c release -q >"$tmp/build.log" 2>&1; then
    cat "$tmp/build.log"
    for fixture in "${GOOD[@]}"; do echo "FAIL $fixture: swift build -c release failed"; done
    echo "0 passed, ${#GOOD[@]} failed"
    exit 2
fi
EXTRACT="$(swift build -c release --show-bin-path)/extract-audio"

passed=0
failed=0
for fixture in "${GOOD[@]}"; do
    name=${fixture%.*}
    dir="$tmp/$name"
    mkdir "$dir"
    ref="$dir/REF.m4a"
    ours="$dir/OURS.m4a"
    expected="$FIX/expected/$name.json"
    reason=""
    if [[ ! -f "$FIX/$fixture" || ! -f "$expected" ]]; then
        reason="missing $FIX/$fixture or $expected (run Scripts/make-fixtures.sh)"
    elif ! out=$(ffmpeg -nostdin -v error -y -i "$FIX/$fixture" -map 0:a:0 -c:a copy -f ipod "$ref" 2>&1); then
        reason="reference ffmpeg failed: $out"
    elif out=$("$EXTRACT" "$FIX/$fixture" "$ours" 2>&1) && rc=0 || rc=$?; [[ $rc -ne 0 ]]; then
        reason="extract-audio exited $rc: $out"
    elif [[ ! -s "$ours" ]]; then
        reason="extract-audio succeeded but wrote no $ours"
    elif ! out=$(python3 Scripts/expectations.py check "$FIX/$fixture" "$ref" "$expected" "$ours" 2>&1); then
        reason=$out
    fi
    if [[ -z "$reason" ]]; then
        echo "ok   $fixture"
        passed=$((passed + 1))
    else
        echo "FAIL $fixture: ${reason//$'\n'/ }"
        failed=$((failed + 1))
    fi
done

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
