import ISOBMFF
import TestSupport
import XCTest

/// Malformed headers and tables, each giving its own specific error and never a trap.
final class MalformedInputTests: XCTestCase {
    let ftyp = FileTypeBox(majorBrand: .isom, minorVersion: 0, compatibleBrands: []).serialized

    func movie(_ bytes: [UInt8]) throws -> Movie {
        try Movie(reading: MemoryByteSource(bytes))
    }

    func table(_ synthetic: SyntheticMovie) throws -> SampleTable {
        let bytes = synthetic.build()
        let movie = try movie(bytes)
        return try SampleTable(boxes: movie.tracks[0].sampleTable(), fileLength: UInt64(bytes.count),
                               excluding: [movie.movieBoxRange])
    }

    func testValidSyntheticMovieParses() throws {
        let table = try table(SyntheticMovie())
        XCTAssertEqual(table.sampleCount, 10)
        XCTAssertEqual(table.totalSampleBytes, UInt64((100..<110).reduce(0, +)))
    }

    // MARK: Box headers

    func testSizeBelowHeaderLength() {
        assertThrows(.invalidBoxSize, try self.movie(ftyp + hexBytes("00000004 66726565")))
        assertThrows(.invalidBoxSize, try self.movie(ftyp + hexBytes("00000001 66726565 0000000000000008")))
    }

    func testSizePastTheFileIsTruncation() {
        assertThrows(.endOfFile, try self.movie(ftyp + hexBytes("00001000 6d646174 00000000")))
    }

    func testChildPastItsParent() {
        var moov = BoxWriter()
        moov.box(.moov) { $0.write(bytes: hexBytes("00000100 6d766864 00000000")) }
        assertThrows(.boxOutsideParent, try self.movie(ftyp + moov.bytes))
    }

    func testLargeSizeOverflowingOffset() {
        assertThrows(.invalidBoxSize,
                     try self.movie(ftyp + hexBytes("00000001 6d6f6f76 fffffffffffffff0 00000000")))
    }

    func testTruncatedHeader() {
        var short = ByteReader(hexBytes("000000"))
        assertThrows(.truncated, try short.readBox(depth: 1).map { $0.header })
        var reader = ByteReader(hexBytes("00000001 66726565 0000"))
        assertThrows(.truncated, try reader.readBox(depth: 1).map { $0.header })
    }

    func testNestingDeeperThanTheLimit() throws {
        var bytes: [UInt8] = []
        for _ in 0...(Limits.maximumDepth + 1) {
            var w = BoxWriter()
            w.box(.trak) { $0.write(bytes: bytes) }
            bytes = w.bytes
        }
        assertThrows(.nestingTooDeep, try BoxWalker.walk(MemoryByteSource(bytes)) { _, _ in })
        var depth = 0
        try BoxWalker.walk(MemoryByteSource(Array(bytes[8...]))) { _, d in depth = max(depth, d) }
        XCTAssertEqual(depth, Limits.maximumDepth)
    }

    func testSizeZeroRunsToTheEndOfTheParent() throws {
        var reader = ByteReader(hexBytes("00000000 66726565 01020304"))
        let box = try XCTUnwrap(try reader.readBox(depth: 1))
        XCTAssertTrue(box.header.extendsToEnd)
        XCTAssertEqual(box.header.size, 12)
        XCTAssertEqual(box.payload.remaining, 4)
    }

    func testUUIDBoxHeader() throws {
        var reader = ByteReader(hexBytes("00000020 75756964 000102030405060708090a0b0c0d0e0f deadbeef deadbeef"))
        let box = try XCTUnwrap(try reader.readBox(depth: 1))
        XCTAssertEqual(box.header.headerSize, 24)
        XCTAssertEqual(box.header.userType?.count, 16)
        XCTAssertEqual(box.payload.remaining, 8)
    }

    // MARK: Movie structure

    func testMissingMoov() {
        assertThrows(.missingBox, try self.movie(ftyp + hexBytes("00000008 66726565")))
        assertThrows(.missingBox, try self.movie([]))
    }

