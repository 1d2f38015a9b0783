#!/usr/bin/env bash
# Builds the DocC documentation of ISOBMFF and AudioRemux with the toolchain alone (no
# swift-docc-plugin): an ordinary debug build of the library (the same one `swift build`
# makes, so it is reused), `swift-symbolgraph-extract` for the modules' symbol graphs (what
# the plugin uses too: implementations inherit the doc comment of the requirement they
# implement), then `docc convert` of each catalog (Sources/MODULE/MODULE.docc: landing page
# and articles) into .build/docs/MODULE.doccarchive.
#
# Fails on any DocC warning (a broken ``symbol`` or <doc:article> link, an undocumented
# parameter, …) and on any public symbol without a doc comment (its own, or the one of the
# protocol requirement it implements).
#
# Prints one line on success; on failure what went wrong. Exit status: 0 or 1.
# To browse: docc preview Sources/AudioRemux/AudioRemux.docc \
#     --additional-symbol-graph-dir .build/docs/symbol-graphs/AudioRemux
set -euo pipefail

cd "$(dirname "$0")/.."
MODULES=(ISOBMFF AudioRemux)
DOCS=.build/docs
start=$SECONDS
log=$(mktemp "${TMPDIR:-/tmp}/build-docs.XXXXXX")
trap 'rm -f "$log"' EXIT

fail() {
    echo "build-docs: FAIL: $*" >&2
    exit 1
}

# 1. Symbol graphs from the debug build: public symbols, without the members every
#    conformance synthesizes, with extensions to other modules' types as extension blocks
#    (MODULE@OTHER.symbols.json).
if ! swift build --target AudioRemux -q >"$log" 2>&1; then
    cat "$log" >&2
    fail "swift build --target AudioRemux failed"
fi
bin=$(swift build --show-bin-path)
triple=$(swiftc -print-target-info | sed -n 's/^ *"triple": "\(.*\)",*$/\1/p' | head -1)
# AudioRemux imports the C module CSystem: the extractor needs its module map.
extract_flags=(-Xcc -I -Xcc "$PWD/Sources/CSystem/include")
modulemap=$bin/CSystem.build/module.modulemap
[[ -f $modulemap ]] && extract_flags+=(-Xcc "-fmodule-map-file=$modulemap")
[[ $(uname) == Darwin ]] && extract_flags+=(-sdk "$(xcrun --show-sdk-path)")
graphs=$DOCS/symbol-graphs
for module in "${MODULES[@]}"; do
    rm -rf "${graphs:?}/$module"
    mkdir -p "$graphs/$module"
    if ! swift-symbolgraph-extract -module-name "$module" -target "$triple" -I "$bin/Modules" \
            -module-cache-path "$bin/ModuleCache" "${extract_flags[@]}" -minimum-access-level public \
            -skip-synthesized-members -emit-extension-block-symbols -output-dir "$graphs/$module" \
            >"$log" 2>&1 || [[ ! -s "$graphs/$module/$module.symbols.json" ]]; then
        cat "$log" >&2
        fail "swift-symbolgraph-extract could not emit the symbol graph of $module"
    fi
done

# 2. Every public symbol has a doc comment.
coverage=""
if command -v python3 >/dev/null; then
    if ! coverage=$(python3 - "$graphs" "${MODULES[@]}" <<'PYTHON'
import glob, json, sys
graphs, modules = sys.argv[1], sys.argv[2:]
total, missing = 0, []
for module in modules:
    for path in sorted(glob.glob(f"{graphs}/{module}/*.symbols.json")):
        for symbol in json.load(open(path))["symbols"]:
            if symbol["kind"]["identifier"] == "swift.extension":
                continue  # An extension block; its members are checked one by one.
            total += 1
            if not symbol.get("docComment", {}).get("lines"):
                location = symbol.get("location", {})
                file = location.get("uri", "?").split("/Sources/")[-1]
                line = location.get("position", {}).get("line", -1) + 1
                missing.append(f"Sources/{file}:{line}: {module}.{'.'.join(symbol['pathComponents'])}")
if missing:
    print("public symbols without a doc comment:", *missing, sep="\n  ", file=sys.stderr)
    sys.exit(1)
print(f"{total} public symbols documented")
PYTHON
    ); then
        fail "document every public symbol (/// above its declaration)"
    fi
else
    coverage="doc-comment coverage not checked (no python3)"
fi

# 3. The archives; any warning is an error.
for module in "${MODULES[@]}"; do
    if ! docc convert "Sources/$module/$module.docc" \
            --additional-symbol-graph-dir "$graphs/$module" \
            --fallback-display-name "$module" --fallback-bundle-identifier "mp4-toolkit.$module" \
            --output-path "$DOCS/$module.doccarchive" --warnings-as-errors >"$log" 2>&1; then
        cat "$log" >&2
        fail "docc convert of $module reported the problems above"
    fi
done
archives=$(IFS=,; echo "${MODULES[*]}")
echo "build-docs: ok, $coverage, no DocC warnings: $DOCS/{$archives}.doccarchive ($((SECONDS - start)) s)"
