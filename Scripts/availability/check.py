#!/usr/bin/env python3
"""Checks, by USR, that nothing the package and its Examples reference from the standard
modules is newer than the minimum Apple platforms their Package.swift files declare.

No Apple SDK exists on the machines that run CI, so the compiler never checks our code
against macOS, iOS, tvOS, watchOS or visionOS availability there (on Linux every
`@available(macOS 15, ...)` declaration is simply available). This script does that check
without an Apple SDK, exactly rather than by name:

  1. `swift-symbolgraph-extract` on the toolchain's standard modules (Swift, _Concurrency,
     Synchronization, _StringProcessing) gives each public declaration's USR with its
     `availability` per platform domain. A member's availability is combined with that of
     its parents (the `memberOf` relationships: the type or protocol it extends), and a
     domain marked `isUnconditionallyUnavailable` counts as never available.
     visionOS inherits iOS's availability where a declaration names no visionOS version
     (iOS 17 is visionOS 1, iOS 18 is visionOS 2), as the compiler does.
  2. The compiler's index store gives every declaration each source file references, by
     USR with its line and column: `swift build -Xswiftc -index-store-path` for the
     package, `swiftc -c -index-store-path` for each Examples/ package and for each
     probe (objects compiled and thrown away). The store is read through the toolchain's libIndexStore.so (the C API of
     usr/local/include/indexstore/indexstore.h) with ctypes.
  3. A reference fails when its declaration is introduced, on any declared platform, after
     the minimum that the file's package declares in `platforms:` (SwiftPM's defaults when
     it declares none).

The index store records no scopes, so a use guarded by `if #available(...)` or inside an
`@available(...)` declaration cannot be told from an unguarded one. Such a use goes into
allowlist.txt next to this script, one line each: USR, file:line, and the guard. The
script checks that the allowlisted line still references that USR and that the guard's
text is still on that line or on one of the 30 lines above it, and that the guard names a
version at least as new as the declaration's on every platform it restricts.

Self-test: each file of probes/ (outside the package's targets) uses one declaration too
new for the package's platforms; each must be flagged. A probe flagged counts as passed;
a probe not flagged fails the run. probes/guarded.swift uses one such declaration under
`if #available`, allowlisted, and must not be flagged.

Output: one line per finding, then "N passed, M failed" where the checks are: one per
source file of the package and of each example (no reference too new), one per allowlist
entry (still guarded), one per probe. Exit status 0 when nothing failed, 1 otherwise.

Environment: AVAILABILITY_SCRATCH reuses a directory for the build and the symbol graphs
across runs (otherwise a temporary one is made and removed).
"""

import ctypes
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.realpath(os.path.join(os.path.dirname(__file__), "..", ".."))
HERE = os.path.join(ROOT, "Scripts", "availability")
PLATFORMS = ["macOS", "iOS", "tvOS", "watchOS", "visionOS"]
# SwiftPM's minimum deployment targets for a package that declares no `platforms:`.
SWIFTPM_DEFAULTS = {"macOS": (10, 13), "iOS": (12, 0), "tvOS": (12, 0), "watchOS": (4, 0), "visionOS": (1, 0)}
STANDARD_MODULES = ["Swift", "_Concurrency", "Synchronization", "_StringProcessing"]
GUARD_WINDOW = 30  # lines above an allowlisted use where its guard may stand

ROLE_REFERENCE = 1 << 2
DEPENDENCY_RECORD = 2


def toolchain():
    swift = shutil.which("swift")
    if swift is None:
        sys.exit("availability: swift is not on PATH")
    usr = os.path.dirname(os.path.dirname(os.path.realpath(swift)))
    return usr


def version_text(version):
    parts = list(version)
    while len(parts) > 2 and parts[-1] == 0:
        parts.pop()
    return ".".join(str(part) for part in parts)


# -- Package.swift ---------------------------------------------------------------------------

