import ISOBMFF
import TestSupport
import XCTest

/// What the sanitizer keeps byte for byte (the readers' view of what it drops is checked in
/// HostileMetadataTests, with ffprobe and GStreamer).
final class CopiedBoxSanitizerTests: XCTestCase {
    func box(_ type: FourCC, _ body: [UInt8]) -> [UInt8] {
        var w = BoxWriter()
        w.box(type) { $0.write(bytes: body) }
        return w.bytes
    }

    /// QuickTime ends user data lists with a 32-bit zero: it is kept, without a warning.
    func testUserDataTerminatorIsKept() {
        let udta = box("udta", box("name", Array("a name".utf8)) + [0, 0, 0, 0])
        let result = CopiedBoxSanitizer.sanitize(udta, depth: 2, parentPath: "moov")
        XCTAssertEqual(result.bytes, udta)
        XCTAssertEqual(result.warnings, [])
    }

    func testSizeZeroChildGetsItsRealSize() {
        let udta = box("udta", box("name", Array("x".utf8)) + hexBytes("00000000 6e616d65 41 42"))
        let result = CopiedBoxSanitizer.sanitize(udta, depth: 2, parentPath: "moov")
        XCTAssertEqual(result.bytes, box("udta", box("name", Array("x".utf8)) + box("name", [0x41, 0x42])))
    }

    func testDeepChainIsCutAtTheLimitWithoutRecursingThroughIt() {
        var chain = box("udta", [])
        for _ in 0..<50_000 { chain = box("udta", chain) }
        let result = CopiedBoxSanitizer.sanitize(chain, depth: 2, parentPath: "moov")
        var expected = box("udta", [])
        for _ in 0..<(Limits.maximumCopiedDepth - 2) { expected = box("udta", expected) }
        XCTAssertEqual(result.bytes, expected)
        XCTAssertEqual(result.warnings.count, 1)
    }
}
