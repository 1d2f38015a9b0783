import Foundation

/// A fresh directory under the system's temporary directory, removed with its contents
/// when the value is released.
public final class TemporaryDirectory {
    public let path: String

    public init() {
        let template = NSTemporaryDirectory() + "extract-audio-tests.XXXXXX"
        var bytes = Array(template.utf8CString)
        path = bytes.withUnsafeMutableBufferPointer { buffer in
            String(cString: mkdtemp(buffer.baseAddress!)!)
        }
    }

    deinit {
        remove()
    }

    /// Removes the directory now. XCTest keeps test case instances alive until the run
    /// ends, so test classes call this from `tearDown`.
    public func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }

    public func file(_ name: String) -> String { path + "/" + name }

    /// The names in the directory, sorted.
    public var contents: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
    }

    @discardableResult
    public func write(_ name: String, _ bytes: [UInt8]) -> String {
        let path = file(name)
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        return path
    }
}

public func readFile(_ path: String) -> [UInt8] {
    guard let data = FileManager.default.contents(atPath: path) else { return [] }
    return [UInt8](data)
}

/// The repository's `Fixtures/` folder, found from this source file's path (SwiftPM
/// resources would pull Foundation into the library targets).
public let fixturesDirectory: String = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<3 { url.deleteLastPathComponent() }
    return url.appendingPathComponent("Fixtures").path
}()

public func fixture(_ name: String) -> String { fixturesDirectory + "/" + name }

/// The user documentation as one text: README.md, then every `docs/*.md` by name. Tests
/// that check what the documentation promises (option tables, `--json` fields, tag keys)
/// read it here, wherever in it a section lives.
public let documentationText: String = {
    let root = URL(fileURLWithPath: fixturesDirectory).deletingLastPathComponent()
    let docs = root.appendingPathComponent("docs")
    let pages = ((try? FileManager.default.contentsOfDirectory(atPath: docs.path)) ?? [])
        .filter { $0.hasSuffix(".md") }.sorted().map { docs.appendingPathComponent($0) }
    return ([root.appendingPathComponent("README.md")] + pages)
        .map { (try? String(contentsOf: $0, encoding: .utf8)) ?? "" }.joined(separator: "\n")
}()

/// CRC-32 as zlib computes it (IEEE 802.3, reflected, initial and final XOR 0xFFFFFFFF):
/// what ffprobe's `-show_data_hash CRC32` prints.
public func crc32(_ bytes: some Collection<UInt8>) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in bytes {
        crc = crc32Table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8)
    }
    return crc ^ 0xFFFF_FFFF
}

private let crc32Table: [UInt32] = (0..<256).map { n in
    var c = UInt32(n)
    for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
    return c
}