def declared_platforms(package_swift):
    """The minimums of `platforms:` in a Package.swift, e.g. {"macOS": (12, 0), ...}.

    Reads `.macOS(.v12)`, `.iOS(.v15)`, `.iOS("15.4")`-style entries. Returns (minimums,
    declared): a platform the package does not name gets SwiftPM's default."""
    text = open(package_swift, encoding="utf-8").read()
    match = re.search(r"platforms\s*:\s*\[(.*?)\]", text, re.S)
    minimums = dict(SWIFTPM_DEFAULTS)
    if not match:
        return minimums, False
    for name, version in re.findall(r"\.(macOS|iOS|tvOS|watchOS|visionOS)\(\s*([^)]*)\)", match.group(1)):
        version = version.strip()
        parts = re.findall(r"\d+", version.replace("_", "."))
        if not parts:
            sys.exit(f"availability: cannot read .{name}({version}) in {package_swift}")
        numbers = tuple(int(part) for part in parts)
        minimums[name] = numbers if len(numbers) > 1 else (numbers[0], 0)
    return minimums, True


# -- Symbol graphs ---------------------------------------------------------------------------

def parse_version(entry):
    if entry is None:
        return None
    return (entry.get("major", 0), entry.get("minor", 0), entry.get("patch", 0))


def symbol_availability(usr_dir, scratch):
    """USR -> {platform: introduced version tuple, or "unavailable"}, over the standard
    modules, with each member's availability combined with its parents'."""
    graphs = os.path.join(scratch, "symbolgraphs")
    if not glob.glob(os.path.join(graphs, "*.symbols.json")):
        os.makedirs(graphs, exist_ok=True)
        for module in STANDARD_MODULES:
            subprocess.run(["swift-symbolgraph-extract", "-module-name", module,
                            "-target", "x86_64-unknown-linux-gnu" if os.uname().machine == "x86_64"
                            else f"{os.uname().machine}-unknown-linux-gnu",
                            "-output-dir", graphs, "-minimum-access-level", "public"],
                           check=True, stdout=subprocess.DEVNULL)
    own = {}
    parents = {}
    defaults = []
    for path in glob.glob(os.path.join(graphs, "*.symbols.json")):
        with open(path, encoding="utf-8") as file:
            graph = json.load(file)
        for symbol in graph["symbols"]:
            usr = symbol["identifier"]["precise"]
            if "::SYNTHESIZED::" in usr:
                # A protocol extension's member copied into each conforming type; the
                # index references the original, which has its own entry.
                continue
            entries = {}
            for item in symbol.get("availability", []):
                domain = item.get("domain")
                if item.get("isUnconditionallyUnavailable"):
                    # domain "*" (or none): unavailable everywhere.
                    for platform in PLATFORMS if domain in (None, "*") else [domain]:
                        entries[platform] = "unavailable"
                elif domain in PLATFORMS and "introduced" in item:
                    entries[domain] = parse_version(item["introduced"])
                elif domain in PLATFORMS and item.get("obsoleted") is not None:
                    entries.setdefault(domain, (0, 0, 0))
            if usr in own:
                own[usr] = combine(own[usr], entries)
            else:
                own[usr] = entries
        for relation in graph["relationships"]:
            if relation["kind"] == "defaultImplementationOf" and "::SYNTHESIZED::" not in relation["source"]:
                defaults.append((relation["source"], relation["target"]))
            if relation["kind"] in ("memberOf", "optionalRequirementOf", "requirementOf") \
                    and "::SYNTHESIZED::" not in relation["source"]:
                parents.setdefault(relation["source"], set()).add(relation["target"])

    # A requirement added to an old protocol (FixedWidthInteger's `&*` in Swift 6) comes
    # with a default implementation that back-deploys: a call resolves to the requirement
    # in the index but runs the default on an older system. Such a requirement is as old
    # as the oldest of its default implementations.
    for relation_source, requirement_usr in defaults:
        if requirement_usr in own and relation_source in own:
            own[requirement_usr] = oldest(own[requirement_usr], own[relation_source])

    resolved = {}

    def resolve(usr, seen=()):
        if usr in resolved:
            return resolved[usr]
        result = dict(own.get(usr, {}))
        for parent in parents.get(usr, ()):
            if parent in seen:
                continue
            result = combine(result, resolve(parent, seen + (usr,)))
        resolved[usr] = result
        return result

    for usr in own:
        resolve(usr)
    return resolved


