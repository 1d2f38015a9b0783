#!/usr/bin/env bash
# Issue 29: no trap from a floating value made an integer. `Int(x)` / `UInt64(x)` of a Double
# traps on NaN, infinities and values out of range, and times a file claims are any of those.
# The one conversion is `MediaTime.integer(_:rounding:)` (Sources/ISOBMFF/Core/MediaTime.swift),
# built on `Int64(exactly:)`, which returns nil instead.
#
# Not a text grep: the compiler's type-checked syntax tree (`swiftc -dump-ast`) of each module
# (which swiftc prints on standard error) is searched for a call of an integer initializer taking a floating value and returning a
# non-optional integer (`Int.init(_: Double)` and its kin), so that no spelling, variable name
# or generic context hides one. `Int(exactly:)` returns an optional and is allowed.
# Ends with one "N passed, M failed" line (a module checked is a pass).
set -euo pipefail
cd "$(dirname "$0")/.."

swift build --build-tests >/dev/null  # the modules the others import
modules=$(swift build --show-bin-path)/Modules
csystem=$(swift build --show-bin-path)/CSystem.build/module.modulemap
# The modules use `package` access across each other: the name must be the one SwiftPM built
# them with (the root package's identity, its folder's name lowercased), read from its plan.
package_name=$(grep -aoE -m1 -- '-package-name","[^"]+"' .build/debug.yaml 2>/dev/null | sed -E 's/.*","(.*)"$/\1/' || true)
[ -n "$package_name" ] || package_name=$(basename "$PWD" | tr '[:upper:]' '[:lower:]')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

pattern='constructor_ref_call_expr type="\((Double|Float|Float16|Float80|CGFloat)\) -> U?Int(8|16|32|64)?"'
passed=0
failed=0
check() {
    local module=$1 folder=$2
    shift 2
    local files
    mapfile -t files < <(find "$folder" -name '*.swift' | sort)
    if ! swiftc -dump-ast -swift-version 6 -module-name "$module" -package-name "$package_name" -I "$modules" \
        -Xcc -fmodule-map-file="$csystem" "$@" "${files[@]}" >"$work/$module.ast" 2>&1; then
        echo "FAIL $module: swiftc -dump-ast failed:"; grep -a 'error:' "$work/$module.ast" | head -n 20
        failed=$((failed + 1))
        return
    fi
    local found
    found=$(grep -aE "$pattern" "$work/$module.ast" | grep -ao 'location=[^ ]*' | sed 's/^location=//' | sort -u || true)
    if [ -n "$found" ]; then
        echo "FAIL $module: a floating value made an integer with a trapping initializer (use MediaTime.integer):"
        echo "$found" | sed 's/^/  /'
        failed=$((failed + 1))
    else
        echo "ok   $module: no Int(x)/UInt64(x) of a floating value"
        passed=$((passed + 1))
    fi
}
check ISOBMFF Sources/ISOBMFF -parse-as-library
check AudioRemux Sources/AudioRemux -parse-as-library
check extract_audio Sources/extract-audio
check TestSupport Tests/TestSupport -parse-as-library

# The check must be able to fail: a probe with one such conversion must be caught.
printf 'let seconds = 2.5\nlet ticks = UInt64(seconds * 1000)\nprint(ticks)\n' >"$work/probe.swift"
swiftc -dump-ast -swift-version 6 "$work/probe.swift" >"$work/probe.ast" 2>&1 || true
if grep -aqE "$pattern" "$work/probe.ast"; then
    echo "ok   probe: the search finds UInt64(seconds * 1000)"
    passed=$((passed + 1))
else
    echo "FAIL probe: the search no longer finds UInt64(seconds * 1000): the pattern is stale"
    failed=$((failed + 1))
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