    func testDuplicateMoovAndMoovInsideMoov() throws {
        let good = SyntheticMovie().build()
        let parsed = try movie(good)
        let moov = Array(good[Int(parsed.movieBoxRange.lowerBound)..<Int(parsed.movieBoxRange.upperBound)])
        // A second moov is ignored with a warning, as FFmpeg ignores it; one inside moov is refused.
        let twice = try movie(good + moov)
        XCTAssertEqual(twice.movieBoxRange, parsed.movieBoxRange)
        XCTAssertEqual(twice.warnings.map(\.code), [.duplicateBox])
        XCTAssertEqual(twice.warnings.first?.offset, UInt64(good.count))
        var nested = BoxWriter()
        nested.box(.moov) { $0.write(bytes: moov) }
        assertThrows(.duplicateBox, try self.movie(ftyp + nested.bytes))
    }

    func testMissingMandatoryBoxes() {
        var noHeader = BoxWriter()
        noHeader.box(.moov) { _ in }
        assertThrows(.missingBox, try self.movie(ftyp + noHeader.bytes))
        var synthetic = SyntheticMovie()
        var stbl = BoxWriter()
        stbl.box(.stbl) { SampleDescriptionBox(entries: [.init(format: .mp4a, bytes: SyntheticMovie.aacEntry)]).write(to: &$0) }
        synthetic.replaceSampleTable = stbl.bytes
        let bytes = synthetic.build()
        XCTAssertNoThrow(try self.movie(bytes), "stsd alone is enough to list the track")
        assertThrows(.missingBox, try self.movie(bytes).tracks[0].sampleTable())
    }

    func testDuplicateSampleTableBox() throws {
        var synthetic = SyntheticMovie()
        synthetic.extraSampleTableBoxes = [SampleSizeBox(sizes: synthetic.sampleSizes).serialized]
        assertThrows(.duplicateBox, try self.table(synthetic))
    }

    // MARK: Counts larger than their box

    func testTableCountsBeyondTheirBox() {
        let cases: [(String, (inout ByteReader) throws -> Any)] = [
            ("0000001c 7374737a 00000000 00000000 fffffff0 00000001 00000002", { try SampleSizeBox(parsing: &$0) }),
            ("00000018 73747473 00000000 7fffffff 00000001 00000400", { try TimeToSampleBox(parsing: &$0) }),
            ("00000018 73747363 00000000 10000000 00000001 00000001", { try SampleToChunkBox(parsing: &$0) }),
            ("00000014 7374636f 00000000 ffffffff 00000000", { try ChunkOffsetBox(parsing: &$0) }),
            ("00000018 636f3634 00000000 20000000 0000000000000000", { try ChunkOffsetBox(parsingLarge: &$0) }),
            ("00000018 63747473 00000000 00000002 00000001 00000000", { try CompositionOffsetBox(parsing: &$0) }),
            ("0000001c 656c7374 00000000 00000002 00000bb8 00000400 00010000", { try EditListBox(parsing: &$0) }),
            ("0000001a 73677064 01000000 726f6c6c 00000002 00000100 ffff", { try SampleGroupDescriptionBox(parsing: &$0) }),
            ("00000014 73626770 00000000 726f6c6c 00010000", { try SampleToGroupBox(parsing: &$0) }),
            ("00000014 73747373 00000000 00000400 00000001", { try SyncSampleBox(parsing: &$0) }),
            ("00000010 73747364 00000000 00000002", { try SampleDescriptionBox(parsing: &$0) }),
            ("00000010 64726566 00000000 00000003", { try DataReferenceBox(parsing: &$0) }),
        ]
        for (hex, parse) in cases {
            assertThrows(.countExceedsBox, try parseBox(hexBytes(hex), parse))
        }
    }

    func testCompactSampleSizesCountBeyondBox() {
        assertThrows(.countExceedsBox, try parseBox(hexBytes("00000016 73747a32 00000000 00000010 00001000 0001"),
                                                    SampleSizeBox.init(parsingCompact:)))
        assertThrows(.invalidValue, try parseBox(hexBytes("00000014 73747a32 00000000 00000007 00000000"),
                                                 SampleSizeBox.init(parsingCompact:)))
    }

    func testDescriptorClaimingMoreThanTheEsdsHolds() {
        let esds = hexBytes("""
            0000001c 65736473 00000000 | size 28
            03 0e 0001 00 | ES_Descriptor, length 14
            04 7f 40 15 000000 00000000 00 | DecoderConfig claims 127 bytes
            """)
        assertThrows(.invalidValue, try parseBox(esds, ElementaryStreamDescriptorBox.init(parsing:)))
    }