def combine(a, b):
    """The later of two availabilities per platform ("unavailable" is the latest)."""
    result = dict(a)
    for platform, version in b.items():
        current = result.get(platform)
        if current is None or version == "unavailable":
            result[platform] = version
        elif current != "unavailable" and version > current:
            result[platform] = version
    return result


def oldest(a, b):
    """The earlier of two availabilities per platform; a platform only one restricts is
    unrestricted."""
    result = {}
    for platform in set(a) & set(b):
        x, y = a[platform], b[platform]
        if x == "unavailable":
            result[platform] = y
        elif y == "unavailable":
            result[platform] = x
        else:
            result[platform] = min(x, y)
    return result


def requirement(entries, platform):
    """The version a declaration needs on `platform`, "unavailable", or None (always)."""
    if platform in entries:
        return entries[platform]
    if platform == "visionOS" and "iOS" in entries:
        ios = entries["iOS"]
        if ios == "unavailable":
            return ios
        # visionOS 1.0 shipped with the iOS 17 SDK; iOS 18 is visionOS 2, and so on.
        return None if ios <= (17, 0, 0) else (ios[0] - 16,) + ios[1:]
    return None


def too_new(entries, minimums):
    """[(platform, needed, minimum)] where the declaration is newer than the minimum."""
    problems = []
    for platform in PLATFORMS:
        needed = requirement(entries, platform)
        if needed is None:
            continue
        minimum = minimums[platform] + (0,) * (3 - len(minimums[platform]))
        if needed == "unavailable" or needed > minimum:
            problems.append((platform, needed, minimum))
    return problems


def describe(problems):
    return ", ".join(f"{platform} {needed if needed == 'unavailable' else version_text(needed)}"
                     f" > {version_text(minimum)}" for platform, needed, minimum in problems)


# -- Index store -----------------------------------------------------------------------------

class StringRef(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("length", ctypes.c_size_t)]

    def text(self):
        return ctypes.string_at(self.data, self.length).decode("utf-8") if self.length else ""


