import AudioRemux
import ISOBMFF
import TestSupport
import XCTest

/// ``Packager``'s library form: progress up to the total, cancellation leaving nothing.
final class PackagerTests: XCTestCase {
    var directory: TemporaryDirectory!

    override func setUp() {
        directory = TemporaryDirectory()
    }

    override func tearDown() {
        directory.remove()
    }

    /// An AAC track of 2000 packets (46 s at 44.1 kHz) in 2 s segments.
    func input() -> String {
        var movie = SyntheticMovie(sampleCount: 2000)
        movie.editList = nil
        return directory.write("in.m4a", movie.build())
    }

    func testProgressReachesTheTotalAndTheFolderAppearsWhole() throws {
        var options = PackageOptions()
        options.segmentSeconds = 2
        var reports: [RemuxProgress] = []
        let result = try Packager.run(from: input(), to: directory.file("out"), options: options,
                                      progress: { reports.append($0) })
        XCTAssertEqual(result.tracks.map(\.codecs), ["mp4a.40.2"])
        XCTAssertEqual(result.tracks.first?.sampleCount, 2000)
        XCTAssertEqual(result.tracks.first?.segmentCount, reports.count, "one report per segment")
        XCTAssertEqual(reports.map(\.bytesDone), reports.map(\.bytesDone).sorted())
        XCTAssertEqual(reports.last?.bytesDone, reports.last?.bytesTotal)
        // 2000 samples of 100 + i bytes.
        XCTAssertEqual(reports.last?.bytesTotal, UInt64((0..<2000).reduce(0) { $0 + 100 + $1 }))
        XCTAssertEqual(directory.contents, ["in.m4a", "out"])
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.file("out"))
        XCTAssertEqual(names.count, result.fileCount)
    }

    func testCancellingLeavesNothingBehind() throws {
        var segments = 0
        XCTAssertThrowsError(try Packager.run(from: input(), to: directory.file("out"), progress: { _ in segments += 1 },
                                              isCancelled: { segments >= 2 })) { error in
            XCTAssertEqual((error as? RemuxError)?.code, .cancelled)
        }
        XCTAssertEqual(segments, 2)
        XCTAssertEqual(directory.contents, ["in.m4a"], "no folder, no temporary folder")
    }
}
