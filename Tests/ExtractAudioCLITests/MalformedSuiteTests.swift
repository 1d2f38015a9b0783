import Foundation
import ISOBMFF
import TestSupport
import XCTest

/// Crafted malformed inputs, each run through the tool: the specific error (code and the
/// parser's reason), exit status 65 (or the one named), no output and no temporary file,
/// and a peak memory under 64 MiB — the tool's own `VmHWM`, which `--json` reports — even
/// when a table claims billions of entries. (`wait4`'s `ru_maxrss` cannot be used: Linux
/// carries the spawning test process's peak into the child's across `exec`.)
final class MalformedSuiteTests: XCTestCase {
    let directory = TemporaryDirectory()

    override func tearDown() {
        directory.remove()
    }

    struct Case {
        var name: String
        var bytes: [UInt8]
        var code: String
        var reason: String?
        var status: Int32 = 65
    }

    // MARK: Building blocks

    static let good = SyntheticMovie().build()
    static let ftyp = FileTypeBox(majorBrand: .isom, minorVersion: 0, compatibleBrands: [.isom]).serialized

    /// The offset of the `n`-th box of `type` (its size field) in `bytes`.
    static func box(_ type: String, in bytes: [UInt8], occurrence: Int = 0) -> Int {
        let needle = Array(type.utf8)
        var found = -1
        for i in 4...(bytes.count - 4) where bytes[i..<(i + 4)].elementsEqual(needle) {
            found += 1
            if found == occurrence { return i - 4 }
        }
        preconditionFailure("no \(type) box")
    }