class IndexStore:
    """The few calls of indexstore.h needed to list each source file's references."""

    def __init__(self, usr_dir):
        self.lib = ctypes.CDLL(os.path.join(usr_dir, "lib", "libIndexStore.so"))
        lib = self.lib
        p, s = ctypes.c_void_p, ctypes.c_char_p
        error = ctypes.POINTER(ctypes.c_void_p)
        for name, restype, argtypes in [
            ("indexstore_store_create", p, [s, error]),
            ("indexstore_store_dispose", None, [p]),
            ("indexstore_error_get_description", s, [p]),
            ("indexstore_unit_reader_create", p, [p, s, error]),
            ("indexstore_unit_reader_dispose", None, [p]),
            ("indexstore_unit_reader_dependencies_apply_f", ctypes.c_bool, [p, p, p]),
            ("indexstore_unit_dependency_get_kind", ctypes.c_int, [p]),
            ("indexstore_unit_dependency_get_name", StringRef, [p]),
            ("indexstore_unit_dependency_get_filepath", StringRef, [p]),
            ("indexstore_record_reader_create", p, [p, s, error]),
            ("indexstore_record_reader_dispose", None, [p]),
            ("indexstore_record_reader_occurrences_apply_f", ctypes.c_bool, [p, p, p]),
            ("indexstore_occurrence_get_symbol", p, [p]),
            ("indexstore_occurrence_get_roles", ctypes.c_uint64, [p]),
            ("indexstore_occurrence_get_line_col", None, [p, ctypes.POINTER(ctypes.c_uint),
                                                          ctypes.POINTER(ctypes.c_uint)]),
            ("indexstore_symbol_get_usr", StringRef, [p]),
            ("indexstore_symbol_get_name", StringRef, [p]),
        ]:
            function = getattr(lib, name)
            function.restype = restype
            function.argtypes = argtypes
        self.applier = ctypes.CFUNCTYPE(ctypes.c_bool, ctypes.c_void_p, ctypes.c_void_p)

    def _check(self, handle, error, what):
        if not handle:
            message = self.lib.indexstore_error_get_description(error) if error else b"?"
            sys.exit(f"availability: {what}: {message.decode()}")
        return handle

    def references(self, store_path):
        """{(file, line, column, usr, name)} for every reference in the store's records."""
        error = ctypes.c_void_p()
        store = self._check(self.lib.indexstore_store_create(store_path.encode(), ctypes.byref(error)),
                            error, f"cannot open the index store {store_path}")
        found = set()
        records = {}
        units = sorted(glob.glob(os.path.join(store_path, "v*", "units", "*")))
        for unit_path in units:
            unit = self.lib.indexstore_unit_reader_create(store, os.path.basename(unit_path).encode(),
                                                          ctypes.byref(error))
            if not unit:
                continue

            def dependency(_context, dep):
                if self.lib.indexstore_unit_dependency_get_kind(dep) == DEPENDENCY_RECORD:
                    records[self.lib.indexstore_unit_dependency_get_name(dep).text()] = \
                        self.lib.indexstore_unit_dependency_get_filepath(dep).text()
                return True

            self.lib.indexstore_unit_reader_dependencies_apply_f(unit, None, self.applier(dependency))
            self.lib.indexstore_unit_reader_dispose(unit)
        line, column = ctypes.c_uint(), ctypes.c_uint()
        for record_name, source in records.items():
            if not source.endswith(".swift"):
                continue
            reader = self._check(self.lib.indexstore_record_reader_create(store, record_name.encode(),
                                                                          ctypes.byref(error)),
                                 error, f"cannot read the record {record_name}")

            def occurrence(_context, occ):
                if self.lib.indexstore_occurrence_get_roles(occ) & ROLE_REFERENCE:
                    symbol = self.lib.indexstore_occurrence_get_symbol(occ)
                    self.lib.indexstore_occurrence_get_line_col(occ, ctypes.byref(line), ctypes.byref(column))
                    found.add((os.path.realpath(source), line.value, column.value,
                               self.lib.indexstore_symbol_get_usr(symbol).text(),
                               self.lib.indexstore_symbol_get_name(symbol).text()))
                return True

            self.lib.indexstore_record_reader_occurrences_apply_f(reader, None, self.applier(occurrence))
            self.lib.indexstore_record_reader_dispose(reader)
        self.lib.indexstore_store_dispose(store)
        return found


# -- Building with an index store ------------------------------------------------------------

