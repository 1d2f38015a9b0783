@testable import ISOBMFF
import XCTest

/// ``ColourDescription``: the transfer function behind HLS's `VIDEO-RANGE`, from a `colr` box
/// or the VUI of an H.264/H.265 sequence parameter set; hostile parameter sets give nil, never
/// a trap.
///
/// The configuration records are FFmpeg 5.1's, written from a 320×240 `testsrc2` at 25 fps
/// with `-color_trc … -color_primaries bt2020 -colorspace bt2020nc`; ffprobe reads each
/// stream's `color_transfer` as the value asserted here (smpte2084: 16, arib-std-b67: 18).
final class ColourDescriptionTests: XCTestCase {
    /// `-c:v libx264 -pix_fmt yuv420p10le -color_trc smpte2084`: High 10 (profile 110, so the
    /// SPS has chroma_format_idc and bit depths before the VUI).
    static let high10PQ = bytes("016e000dffe1001d676e000da6cd94141fb016a12201280000030008000003019078a14cb001000668ebe3cb22c0fdfafa00")
    /// `-c:v libx264 -color_trc smpte2084` (High, 8 bits).
    static let highPQ = bytes("0164000dffe1001b6764000dacd94141fb016a122012800000030080000019078a14cb01000668ebe3cb22c0fdf8f800")
    /// `-c:v libx265 -tag:v hvc1 -color_trc arib-std-b67` (Main): the VPS, SPS and PPS arrays
    /// (x265's SEI array, its 1.5 kB of options, left out).
    static let mainHLG = bytes("0101600000009000000000003cf000fcfdf8f800000f03a00001001840010c01ffff016000000300900000"
                               + "03000003003c959809a10001002d42010101600000030090000003000003003ca00a080f165959a4932bc0"
                               + "5a848904820000030002000003003210a2000100074401c172b46240")
    /// The `colr` payload FFmpeg writes beside the PQ stream: nclx 9/16/9, full range 0.
    static let nclxPQ = bytes("6e636c7800090010000900")

    static func bytes(_ hex: String) -> [UInt8] {
        var result: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            result.append(UInt8(hex[index..<next], radix: 16) ?? 0)
            index = next
        }
        return result
    }

    func entry(_ type: FourCC, _ configuration: [UInt8], colr: [UInt8]? = nil) -> VisualSampleEntry {
        var entry = VisualSampleEntry(format: type == "hvcC" ? "hvc1" : "avc1", width: 320, height: 240,
                                      configuration: CodecConfigurationBox(type: type, payload: configuration))
        if let colr { entry.children.append(CodecConfigurationBox(type: "colr", payload: colr)) }
        return entry
    }

    func testSequenceParameterSetsGiveTheirTransfer() throws {
        let high10 = try XCTUnwrap(ColourDescription(avcConfiguration: Self.high10PQ[...]))
        XCTAssertEqual(high10, ColourDescription(colourPrimaries: 9, transferCharacteristics: 16,
                                                 matrixCoefficients: 9, origin: .sequenceParameterSet))
        XCTAssertEqual(high10.videoRange, "PQ")
        XCTAssertEqual(ColourDescription(avcConfiguration: Self.highPQ[...])?.transferCharacteristics, 16)
        let hevc = try XCTUnwrap(ColourDescription(hevcConfiguration: Self.mainHLG[...]))
        XCTAssertEqual(hevc, ColourDescription(colourPrimaries: 9, transferCharacteristics: 18,
                                               matrixCoefficients: 9, origin: .sequenceParameterSet))
        XCTAssertEqual(hevc.videoRange, "HLG")
        XCTAssertEqual(ColourDescription(entry: entry("hvcC", Self.mainHLG))?.videoRange, "HLG")
        XCTAssertEqual(ColourDescription(entry: entry("avcC", Self.highPQ))?.origin, .sequenceParameterSet)
    }

    func testColourBoxComesFirst() throws {
        XCTAssertEqual(ColourDescription(colourBox: Self.nclxPQ[...]),
                       ColourDescription(colourPrimaries: 9, transferCharacteristics: 16, matrixCoefficients: 9,
                                         origin: .colourBox))
        // A colr saying BT.709 over a PQ SPS: the box is what the container says, and wins.
        let sdr = Self.bytes("6e636c7800010001000100")
        XCTAssertEqual(ColourDescription(entry: entry("avcC", Self.highPQ, colr: sdr))?.videoRange, "SDR")
        // QuickTime's nclc (no range byte) counts; an ICC profile does not, so the SPS decides.
        XCTAssertEqual(ColourDescription(entry: entry("avcC", Self.highPQ, colr: Self.bytes("6e636c63000900120009")))?
            .videoRange, "HLG")
        XCTAssertEqual(ColourDescription(entry: entry("avcC", Self.highPQ, colr: Self.bytes("72494343") + [1, 2, 3, 4]))?
            .origin, .sequenceParameterSet)
        // vpcC version 1: primaries, transfer, matrix at bytes 7…9.
        var vp9 = VisualSampleEntry(format: "vp09", width: 320, height: 240,
                                    configuration: CodecConfigurationBox(type: "vpcC",
                                                                         payload: [1, 0, 0, 0, 2, 31, 0xA0, 9, 18, 9, 0, 0]))
        XCTAssertEqual(ColourDescription(entry: vp9)?.videoRange, "HLG")
        vp9.children = []
        XCTAssertNil(ColourDescription(entry: vp9))
    }

    /// Every truncation and thousands of single-byte changes of the three records parse to a
    /// description or nil; runs of zero bits (an Exp-Golomb code with no end) give nil.
    func testHostileParameterSetsNeverTrap() {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func random() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        var parsed = 0
        for (type, record) in [("avcC", Self.high10PQ), ("avcC", Self.highPQ), ("hvcC", Self.mainHLG)] {
            func parse(_ bytes: [UInt8]) {
                let result = type == "avcC" ? ColourDescription(avcConfiguration: bytes[...])
                    : ColourDescription(hevcConfiguration: bytes[...])
                if result != nil { parsed += 1 }
            }
            for length in 0...record.count { parse(Array(record.prefix(length))) }
            for _ in 0..<3000 {
                var changed = record
                for _ in 0..<(1 + Int(random() % 3)) {
                    changed[Int(random() % UInt64(changed.count))] = UInt8(truncatingIfNeeded: random())
                }
                parse(changed)
            }
            var zeros = record
            for index in (type == "avcC" ? 9 : 30)..<zeros.count { zeros[index] = 0 }
            parse(zeros)
            var ones = record
            for index in (type == "avcC" ? 9 : 30)..<ones.count { ones[index] = 0xFF }
            parse(ones)
        }
        XCTAssertGreaterThan(parsed, 3, "the unchanged records and some changes still parse")
        XCTAssertNil(ColourDescription(avcConfiguration: [1, 0x64, 0, 0x0D, 0xFF, 0xE1, 0, 4, 0x67, 0, 0, 0][...]))
        var reader = BitReader([0, 0, 0, 0, 0, 0, 0, 0][...])
        XCTAssertNil(reader.unsignedExpGolomb())
        var signed = BitReader([0b0011_0000][...])  // 00110: code 5 → +3
        XCTAssertEqual(signed.signedExpGolomb(), 3)
        var negative = BitReader([0b0010_1000][...])  // 00101: code 4 → −2
        XCTAssertEqual(negative.signedExpGolomb(), -2)
    }
}
