import ISOBMFF
import XCTest

/// Bytes from hex text. Spaces are ignored, and `|` starts a comment that runs to the end
/// of the line.
public func hexBytes(_ text: String) -> [UInt8] {
    let data = text.split(separator: "\n", omittingEmptySubsequences: false)
        .map { line in line.split(separator: "|", maxSplits: 1, omittingEmptySubsequences: false).first ?? "" }
        .joined()
    let digits = data.filter { $0.isHexDigit }
    precondition(digits.count % 2 == 0, "odd number of hex digits")
    var result: [UInt8] = []
    var index = digits.startIndex
    while index < digits.endIndex {
        let next = digits.index(index, offsetBy: 2)
        result.append(UInt8(digits[index..<next], radix: 16)!)
        index = next
    }
    return result
}

/// Parses a whole box (header included) from `bytes` with `parse`.
public func parseBox<T>(_ bytes: [UInt8], _ parse: (inout ByteReader) throws -> T,
                 file: StaticString = #filePath, line: UInt = #line) throws -> T {
    var reader = ByteReader(bytes)
    guard let (_, payload) = try reader.readBox(depth: 1) else {
        XCTFail("no box", file: file, line: line)
        throw ISOBMFFError(.truncated, "no box", path: "", offset: 0)
    }
    var body = payload
    let value = try parse(&body)
    XCTAssertEqual(body.remaining, 0, "parser left bytes unread", file: file, line: line)
    return value
}

/// Asserts that `body` throws an ``ISOBMFFError`` with `code`.
public func assertThrows<T>(_ code: ISOBMFFError.Code, _ body: @autoclosure () throws -> T,
                     file: StaticString = #filePath, line: UInt = #line) {
    do {
        _ = try body()
        XCTFail("expected \(code), nothing was thrown", file: file, line: line)
    } catch let error as ISOBMFFError {
        XCTAssertEqual(error.code, code, "\(error)", file: file, line: line)
    } catch {
        XCTFail("expected ISOBMFFError \(code), got \(error)", file: file, line: line)
    }
}

/// Thrown when a test needs an oracle tool (ffprobe, GStreamer, /usr/bin/time, mutagen) that
/// is not installed and oracles are required (``oraclesRequired``): the test fails. Use
/// ``missingOracle(_:)`` to throw: elsewhere it is a skip that says which tool is missing,
/// so that `swift test` passes on any machine with Swift, and a skipped check is never a pass.
public struct MissingOracle: Error, CustomStringConvertible {
    public let tool: String
    public init(_ tool: String) { self.tool = tool }
    public var description: String { "\(tool) is not installed; the test needs it as an oracle (.ci/run installs it)" }
}

/// Whether a missing oracle fails a test (CI=true, as `.ci/run` runs, or REQUIRE_ORACLES=1)
/// rather than skipping it.
public let oraclesRequired: Bool = {
    let environment = ProcessInfo.processInfo.environment
    return ["true", "1"].contains(environment["CI"]?.lowercased() ?? "") || environment["REQUIRE_ORACLES"] == "1"
}()

/// The error for a missing oracle: ``MissingOracle`` when oracles are required, else an
/// `XCTSkip` naming the tool.
public func missingOracle(_ tool: String) -> Error {
    oraclesRequired ? MissingOracle(tool) : XCTSkip("\(tool) is not installed: this test needs it as an oracle")
}

/// Where the oracle `tool` is installed (/usr/bin, /usr/local/bin, /opt/homebrew/bin), else
/// ``missingOracle(_:)``.
public func oraclePath(_ tool: String) throws -> String {
    let folders = ["/usr/bin", "/usr/local/bin", "/opt/homebrew/bin"]
    guard let path = folders.map({ $0 + "/" + tool }).first(where: FileManager.default.isExecutableFile(atPath:)) else {
        throw missingOracle(tool)
    }
    return path
}

/// Throws ``missingOracle(_:)`` for the first of `tools` that is not installed ("mutagen":
/// the Python module, for /usr/bin/python3). For a test class's `setUpWithError`: a skip
/// thrown inside an assertion's autoclosure is reported as a failure, so a class whose
/// assertions call oracles asks for them first.
public func requireOracles(_ tools: [String]) throws {
    for tool in tools {
        if tool == "mutagen" {
            guard mutagenImports else { throw missingOracle("mutagen (for /usr/bin/python3)") }
        } else {
            _ = try oraclePath(tool)
        }
    }
}

/// Whether /usr/bin/python3 can import mutagen (asked once).
let mutagenImports: Bool = {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    process.arguments = ["-c", "import mutagen"]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    guard (try? process.run()) != nil else { return false }
    process.waitUntilExit()
    return process.terminationStatus == 0
}()

/// What an oracle tool printed and how it ended.
public struct OracleRun: Sendable {
    public let status: Int32
    public let stdout: String
    public let stderr: String
}

/// Runs the oracle `tool` (ffprobe, ffmpeg, gst-launch-1.0, …) found on the usual paths,
/// under a 120 s timeout; a missing tool (or, for a python3 script that uses it, mutagen)
/// throws ``missingOracle(_:)``: a failure under CI, a skip elsewhere.
public func runTool(_ tool: String, _ arguments: [String]) throws -> OracleRun {
    let path = try oraclePath(tool)
    if tool == "python3", arguments.contains(where: { $0.contains("mutagen") }), !mutagenImports {
        throw missingOracle("mutagen (for /usr/bin/python3)")
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
    process.arguments = ["-k", "5", "120", path] + arguments
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    // Read both pipes at once: a tool that fills one while we wait on the other would block.
    nonisolated(unsafe) var errorBytes = Data()
    let reader = Thread { errorBytes = err.fileHandleForReading.readDataToEndOfFile() }
    reader.start()
    let outputBytes = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    while !reader.isFinished { usleep(1000) }
    return OracleRun(status: process.terminationStatus, stdout: String(decoding: outputBytes, as: UTF8.self),
                     stderr: String(decoding: errorBytes, as: UTF8.self))
}

/// ffprobe's packets of every stream but the data streams (chapter tracks, which a chapter
/// edit replaces), one line each (stream, pts, dts, duration, size, flags, CRC32 of the
/// bytes), the stream named by its place among those streams: a chapter track added or
/// dropped moves the stream numbers FFmpeg gives the cover images after it, not their order.
public func mediaPackets(_ path: String) throws -> [String] {
    let streams = try runTool("ffprobe", ["-v", "error", "-show_entries", "stream=index,codec_type", "-of", "csv=p=0",
                                          path]).stdout
    var ordinal: [String: String] = [:]
    for line in streams.split(separator: "\n") {
        let fields = line.split(separator: ",")
        if fields.count == 2 && fields[1] != "data" { ordinal[String(fields[0])] = "#\(ordinal.count)" }
    }
    let run = try runTool("ffprobe", ["-v", "error", "-show_packets", "-show_data_hash", "CRC32", "-show_entries",
                                      "packet=stream_index,pts,dts,duration,size,flags,data_hash", "-of", "csv=p=0",
                                      path])
    guard run.status == 0, !ordinal.isEmpty else { return ["ffprobe failed: \(run.stderr)"] }
    return run.stdout.split(separator: "\n").compactMap { line in
        let fields = line.split(separator: ",", maxSplits: 1)
        guard let stream = ordinal[String(fields.first ?? "")] else { return nil }
        return stream + "," + (fields.count > 1 ? String(fields[1]) : "")
    }
}