    static func patched(_ bytes: [UInt8] = good, _ type: String, at field: Int, _ value: UInt32,
                        occurrence: Int = 0) -> [UInt8] {
        var copy = bytes
        let i = box(type, in: bytes, occurrence: occurrence) + field
        copy.replaceSubrange(i..<(i + 4), with: [UInt8(value >> 24), UInt8(value >> 16 & 0xFF),
                                                 UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)])
        return copy
    }

    static func with(_ change: (inout SyntheticMovie) -> Void) -> [UInt8] {
        var synthetic = SyntheticMovie()
        change(&synthetic)
        return synthetic.build()
    }

    static func rawBox(_ type: FourCC, _ body: [UInt8]) -> [UInt8] {
        var w = BoxWriter()
        w.box(type) { $0.write(bytes: body) }
        return w.bytes
    }

    /// The `moov` box of the good movie.
    static var movieBox: [UInt8] {
        let start = box("moov", in: good)
        let size = Int(good[start]) << 24 | Int(good[start + 1]) << 16 | Int(good[start + 2]) << 8 | Int(good[start + 3])
        return Array(good[start..<(start + size)])
    }

    // Field offsets within a full box: size(4) type(4) version+flags(4), then the count.
    static let countField = 12

    static let cases: [Case] = [
        // Box headers.
        Case(name: "size-below-header", bytes: ftyp + [0, 0, 0, 4] + Array("free".utf8) + movieBox,
             code: "invalidInput", reason: "invalidBoxSize"),
        Case(name: "size-seven", bytes: ftyp + [0, 0, 0, 7] + Array("free".utf8) + movieBox,
             code: "invalidInput", reason: "invalidBoxSize"),
        Case(name: "largesize-below-16", bytes: ftyp + hexBytes("00000001 66726565 0000000000000008") + movieBox,
             code: "invalidInput", reason: "invalidBoxSize"),
        Case(name: "largesize-near-uint64-max", bytes: ftyp + hexBytes("00000001 6d6f6f76 fffffffffffffff0 00000000"),
             code: "invalidInput", reason: "invalidBoxSize"),
        Case(name: "size-loop-wrapping-the-offset", bytes: ftyp + hexBytes("00000001 66726565 fffffffffffffff0") + movieBox,
             code: "invalidInput", reason: "invalidBoxSize"),
        Case(name: "box-past-end-of-file-before-moov", bytes: ftyp + hexBytes("00100000 6d646174 0000"),
             code: "truncatedInput", reason: "endOfFile"),
        Case(name: "child-past-parent", bytes: patched(good, "stts", at: 0, 0x1000), code: "invalidInput",
             reason: "boxOutsideParent"),
        Case(name: "trak-past-moov", bytes: patched(good, "trak", at: 0, 0x10_0000), code: "invalidInput",
             reason: "boxOutsideParent"),
        Case(name: "size-zero-box-in-the-middle", bytes: patched(good, "tkhd", at: 0, 0), code: "invalidInput",
             reason: "missingBox"),
        Case(name: "size-zero-top-level-box-before-moov",
             bytes: ftyp + hexBytes("00000000 66726565") + movieBox, code: "invalidInput", reason: "missingBox"),
        // Metadata nested too deep or lying about its size is dropped with a warning, not
        // refused: HostileMetadataTests.
        // Structure.
        Case(name: "moov-inside-moov", bytes: ftyp + rawBox(.moov, movieBox), code: "invalidInput",
             reason: "duplicateBox"),
        // A second moov is not refused: the first is read, with a warning (see
        // testSecondMovieBoxIsIgnoredWithAWarning), as FFmpeg does.
        Case(name: "duplicated-trak-id", bytes: with { movie in
            let trak = box("trak", in: movieBox)
            let size = Int(movieBox[trak + 2]) << 8 | Int(movieBox[trak + 3])
            movie.extraMovieBoxes = [Array(movieBox[trak..<(trak + size)])]
        }, code: "invalidInput", reason: "duplicateBox"),
        Case(name: "duplicated-stbl-table", bytes: with {
            $0.extraSampleTableBoxes = [SampleSizeBox(sizes: [1]).serialized]
        }, code: "invalidInput", reason: "duplicateBox"),
        Case(name: "duplicated-tkhd", bytes: with { movie in
            let tkhd = box("tkhd", in: movieBox)
            movie.extraTrackBoxes = [Array(movieBox[tkhd..<(tkhd + 92)])]
        }, code: "invalidInput", reason: "duplicateBox"),
        Case(name: "missing-mvhd", bytes: patched(good, "mvhd", at: 4, 0x6672_6565), code: "invalidInput",
             reason: "missingBox"),
        Case(name: "missing-mdhd", bytes: patched(good, "mdhd", at: 4, 0x6672_6565), code: "invalidInput",
             reason: "missingBox"),
        Case(name: "missing-hdlr", bytes: patched(good, "hdlr", at: 4, 0x6672_6565), code: "invalidInput",
             reason: "missingBox"),
        Case(name: "missing-stsd", bytes: patched(good, "stsd", at: 4, 0x6672_6565), code: "invalidInput",
             reason: "missingBox"),
        Case(name: "missing-stsz", bytes: patched(good, "stsz", at: 4, 0x6672_6565), code: "invalidInput",
             reason: "missingBox"),
        Case(name: "missing-stco", bytes: patched(good, "stco", at: 4, 0x6672_6565), code: "invalidInput",
             reason: "missingBox"),
        Case(name: "no-moov-at-all", bytes: ftyp + rawBox(.free, [1, 2, 3]), code: "invalidInput", reason: "missingBox"),
        // Counts far beyond their box.
        Case(name: "stsz-count-billions", bytes: patched(good, "stsz", at: 16, 0xFFFF_FFF0), code: "invalidInput",
             reason: "countExceedsBox"),
        Case(name: "stts-count-billions", bytes: patched(good, "stts", at: countField, 0x7FFF_FFFF),
             code: "invalidInput", reason: "countExceedsBox"),
        Case(name: "stsc-count-billions", bytes: patched(good, "stsc", at: countField, 0xFFFF_FFFF),
             code: "invalidInput", reason: "countExceedsBox"),
        Case(name: "stco-count-billions", bytes: patched(good, "stco", at: countField, 0x4000_0000),
             code: "invalidInput", reason: "countExceedsBox"),
        Case(name: "co64-count-billions", bytes: patched(with { $0.useLargeChunkOffsets = true }, "co64",
                                                         at: countField, 0x2000_0000),
             code: "invalidInput", reason: "countExceedsBox"),
        Case(name: "ctts-count-billions", bytes: with { movie in
            var ctts = CompositionOffsetBox(version: 0, entries: [.init(sampleCount: 10, sampleOffset: 0)]).serialized
            ctts.replaceSubrange(12..<16, with: [0x7F, 0xFF, 0xFF, 0xFF])
            movie.extraSampleTableBoxes = [ctts]
        }, code: "invalidInput", reason: "countExceedsBox"),
        Case(name: "elst-count-billions", bytes: patched(good, "elst", at: countField, 0x1000_0000),
             code: "invalidInput", reason: "countExceedsBox"),
        Case(name: "sgpd-count-billions", bytes: with { movie in
            var sgpd = SampleGroupDescriptionBox.aacRoll.serialized
            sgpd.replaceSubrange(20..<24, with: [0xFF, 0xFF, 0xFF, 0xFF])
            movie.extraSampleTableBoxes = [sgpd]
        }, code: "invalidInput", reason: "countExceedsBox"),
        Case(name: "sbgp-count-billions", bytes: with { movie in
            var sbgp = SampleToGroupBox(groupingType: .roll, entries: [.init(sampleCount: 10, groupDescriptionIndex: 1)])
                .serialized
            sbgp.replaceSubrange(16..<20, with: [0xFF, 0xFF, 0xFF, 0xFF])
            movie.extraSampleTableBoxes = [sbgp]
        }, code: "invalidInput", reason: "countExceedsBox"),
        Case(name: "stss-count-billions", bytes: with { movie in
            var stss = SyncSampleBox(sampleNumbers: [1]).serialized
            stss.replaceSubrange(12..<16, with: [0xFF, 0xFF, 0xFF, 0xFF])
            movie.extraSampleTableBoxes = [stss]
        }, code: "invalidInput", reason: "countExceedsBox"),
        Case(name: "stsd-count-billions", bytes: patched(good, "stsd", at: countField, 0xFFFF_FFFF),
             code: "invalidInput", reason: "countExceedsBox"),
        Case(name: "dref-count-billions", bytes: patched(good, "dref", at: countField, 0xFFFF_FFFF),
             code: "invalidInput", reason: "countExceedsBox"),
        // Tables that contradict each other or the file.
        Case(name: "zero-length-sample", bytes: with { $0.sampleSizes[3] = 0 }, code: "invalidInput",
             reason: "invalidSampleTable"),
        Case(name: "samples-overlapping-moov", bytes: with {
            $0.absoluteChunkOffsets = true
            $0.chunkOffsets[0] = 40
        }, code: "invalidInput", reason: "invalidSampleTable"),
        Case(name: "samples-beyond-end-of-file", bytes: with { $0.chunkOffsets[4] = 0x7FFF_0000 },
             code: "invalidInput", reason: "invalidSampleTable"),
        Case(name: "chunk-offset-overflowing", bytes: with {
            $0.useLargeChunkOffsets = true
            $0.absoluteChunkOffsets = true
            $0.chunkOffsets[2] = UInt64.max - 50
        }, code: "invalidInput", reason: "invalidSampleTable"),
        Case(name: "stsc-first-chunk-zero", bytes: with { $0.sampleToChunk.entries[0].firstChunk = 0 },
             code: "invalidInput", reason: "invalidSampleTable"),
        Case(name: "stsc-not-increasing", bytes: with {
            $0.sampleToChunk.entries.append(.init(firstChunk: 1, samplesPerChunk: 2, sampleDescriptionIndex: 1))
        }, code: "invalidInput", reason: "invalidSampleTable"),
        Case(name: "stsc-chunk-that-does-not-exist", bytes: with {
            $0.sampleToChunk.entries.append(.init(firstChunk: 99, samplesPerChunk: 1, sampleDescriptionIndex: 1))
        }, code: "invalidInput", reason: "invalidSampleTable"),
        Case(name: "stsc-description-that-does-not-exist", bytes: with {
            $0.sampleToChunk.entries[0].sampleDescriptionIndex = 7
        }, code: "invalidInput", reason: "invalidSampleTable"),
        Case(name: "stts-and-stsz-disagree", bytes: with { $0.timeToSample.entries[0].sampleCount = 11 },
             code: "invalidInput", reason: "invalidSampleTable"),
        Case(name: "durations-claiming-past-2^64", bytes: with {
            $0.timeToSample = TimeToSampleBox(entries: [.init(sampleCount: .max, sampleDelta: .max),
                                                        .init(sampleCount: .max, sampleDelta: .max)])
        }, code: "invalidInput", reason: "invalidSampleTable"),
        Case(name: "stsc-claiming-billions-of-samples", bytes: with {
            $0.sampleToChunk.entries[0].samplesPerChunk = 0xFFFF_FFFF
        }, code: "invalidInput", reason: "invalidSampleTable"),
        // Codec configuration and metadata.
        Case(name: "esds-lying-descriptor-length", bytes: with { movie in
            var esds = SyntheticMovie.esds(objectType: 0x40, config: [0x12, 0x10])
            esds[13] = 0x7F  // ES_Descriptor length: far more than the box holds
            movie.sampleEntries = [AudioSampleEntry.isoEntry(format: .mp4a, channelCount: 2, sampleRate: 44100,
                                                             children: [esds])]
        }, code: "invalidInput", reason: "invalidValue"),
        // An esds without a DecoderConfigDescriptor is no longer refused: FFmpeg decodes it as
        // AAC-LC with the sample entry's rate and channels, and so does extraction now, with a
        // warning (CopiedEntryCodecTests). One whose DecoderConfigDescriptor claims more bytes
        // than its ES_Descriptor holds still is.
        Case(name: "esds-decoder-config-past-its-descriptor", bytes: with { movie in
            var w = BoxWriter()
            w.fullBox(.esds, version: 0, flags: 0) {
                $0.write(bytes: [0x03, 0x08, 0x00, 0x01, 0x00, 0x04, 0x0D, 0x40, 0x15, 0x00])
            }
            movie.sampleEntries = [AudioSampleEntry.isoEntry(format: .mp4a, channelCount: 2, sampleRate: 44100,
                                                             children: [w.bytes])]
        }, code: "invalidInput", reason: "invalidValue"),
        Case(name: "sample-entry-too-short", bytes: with { $0.sampleEntries = [rawBox(.mp4a, [0, 0, 0, 0, 0, 0, 0, 1])] },
             code: "invalidInput", reason: "truncated"),
        Case(name: "unknown-elst-version", bytes: patched(good, "elst", at: 8, 0x0500_0000), code: "invalidInput",
             reason: "unsupportedVersion"),
        Case(name: "stz2-bad-field-size", bytes: with { movie in
            var stz2 = BoxWriter()
            stz2.fullBox(.stz2, version: 0, flags: 0) { $0.write(UInt32(7)); $0.write(UInt32(10)) }
            var stbl = BoxWriter()
            stbl.box(.stbl) { b in
                SampleDescriptionBox(entries: [.init(format: .mp4a, bytes: SyntheticMovie.aacEntry)]).write(to: &b)
                movie.timeToSample.write(to: &b)
                movie.sampleToChunk.write(to: &b)
                b.write(bytes: stz2.bytes)
                ChunkOffsetBox(offsets: [0]).write(to: &b)
            }
            movie.replaceSampleTable = stbl.bytes
        }, code: "invalidInput", reason: "invalidValue"),
        Case(name: "fragment-run-claiming-billions", bytes: {
            var synthetic = SyntheticFragmentedMovie(fragments: [
                .init(runs: [.init(samples: [.init(size: 0, duration: 1)], perSampleFields: false)]),
            ])
            synthetic.trexDefaults = (1, 0)
            return patched(synthetic.build(), "trun", at: 12, 0xFFFF_FFF0)
        }(), code: "invalidInput", reason: "limitExceeded"),
        Case(name: "not-an-mp4", bytes: [UInt8](repeating: 0xAB, count: 4096), code: "invalidInput",
             reason: "invalidValue"),
    ]

    /// A second `moov` after a good file: FFmpeg reads the first ("Found duplicated MOOV
    /// Atom. Skipped it"); so does extraction, and says so in a warning.
    func testSecondMovieBoxIsIgnoredWithAWarning() throws {
        let input = directory.write("duplicated-moov.mp4", Self.good + Self.movieBox)
        let outcome = try runCLI(["--json", input, directory.file("duplicated-moov.m4a")])
        XCTAssertEqual(outcome.status, 0, outcome.stdout)
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [String: Any])
        let warnings = json["warnings"] as? [String] ?? []
        XCTAssertTrue(warnings.contains { $0.contains("a second moov box, ignored") }, "\(warnings)")
    }

    // MARK: Running

    func testEveryMalformedInputGivesItsOwnErrorAndLeavesNothing() throws {
        XCTAssertGreaterThanOrEqual(Self.cases.count, 40)
        var names = Set<String>()
        for item in Self.cases {
            XCTAssertTrue(names.insert(item.name).inserted, "duplicate case \(item.name)")
            let input = directory.write(item.name + ".mp4", item.bytes)
            let output = directory.file(item.name + ".m4a")
            let outcome = try runCLI(["--json", input, output])
            XCTAssertEqual(outcome.reason, .exit, "\(item.name) ended by a signal")
            XCTAssertEqual(outcome.status, item.status, "\(item.name): \(outcome.stdout)")
            let json = try? JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [String: Any]
            let error = json?["error"] as? [String: Any]
            XCTAssertEqual(error?["code"] as? String, item.code, "\(item.name): \(outcome.stdout)")
            XCTAssertEqual(error?["reason"] as? String, item.reason, "\(item.name): \(outcome.stdout)")
            let peak = json?["peak_memory_kib"] as? Int ?? 0
            XCTAssertGreaterThan(peak, 1024, "\(item.name): no plausible peak memory reported")
            XCTAssertLessThan(peak, 64 * 1024, "\(item.name) peaked at \(peak) KiB")
            XCTAssertFalse(FileManager.default.fileExists(atPath: output), "\(item.name) left its output")
            XCTAssertEqual(directory.contents.filter { $0.contains(".extract-audio-") }, [], item.name)
            try FileManager.default.removeItem(atPath: input)
        }
    }
}
