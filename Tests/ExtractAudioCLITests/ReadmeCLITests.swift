import Foundation
import ISOBMFF
import TestSupport
import XCTest

/// The README's promises about the command line, checked against the tool: every `--json`
/// field it documents is emitted and every field emitted is documented, and its first
/// command can be run twice.
final class ReadmeCLITests: XCTestCase {
    let directory = TemporaryDirectory()

    override func tearDown() {
        directory.remove()
    }

    /// README.md and docs/*.md, where the command-line reference lives (docs/cli.md).
    static let readme: String = documentationText

    /// The field table of the README's `--json` section: field name -> the objects it is in
    /// (`result`, `salvaged`, `failure`, `error`, `mux`).
    static func documentedFields() -> [String: Set<String>] {
        var fields: [String: Set<String>] = [:]
        guard let start = readme.range(of: "### `--json`") else { return [:] }
        let section = readme[start.upperBound...].prefix { _ in true }
        let end = section.range(of: "\n### ")?.lowerBound ?? section.endIndex
        for line in section[..<end].split(separator: "\n") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false)
                .map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 4, cells[1].hasPrefix("`"), cells[1].hasSuffix("`") else { continue }
            let name = String(cells[1].dropFirst().dropLast())
            for object in cells[2].split(separator: ",") {
                fields[object.trimmingCharacters(in: .whitespaces), default: []].insert(name)
            }
        }
        return fields
    }

    func json(_ text: some StringProtocol) throws -> [String: Any] {
        try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], String(text))
    }

    /// The first fenced block opening with `fence` after `heading`.
    static func block(after heading: String, fence: String) -> String {
        guard let start = readme.range(of: heading), let open = readme[start.upperBound...].range(of: fence + "\n"),
              let close = readme[open.upperBound...].range(of: "\n```") else { return "" }
        return String(readme[open.upperBound..<close.lowerBound])
    }

    func keys(_ value: Any?) -> Set<String> {
        Set((value as? [String: Any])?.keys.map { $0 } ?? [])
    }

    /// `probe --json`: the README's example object shows exactly the fields probe emits, per
    /// object (the file, brands, moov, a video track, an audio track, an edit, a chapter, a
    /// metadata item); the `probe --packets` example line and the `remux --json` list too.
    func testProbePacketsAndRemuxJSONAreAsDocumented() throws {
        let example = try json(Self.block(after: "### `probe`", fence: "```json"))
        var emitted: [[String: Any]] = []
        for name in ["aac-h264-faststart.mp4", "meta-chapters-both.mp4", "meta-itunes.m4a"] {
            let run = try runCLI(["probe", "--json", fixture(name)])
            XCTAssertEqual(run.status, 0, run.stderr)
            XCTAssertEqual(run.stdout.filter { $0 == "\n" }.count, 1, "one line per input: \(run.stdout)")
            emitted.append(try json(run.stdout))
        }
        let two = try runCLI(["probe", "--json", fixture("aac-5.1.mp4"), fixture("video-only.mp4")])
        XCTAssertEqual(two.stdout.split(separator: "\n").count, 2, "JSON Lines with several inputs: \(two.stdout)")
        for line in two.stdout.split(separator: "\n") { _ = try json(line) }

        func union(_ objects: [Any?]) -> Set<String> { objects.reduce(into: Set<String>()) { $0.formUnion(keys($1)) } }
        func tracks(_ object: [String: Any], _ kind: String) -> [[String: Any]] {
            ((object["tracks"] as? [[String: Any]]) ?? []).filter { $0["kind"] as? String == kind }
        }
        XCTAssertEqual(keys(example), union(emitted), "the file's fields")
        for field in ["brands", "moov"] {
            XCTAssertEqual(keys(example[field]), union(emitted.map { $0[field] }), field)
        }
        for kind in ["video", "audio"] {
            let emittedTracks: [[String: Any]] = emitted.flatMap { tracks($0, kind) }
            XCTAssertEqual(union(tracks(example, kind)), union(emittedTracks), "\(kind) track")
        }
        func elements(_ object: [String: Any], _ field: String) -> [Any?] {
            (object[field] as? [Any]) ?? ((object["tracks"] as? [[String: Any]]) ?? []).flatMap {
                ($0[field] as? [Any]) ?? []
            }
        }
        for field in ["chapters", "metadata", "edit_list"] {
            let shown = union(elements(example, field))
            XCTAssertFalse(shown.isEmpty, "the example shows no \(field)")
            let emittedElements: [Any?] = emitted.flatMap { elements($0, field) }
            XCTAssertEqual(shown, union(emittedElements), field)
        }

        // probe --packets: the README's example line.
        let packetLine = try json(Self.block(after: "#### `probe --packets`", fence: "```"))
        let packets = try runCLI(["probe", "--packets", "--json", fixture("aac-h264-faststart.mp4")])
        XCTAssertEqual(packets.status, 0, packets.stderr)
        let firstPacket = try json(try XCTUnwrap(packets.stdout.split(separator: "\n").first))
        XCTAssertEqual(keys(packetLine), keys(firstPacket), "probe --packets fields")

        // remux --json: the README's list, "`input`, … and `tracks` (each `input_track_id`, …)".
        let section = try XCTUnwrap(Self.readme.range(of: "- `--json` prints one object: ").map {
            Self.readme[$0.upperBound...].prefix { $0 != ")" }
        })
        func names(_ text: Substring) -> Set<String> {
            let parts = text.split(separator: "`", omittingEmptySubsequences: false)
            return Set(parts.enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) })
        }
        let parts = section.components(separatedBy: "(each")
        let remux = try runCLI(["remux", "--json", fixture("aac-h264-faststart.mp4"), directory.file("r.mp4")])
        XCTAssertEqual(remux.status, 0, remux.stderr)
        let remuxObject = try json(remux.stdout)
        XCTAssertEqual(names(Substring(parts[0])), keys(remuxObject), "remux fields")
        XCTAssertEqual(names(Substring(parts.count > 1 ? parts[1] : "")),
                       union((remuxObject["tracks"] as? [Any]) ?? []), "remux track fields")
    }

    func testEveryJSONFieldIsDocumentedAndEveryDocumentedFieldIsEmitted() throws {
        let documented = Self.documentedFields()
        XCTAssertEqual(Set(documented.keys), ["result", "salvaged", "failure", "error", "mux"], "\(documented)")
        var emitted: [String: Set<String>] = [:]
        func record(_ object: [String: Any], as kind: String) {
            let keys = Set(object.keys)
            XCTAssertTrue(keys.isSubset(of: documented[kind] ?? []),
                          "\(kind): undocumented \(keys.subtracting(documented[kind] ?? []).sorted())")
            emitted[kind, default: []].formUnion(keys)
        }

        // Results, one salvaged.
        let good = try runCLI(["--json", fixture("aac-h264-faststart.mp4"), directory.file("a.m4a")])
        XCTAssertEqual(good.status, 0, good.stderr)
        record(try json(good.stdout), as: "result")
        let salvaged = try runCLI(["--json", "--salvage", fixture("aac-h264-faststart-truncated.mp4"),
                                   directory.file("s.m4a")])
        XCTAssertEqual(salvaged.status, 0, salvaged.stderr)
        let salvageObject = try json(salvaged.stdout)
        record(salvageObject, as: "result")
        record(try XCTUnwrap(salvageObject["salvaged"] as? [String: Any]), as: "salvaged")

        // Errors: one located in a box, one usage error.
        var broken = SyntheticMovie()
        broken.sampleToChunk.entries[0].firstChunk = 0
        let corrupt = directory.write("corrupt.mp4", broken.build())
        for arguments in [["--json", corrupt, directory.file("c.m4a")], ["--json", "--bogus"]] {
            let failed = try runCLI(arguments)
            XCTAssertNotEqual(failed.status, 0)
            let object = try json(failed.stdout)
            record(object, as: "failure")
            record(try XCTUnwrap(object["error"] as? [String: Any]), as: "error")
        }

        // mux.
        let mux = try runCLI(["mux", "--json", fixture("aac-h264-faststart.mp4"), "--audio", fixture("meta-itunes.m4a"),
                              directory.file("m.mp4")])
        XCTAssertEqual(mux.status, 0, mux.stderr)
        record(try json(mux.stdout), as: "mux")

        for (kind, fields) in documented {
            XCTAssertEqual(emitted[kind] ?? [], fields,
                           "\(kind): documented but never emitted: \(fields.subtracting(emitted[kind] ?? []).sorted())")
        }
    }

    /// The README calls `--list` probe's other name: it prints what `probe` prints, with and
    /// without `--json`.
    func testListIsProbeAsTheREADMESays() throws {
        XCTAssertTrue(Self.readme.contains("`extract-audio --list INPUT...`, the same command"),
                      "the README documents --list as probe")
        for json in [[], ["--json"]] {
            let inputs = [fixture("aac-h264-faststart.mp4"), fixture("meta-itunes.m4a")]
            let probe = try runCLI(["probe"] + json + inputs)
            let list = try runCLI(["--list"] + json + inputs)
            XCTAssertEqual(probe.status, 0, probe.stderr)
            XCTAssertEqual(list.status, probe.status)
            XCTAssertEqual(list.stdout, probe.stdout)
            XCTAssertFalse(list.stdout.isEmpty)
        }
    }

    /// The first command of the README, run twice, succeeds both times; the second is `swift test`.
    func testTheFirstCommandWorksTwice() throws {
        let block = try XCTUnwrap(Self.readme.components(separatedBy: "```sh\n").dropFirst().first)
        let lines = block.components(separatedBy: "\n")
        XCTAssertTrue(lines[1].hasPrefix("swift test"), lines[1])
        let command = lines[0].components(separatedBy: "#")[0]
        let prefix = "swift run -c release extract-audio "
        XCTAssertTrue(command.hasPrefix(prefix), command)
        var arguments = command.dropFirst(prefix.count).split(separator: " ").map(String.init)
        let root = URL(fileURLWithPath: fixturesDirectory).deletingLastPathComponent().path
        arguments = arguments.map { $0.hasPrefix("Fixtures/") ? root + "/" + $0 : $0 }
        // The output, relative in the README, goes to a temporary folder here.
        arguments[arguments.count - 1] = directory.file(arguments[arguments.count - 1])
        for time in 1...2 {
            let result = try runCLI(arguments)
            XCTAssertEqual(result.status, 0, "run \(time): \(result.stderr)")
        }
    }
}