    func testUnknownVersion() {
        assertThrows(.unsupportedVersion,
                     try parseBox(hexBytes("00000010 656c7374 02000000 00000000"), EditListBox.init(parsing:)))
    }

    // MARK: Sample tables as a whole

    func testFirstChunkMustBeOne() {
        var synthetic = SyntheticMovie()
        synthetic.sampleToChunk.entries[0].firstChunk = 0
        assertThrows(.invalidSampleTable, try self.table(synthetic))
    }

    func testFirstChunksMustIncrease() {
        var synthetic = SyntheticMovie()
        synthetic.sampleToChunk.entries.append(.init(firstChunk: 1, samplesPerChunk: 2, sampleDescriptionIndex: 1))
        assertThrows(.invalidSampleTable, try self.table(synthetic))
    }

    func testChunkThatDoesNotExist() {
        var synthetic = SyntheticMovie()
        synthetic.sampleToChunk.entries.append(.init(firstChunk: 9, samplesPerChunk: 1, sampleDescriptionIndex: 1))
        assertThrows(.invalidSampleTable, try self.table(synthetic))
    }

    func testSampleDescriptionThatDoesNotExist() {
        var synthetic = SyntheticMovie()
        synthetic.sampleToChunk.entries[0].sampleDescriptionIndex = 2
        assertThrows(.invalidSampleTable, try self.table(synthetic))
    }

    func testSampleCountsDisagree() {
        var fewerTimed = SyntheticMovie()
        fewerTimed.timeToSample.entries[0].sampleCount = 9
        assertThrows(.invalidSampleTable, try self.table(fewerTimed))
        var fewerChunks = SyntheticMovie()
        fewerChunks.chunkOffsets.removeLast()
        assertThrows(.invalidSampleTable, try self.table(fewerChunks))
    }

    func testChunkBeyondTheEndOfTheFile() {
        var synthetic = SyntheticMovie()
        synthetic.chunkOffsets[4] = 0x7FFF_FFF0
        assertThrows(.invalidSampleTable, try self.table(synthetic))
        var overflowing = SyntheticMovie()
        overflowing.useLargeChunkOffsets = true
        overflowing.absoluteChunkOffsets = true
        overflowing.chunkOffsets[4] = UInt64.max - 10
        assertThrows(.invalidSampleTable, try self.table(overflowing))
    }

    func testChunkOverlappingTheMovieBox() {
        var synthetic = SyntheticMovie()
        synthetic.absoluteChunkOffsets = true
        synthetic.chunkOffsets[0] = 40
        assertThrows(.invalidSampleTable, try self.table(synthetic))
    }

    func testDurationsSummingPast64Bits() {
        var synthetic = SyntheticMovie()
        synthetic.timeToSample.entries = [.init(sampleCount: 5, sampleDelta: .max), .init(sampleCount: 5, sampleDelta: .max)]
        XCTAssertNoThrow(try self.table(synthetic), "5 × 2 × (2^32 - 1) fits in 64 bits")
        synthetic.timeToSample = TimeToSampleBox(entries: [.init(sampleCount: 10, sampleDelta: .max)])
        XCTAssertNoThrow(try self.table(synthetic))
    }

    func testSyncSampleThatDoesNotExist() {
        var synthetic = SyntheticMovie()
        synthetic.extraSampleTableBoxes = [SyncSampleBox(sampleNumbers: [1, 11]).serialized]
        assertThrows(.invalidSampleTable, try self.table(synthetic))
    }

    func testErrorsNameTheBoxPathAndOffset() throws {
        var synthetic = SyntheticMovie()
        synthetic.sampleToChunk.entries[0].firstChunk = 0
        do {
            _ = try table(synthetic)
            XCTFail("expected an error")
        } catch let error as ISOBMFFError {
            XCTAssertEqual(error.path, "moov/trak[1]/mdia/minf/stbl/stsc")
            XCTAssertNotNil(error.offset)
            XCTAssertTrue(error.description.hasPrefix("moov/trak[1]/mdia/minf/stbl/stsc at byte "), error.description)
        }
    }

    func testTrailingGarbageAfterMoovIsIgnored() throws {
        let bytes = SyntheticMovie().build() + [0x00, 0x00, 0x00, 0x02, 0x41]
        XCTAssertEqual(try movie(bytes).tracks.count, 1)
    }
}
