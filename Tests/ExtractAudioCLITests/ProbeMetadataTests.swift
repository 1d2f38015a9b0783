import Foundation
import ISOBMFF
import TestSupport
import XCTest

/// `probe` lists keys-based metadata by key name and decodes the iTunes number items, as
/// FFmpeg (ffprobe's format tags) and AtomicParsley read them (issue 11, point 15).
final class ProbeMetadataTests: XCTestCase {
    let directory = TemporaryDirectory()

    override func tearDown() {
        directory.remove()
    }

    /// `probe --json FILE`'s metadata items as key → text.
    func probedItems(_ path: String, file: StaticString = #filePath, line: UInt = #line) throws -> [String: String] {
        let outcome = try runCLI(["probe", "--json", path])
        XCTAssertEqual(outcome.status, 0, outcome.stderr, file: file, line: line)
        let json = try JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [String: Any]
        var items: [String: String] = [:]
        for item in json?["metadata"] as? [[String: Any]] ?? [] {
            if let key = item["key"] as? String { items[key] = item["text"] as? String ?? "" }
        }
        return items
    }

    /// ffprobe's format tags of `path`.
    func formatTags(_ path: String, file: StaticString = #filePath, line: UInt = #line) throws -> [String: String] {
        guard let run = try HostileMetadataTests.run("ffprobe", ["-v", "error", "-show_format", "-of", "json", path])
        else {
            XCTFail("ffprobe is not installed", file: file, line: line)
            return [:]
        }
        let json = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
        return (json?["format"] as? [String: Any])?["tags"] as? [String: String] ?? [:]
    }

    func testKeysMetadataIsListedByKeyName() throws {
        let path = fixture("meta-iphone.mov")
        let tags = try formatTags(path).filter { $0.key.hasPrefix("com.apple.quicktime.") }
        XCTAssertFalse(tags.isEmpty, "ffprobe sees no keys metadata in the fixture")
        let items = try probedItems(path).filter { $0.key.hasPrefix("com.apple.quicktime.") }
        XCTAssertEqual(items, tags)
    }

    func testNumberItemsAreDecodedAsFFmpegAndAtomicParsleyShowThem() throws {
        let path = fixture("meta-itunes.m4a")
        let tags = try formatTags(path)
        let items = try probedItems(path)
        XCTAssertEqual(items["trkn"], tags["track"])
        XCTAssertEqual(items["disk"], tags["disc"])
        XCTAssertEqual(items["cpil"], tags["compilation"] == "1" ? "true" : "false")
        // FFmpeg does not show tmpo; AtomicParsley does: 'Atom "tmpo" contains: 120'.
        guard let parsley = try HostileMetadataTests.run("AtomicParsley", [path, "-t"]) else {
            return XCTFail("AtomicParsley is not installed")
        }
        let line = parsley.stdout.split(separator: "\n").first { $0.contains("\"tmpo\"") }
        XCTAssertEqual(line?.components(separatedBy: "contains: ").last, items["tmpo"])
    }

    func testGenreNumberIsShownAsItsName() throws {
        for genre: UInt16 in [18, 53, 80] {
            var data = BoxWriter()
            data.box("data") { $0.write(UInt32(0)); $0.write(UInt32(0)); $0.write(genre) }
            var gnre = BoxWriter()
            gnre.box("gnre") { $0.write(bytes: data.bytes) }
            var udta = BoxWriter()
            udta.box("udta") { u in
                u.fullBox("meta", version: 0, flags: 0) { m in
                    HandlerBox(handlerType: "mdir", name: "").write(to: &m)
                    m.box("ilst") { $0.write(bytes: gnre.bytes) }
                }
            }
            var movie = SyntheticMovie()
            movie.extraMovieBoxes = [udta.bytes]
            let path = directory.write("gnre-\(genre).mp4", movie.build())
            let expected = try formatTags(path)["genre"]
            XCTAssertNotNil(expected, "ffprobe shows no genre for \(genre)")
            XCTAssertEqual(try probedItems(path)["gnre"], expected, "gnre \(genre)")
        }
    }
}