def run(command, what):
    result = subprocess.run(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if result.returncode != 0:
        print(result.stdout[-4000:], file=sys.stderr)
        sys.exit(f"availability: {what} failed: {' '.join(command)}")
    return result.stdout


def index_package(scratch):
    build = os.path.join(scratch, "build")
    store = os.path.join(scratch, "index-package")
    run(["swift", "build", "--package-path", ROOT, "--scratch-path", build,
         "-Xswiftc", "-index-store-path", "-Xswiftc", store,
         "-Xswiftc", "-index-ignore-system-modules"], "swift build with an index store")
    bin_path = run(["swift", "build", "--package-path", ROOT, "--scratch-path", build, "--show-bin-path"],
                   "swift build --show-bin-path").strip().splitlines()[-1]
    return store, bin_path


def import_flags(bin_path):
    """What an Examples package or a probe needs to import the package's modules."""
    flags = ["-swift-version", "6", "-I", os.path.join(bin_path, "Modules"),
             "-index-ignore-system-modules"]
    for modulemap in glob.glob(os.path.join(bin_path, "*.build", "module.modulemap")):
        flags += ["-Xcc", f"-fmodule-map-file={modulemap}"]
    return flags


def index_sources(name, sources, store, bin_path, module_name, extra=()):
    """Compiles `sources` to objects (thrown away) with an index store. Not -typecheck: the
    index names each file's unit after its output, and without outputs every file's unit
    gets the same name, so only the last file's references would remain."""
    objects = store + ".objects"
    shutil.rmtree(objects, ignore_errors=True)
    os.makedirs(objects)
    run(["swiftc", "-c", "-Onone", "-module-name", module_name, "-index-store-path", store,
         "-working-directory", objects]
        + import_flags(bin_path) + list(extra) + [os.path.realpath(source) for source in sources],
        f"indexing {name}")


# -- The checks ------------------------------------------------------------------------------

def read_allowlist():
    """[(usr, path, line, guard)] from allowlist.txt (blank lines and # comments ignored)."""
    entries = []
    path = os.path.join(HERE, "allowlist.txt")
    if not os.path.exists(path):
        return entries
    for number, text in enumerate(open(path, encoding="utf-8"), 1):
        text = text.strip()
        if not text or text.startswith("#"):
            continue
        parts = text.split(None, 2)
        location = re.fullmatch(r"(.+):(\d+)", parts[1]) if len(parts) == 3 else None
        if not location:
            sys.exit(f"availability: allowlist.txt:{number}: expected 'USR FILE:LINE GUARD'")
        entries.append((parts[0], location.group(1), int(location.group(2)), parts[2]))
    return entries


def guard_covers(guard, needs):
    """True when `#available(...)`/`@available(...)` text names, for each platform the
    declaration restricts, a version at least the one needed."""
    named = dict((platform, tuple(int(x) for x in version.split(".")))
                 for platform, version in re.findall(r"\b(macOS|iOS|tvOS|watchOS|visionOS)\s+([\d.]+)", guard))
    for platform, needed, _minimum in needs:
        if needed == "unavailable":
            return False
        version = named.get(platform)
        if version is None or version + (0,) * (3 - len(version)) < needed:
            return False
    return True


def main():
    usr_dir = toolchain()
    keep = os.environ.get("AVAILABILITY_SCRATCH")
    scratch = keep or tempfile.mkdtemp(prefix="availability.")
    os.makedirs(scratch, exist_ok=True)
    try:
        return check(usr_dir, scratch)
    finally:
        if not keep:
            shutil.rmtree(scratch, ignore_errors=True)


def check(usr_dir, scratch):
    availability = symbol_availability(usr_dir, scratch)
    indexstore = IndexStore(usr_dir)
    passed = failed = 0

    # The packages: this one and each under Examples/, with their own minimums.
    store, bin_path = index_package(scratch)
    packages = [("package", ROOT, ["Sources"], indexstore.references(store))]
    for example in sorted(glob.glob(os.path.join(ROOT, "Examples", "*", "Package.swift"))):
        directory = os.path.dirname(example)
        name = os.path.basename(directory)
        example_store = os.path.join(scratch, f"index-{name}")
        shutil.rmtree(example_store, ignore_errors=True)
        sources = sorted(glob.glob(os.path.join(directory, "Sources", "*", "**", "*.swift"), recursive=True))
        index_sources(f"Examples/{name}", sources, example_store, bin_path, name)
        packages.append((f"Examples/{name}", directory, ["Sources"], indexstore.references(example_store)))

    allowlist = read_allowlist()
    allowed = {(usr, os.path.join(ROOT, path), line) for usr, path, line, _guard in allowlist}
    seen_allowed = set()
    for name, directory, roots, references in packages:
        minimums, declared = declared_platforms(os.path.join(directory, "Package.swift"))
        if not declared:
            print(f"note: {os.path.relpath(directory, ROOT) or '.'}/Package.swift declares no platforms:"
                  f" SwiftPM's defaults apply ({describe_minimums(minimums)})")
        prefixes = tuple(os.path.join(directory, root) + os.sep for root in roots)
        files = {}
        for source, line, column, usr, symbol in references:
            if source.startswith(prefixes):
                files.setdefault(source, []).append((line, column, usr, symbol))
        package_failed = failed
        # Every source file must have been indexed, or its references went unchecked.
        for root in roots:
            for source in sorted(glob.glob(os.path.join(directory, root, "**", "*.swift"), recursive=True)):
                if os.path.realpath(source) not in files:
                    failed += 1
                    print(f"FAIL {os.path.relpath(source, ROOT)}: not in the index store, so not checked")
        for source in sorted(files):
            relative = os.path.relpath(source, ROOT)
            findings = []
            for line, column, usr, symbol in sorted(files[source]):
                problems = too_new(availability.get(usr, {}), minimums)
                if not problems:
                    continue
                if (usr, source, line) in allowed:
                    seen_allowed.add((usr, source, line))
                    continue
                findings.append(f"{relative}:{line}:{column}: {symbol} ({usr}) needs {describe(problems)}")
            if findings:
                failed += 1
                for finding in sorted(set(findings)):
                    print(f"FAIL {finding}")
            else:
                passed += 1
        if failed == package_failed:
            print(f"ok   {name}: {len(files)} source files, no reference newer than {describe_minimums(minimums)}")

    # Each allowlisted use: still there, still under a guard that covers it.
    package_minimums = declared_platforms(os.path.join(ROOT, "Package.swift"))[0]
    for usr, path, line, guard in allowlist:
        source = os.path.join(ROOT, path)
        label = f"allowlist {path}:{line} {usr}"
        minimums = package_minimums
        if path.startswith("Examples/"):
            minimums = declared_platforms(os.path.join(ROOT, *path.split("/")[:2], "Package.swift"))[0]
        lines = open(source, encoding="utf-8").read().splitlines() if os.path.exists(source) else []
        window = lines[max(0, line - 1 - GUARD_WINDOW):line]
        needs = too_new(availability.get(usr, {}), minimums)
        if path.startswith("Scripts/availability/probes/"):
            continue  # checked with the probes below
        if (usr, source, line) not in seen_allowed:
            failed += 1
            print(f"FAIL {label}: the line no longer references this declaration (update the allowlist)")
        elif not any(guard in text for text in window):
            failed += 1
            print(f"FAIL {label}: the guard '{guard}' is no longer on the line or the {GUARD_WINDOW} above")
        elif not guard_covers(guard, needs):
            failed += 1
            print(f"FAIL {label}: the guard '{guard}' does not cover {describe(needs)}")
        else:
            passed += 1

    # The probes: each must be flagged, except the guarded one (allowlisted) which must not.
    for probe in sorted(glob.glob(os.path.join(HERE, "probes", "*.swift"))):
        name = os.path.basename(probe)
        probe_store = os.path.join(scratch, f"index-probe-{name}")
        shutil.rmtree(probe_store, ignore_errors=True)
        index_sources(f"probe {name}", [probe], probe_store, bin_path, "Probe", ["-parse-as-library"])
        relative = os.path.relpath(probe, ROOT)
        flagged = []
        guarded = []
        for source, line, column, usr, symbol in indexstore.references(probe_store):
            if source != os.path.realpath(probe):
                continue
            problems = too_new(availability.get(usr, {}), package_minimums)
            if not problems:
                continue
            entry = [g for u, p, l, g in allowlist if (u, p, l) == (usr, relative, line)]
            lines = open(probe, encoding="utf-8").read().splitlines()
            window = lines[max(0, line - 1 - GUARD_WINDOW):line]
            if entry and any(entry[0] in text for text in window) and guard_covers(entry[0], problems):
                guarded.append(f"{symbol} at line {line}")
            else:
                flagged.append(f"{relative}:{line}:{column}: {symbol} ({usr}) needs {describe(problems)}")
        expects_flag = name != "guarded.swift"
        if expects_flag and flagged:
            passed += 1
            print(f"ok   probe {name} flagged: {sorted(set(flagged))[0]}")
        elif not expects_flag and not flagged and guarded:
            passed += 1
            print(f"ok   probe {name} not flagged: its use is allowlisted under its guard ({guarded[0]})")
        else:
            failed += 1
            what = "was not flagged" if expects_flag else f"was flagged: {flagged[:1]}"
            print(f"FAIL probe {name} {what}")

    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


def describe_minimums(minimums):
    return ", ".join(f"{platform} {version_text(minimums[platform])}" for platform in PLATFORMS)


if __name__ == "__main__":
    sys.exit(main())
