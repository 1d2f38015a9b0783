import ISOBMFF
import TestSupport
import XCTest

/// Every box the writer emits, parsed from known bytes and written back byte for byte.
/// Each hex literal is commented by field group, as laid out in ISO/IEC 14496-12.
final class BoxRoundTripTests: XCTestCase {
    func roundTrip<B: Box>(_ type: B.Type, _ hex: String, parse: (inout ByteReader) throws -> B = B.init(parsing:),
                           file: StaticString = #filePath, line: UInt = #line) throws -> B {
        let bytes = hexBytes(hex)
        let box = try parseBox(bytes, parse, file: file, line: line)
        XCTAssertEqual(box.serialized, bytes, "\(B.type) did not round-trip", file: file, line: line)
        let again = try parseBox(box.serialized, parse, file: file, line: line)
        XCTAssertEqual(again, box, file: file, line: line)
        return box
    }

    func testFileType() throws {
        let box = try roundTrip(FileTypeBox.self, """
            0000001c 66747970 | size 28, 'ftyp'
            4d344120 00000200 | major 'M4A ', minor 0x200
            4d344120 6d703432 69736f6d | 'M4A ' 'mp42' 'isom'
            """)
        XCTAssertEqual(box.majorBrand, .m4a)
        XCTAssertEqual(box.compatibleBrands, [.m4a, .mp42, .isom])
        XCTAssertFalse(box.isQuickTime)
    }

    func testMovieHeaderVersion0() throws {
        let box = try roundTrip(MovieHeaderBox.self, """
            0000006c 6d766864 00000000 | size 108, 'mvhd', v0
            00000001 00000002 | creation, modification
            000003e8 00000bb8 | timescale 1000, duration 3000
            00010000 0100 0000 00000000 00000000 | rate 1.0, volume 1.0, reserved
            00010000 00000000 00000000 00000000 00010000 00000000 00000000 00000000 40000000 | matrix
            000000000000000000000000000000000000000000000000 | pre_defined
            00000003 | next track ID
            """)
        XCTAssertEqual(box.timescale, 1000)
        XCTAssertEqual(box.duration, 3000)
        XCTAssertEqual(box.nextTrackID, 3)
        XCTAssertEqual(box.matrix, MovieHeaderBox.identityMatrix)
    }

    func testMovieHeaderVersion1() throws {
        let box = try roundTrip(MovieHeaderBox.self, """
            00000078 6d766864 01000000 | size 120, 'mvhd', v1
            0000000000000001 0000000000000002 | creation, modification
            0000ac44 0000000100000000 | timescale 44100, duration 2^32
            00010000 0100 0000 00000000 00000000 | rate, volume, reserved
            00010000 00000000 00000000 00000000 00010000 00000000 00000000 00000000 40000000 | matrix
            000000000000000000000000000000000000000000000000 | pre_defined
            00000002 | next track ID
            """)
        XCTAssertEqual(box.duration, 1 << 32)
    }

    func testTrackHeaderBothVersions() throws {
        let v0 = try roundTrip(TrackHeaderBox.self, """
            0000005c 746b6864 00000003 | size 92, 'tkhd', v0, enabled | in movie
            00000000 00000000 00000002 00000000 00000bb8 | times, track ID 2, reserved, duration
            0000000000000000 0000 0001 0100 0000 | reserved, layer, alternate group 1, volume, reserved
            00010000 00000000 00000000 00000000 00010000 00000000 00000000 00000000 40000000 | matrix
            00000000 00000000 | width, height
            """)
        XCTAssertEqual(v0.trackID, 2)
        XCTAssertEqual(v0.alternateGroup, 1)
        XCTAssertTrue(v0.isEnabled)
        let v1 = try roundTrip(TrackHeaderBox.self, """
            00000068 746b6864 01000001 | size 104, 'tkhd', v1, enabled
            0000000000000000 0000000000000000 00000001 00000000 0000000200000000 | times, ID, reserved, duration
            0000000000000000 0000 0000 0000 0000 | reserved, layer, group, volume, reserved
            00010000 00000000 00000000 00000000 00010000 00000000 00000000 00000000 40000000 | matrix
            00a00000 00780000 | 160 x 120
            """)
        XCTAssertEqual(v1.duration, 2 << 32)
    }

    func testEditListBothVersions() throws {
        let v0 = try roundTrip(EditListBox.self, """
            0000001c 656c7374 00000000 00000001 | size 28, 'elst', v0, 1 entry
            00000bb8 00000400 0001 0000 | duration 3000, media time 1024, rate 1.0
            """)
        XCTAssertEqual(v0.entries, [.init(segmentDuration: 3000, mediaTime: 1024)])
        let v1 = try roundTrip(EditListBox.self, """
            00000038 656c7374 01000000 00000002 | size 56, 'elst', v1, 2 entries
            00000000000003e8 ffffffffffffffff 0001 0000 | empty edit of 1000
            0000000100000000 0000000000000840 0001 0000 | duration 2^32, media time 2112
            """)
        XCTAssertTrue(v1.entries[0].isEmpty)
        XCTAssertEqual(v1.entries[1].mediaTime, 2112)
    }

    func testEditListWidensWhenValuesNeedIt() throws {
        let box = EditListBox(entries: [.init(segmentDuration: 1 << 33, mediaTime: 0)])
        XCTAssertEqual(box.serialized[8], 1, "a duration over 32 bits needs version 1")
    }

    func testMediaHeader() throws {
        let box = try roundTrip(MediaHeaderBox.self, """
            00000020 6d646864 00000000 | size 32, 'mdhd', v0
            00000000 00000000 0000ac44 000208cc | times, timescale 44100, duration 133324
            55c4 0000 | language 'und', quality
            """)
        XCTAssertEqual(box.timescale, 44100)
        XCTAssertEqual(box.languageCode, "und")
        let v1 = try roundTrip(MediaHeaderBox.self, """
            0000002c 6d646864 01000000 | size 44, 'mdhd', v1
            0000000000000000 0000000000000000 0000bb80 0000000200000000 | times, 48000, duration
            15c7 0000 | language 'eng'
            """)
        XCTAssertEqual(v1.languageCode, "eng")
    }

    func testHandler() throws {
        let box = try roundTrip(HandlerBox.self, """
            0000002d 68646c72 00000000 | size 45, 'hdlr', v0
            00000000 736f756e | pre_defined, 'soun'
            000000000000000000000000 | reserved
            536f756e6448616e646c657200 | "SoundHandler\\0"
            """)
        XCTAssertEqual(box.handlerType, .soun)
        XCTAssertEqual(HandlerBox(handlerType: .soun, name: "SoundHandler").serialized, box.serialized)
    }

    func testSoundMediaHeaderAndDataReference() throws {
        _ = try roundTrip(SoundMediaHeaderBox.self, "00000010 736d6864 00000000 0000 0000")
        let dref = try roundTrip(DataReferenceBox.self, """
            0000001c 64726566 00000000 00000001 | size 28, 'dref', v0, 1 entry
            0000000c 75726c20 00000001 | 'url ' with flag 1: same file
            """)
        XCTAssertTrue(dref.entries[0].isSelfContained)
        XCTAssertEqual(DataReferenceBox.selfContained.serialized, dref.serialized)
    }

    func testTimeToSampleAndCompositionOffsets() throws {
        let stts = try roundTrip(TimeToSampleBox.self, """
            00000020 73747473 00000000 00000002 | size 32, 'stts', 2 entries
            00000082 00000400 | 130 samples of 1024
            00000001 000000cc | 1 sample of 204
            """)
        XCTAssertEqual(stts.sampleCount, 131)
        XCTAssertEqual(stts.totalDuration, 130 * 1024 + 204)
        let ctts = try roundTrip(CompositionOffsetBox.self, """
            00000018 63747473 01000000 00000001 | size 24, 'ctts', v1, 1 entry
            00000005 fffffc00 | 5 samples at -1024
            """)
        XCTAssertEqual(Int32(bitPattern: ctts.entries[0].sampleOffset), -1024)
    }

    func testSampleToChunk() throws {
        let box = try roundTrip(SampleToChunkBox.self, """
            00000028 73747363 00000000 00000002 | size 40, 'stsc', 2 entries
            00000001 00000014 00000001 | from chunk 1: 20 samples, entry 1
            00000007 00000003 00000001 | from chunk 7: 3 samples, entry 1
            """)
        XCTAssertEqual(box.entries[1].firstChunk, 7)
    }

    func testSampleSizeTableAndConstant() throws {
        let table = try roundTrip(SampleSizeBox.self, """
            00000020 7374737a 00000000 | size 32, 'stsz', v0
            00000000 00000003 | sizes vary, 3 samples
            00000118 00000117 000000fe | 280, 279, 254
            """)
        XCTAssertEqual(table.sizes, [280, 279, 254])
        let constant = try roundTrip(SampleSizeBox.self, "00000014 7374737a 00000000 00000004 000003e8")
        XCTAssertEqual(constant.size(ofSample: 999), 4)
    }

    func testCompactSampleSizesBecomeStsz() throws {
        let nibbles = try parseBox(hexBytes("""
            00000017 73747a32 00000000 | size 23, 'stz2', v0
            000000 04 00000005 | field size 4, 5 samples
            12 34 50 | 1 2 3 4 5 and padding
            """), SampleSizeBox.init(parsingCompact:))
        XCTAssertEqual(nibbles.sizes, [1, 2, 3, 4, 5])
        let shorts = try parseBox(hexBytes("00000018 73747a32 00000000 00000010 00000002 0118 ffff"),
                                  SampleSizeBox.init(parsingCompact:))
        XCTAssertEqual(shorts.sizes, [280, 65535])
        XCTAssertEqual(shorts.serialized, hexBytes("0000001c 7374737a 00000000 00000000 00000002 00000118 0000ffff"))
    }

    func testChunkOffsetsChooseStcoOrCo64() throws {
        let stco = try roundTrip(ChunkOffsetBox.self, "00000018 7374636f 00000000 00000002 0000002c 0000112c")
        XCTAssertEqual(stco.offsets, [44, 4396])
        let co64 = try roundTrip(ChunkOffsetBox.self, """
            00000018 636f3634 00000000 00000001 | size 24, 'co64', 1 entry
            0000000100000010 | 2^32 + 16
            """, parse: ChunkOffsetBox.init(parsingLarge:))
        XCTAssertTrue(co64.needsLargeOffsets)
        // Small offsets read from co64 are written as stco.
        let small = try parseBox(hexBytes("00000018 636f3634 00000000 00000001 0000000000000010"),
                                 ChunkOffsetBox.init(parsingLarge:))
        XCTAssertEqual(small.serialized, hexBytes("00000014 7374636f 00000000 00000001 00000010"))
        XCTAssertEqual(ChunkOffsetBox.serializedSize(count: 2, large: false), stco.serialized.count)
    }

    func testSyncSamplesAndSampleGroups() throws {
        _ = try roundTrip(SyncSampleBox.self, "00000018 73747373 00000000 00000002 00000001 0000001f")
        let sgpd = try roundTrip(SampleGroupDescriptionBox.self, """
            0000001a 73677064 01000000 | size 26, 'sgpd', v1
            726f6c6c 00000002 00000001 | 'roll', default length 2, 1 entry
            ffff | roll distance -1
            """)
        XCTAssertEqual(sgpd, .aacRoll)
        let variable = try roundTrip(SampleGroupDescriptionBox.self, """
            00000023 73677064 01000000 | size 35, 'sgpd', v1
            70726f6c 00000000 00000002 | 'prol', lengths vary, 2 entries
            00000002 0001 | length 2
            00000001 07 | length 1
            """)
        XCTAssertEqual(variable.entries, [[0, 1], [7]])
        let sbgp = try roundTrip(SampleToGroupBox.self, """
            0000001c 73626770 00000000 | size 28, 'sbgp', v0
            726f6c6c 00000001 | 'roll', 1 entry
            00000083 00000001 | 131 samples in group 1
            """)
        XCTAssertEqual(sbgp.entries[0].sampleCount, 131)
    }

    func testSampleDescriptionWithAudioEntryAndEsds() throws {
        let stsd = try roundTrip(SampleDescriptionBox.self, """
            0000005b 73747364 00000000 00000001 | size 91, 'stsd', 1 entry
            0000004b 6d703461 | size 75, 'mp4a'
            000000000000 0001 | reserved, data reference 1
            0000 0000 00000000 | version 0, revision, vendor
            0002 0010 0000 0000 ac440000 | 2 channels, 16 bits, 44100 Hz
            00000027 65736473 00000000 | size 39, 'esds', v0
            03 19 0001 00 | ES_Descriptor, length 25, ES_ID 1, flags
            04 11 40 15 000000 0000fd05 0000fd05 | DecoderConfig: MPEG-4 audio, audio stream, bitrates
            05 02 1208 | DecoderSpecificInfo: AAC LC, 44100 Hz, mono
            06 01 02 | SLConfig
            """)
        XCTAssertEqual(stsd.entries.count, 1)
        let entry = try AudioSampleEntry(parsing: stsd.entries[0], quickTimeLayout: false)
        XCTAssertEqual(entry.channelCount, 2)
        XCTAssertEqual(entry.sampleRate >> 16, 44100)
        let esds = try XCTUnwrap(entry.elementaryStreamDescriptor)
        XCTAssertEqual(esds.objectTypeIndication, 0x40)
        XCTAssertEqual(esds.decoderSpecificInfo, [0x12, 0x08])
        XCTAssertEqual(esds.averageBitrate, 0xfd05)
        XCTAssertEqual(esds.serialized, Array(stsd.entries[0].bytes[36...]))
        // An ISO entry rebuilt from the same fields and esds is byte-identical.
        XCTAssertEqual(AudioSampleEntry.isoEntry(format: .mp4a, channelCount: 2, sampleRate: 44100,
                                                 children: [esds.serialized]), stsd.entries[0].bytes)
    }

    func testQuickTimeVersion1SoundDescriptionWithWave() throws {
        let entry = hexBytes("""
            00000072 6d703461 | size 114, 'mp4a'
            000000000000 0001 | reserved, data reference 1
            0001 0000 00000000 | version 1, revision, vendor
            0002 0010 fffe 0000 ac440000 | 2 channels, 16 bits, compression -2, 44100 Hz
            00000400 00000000 00000002 00000002 | QuickTime v1: samples per packet ...
            0000003e 77617665 | size 62, 'wave'
            0000000c 66726d61 6d703461 | 'frma' 'mp4a'
            00000022 65736473 00000000 | size 34, 'esds'
            03 14 0000 00 | ES_Descriptor, length 20
            04 0f 40 15 000000 00000000 00000000 | DecoderConfig, no bitrates
            05 00 | empty DecoderSpecificInfo
            00000008 00000000 | terminator
            """)
        let parsed = try AudioSampleEntry(parsing: .init(format: .mp4a, bytes: entry), quickTimeLayout: true)
        XCTAssertEqual(parsed.version, 1)
        XCTAssertTrue(parsed.hasWaveBox)
        XCTAssertEqual(parsed.elementaryStreamDescriptor?.objectTypeIndication, 0x40)
        XCTAssertEqual(parsed.children.map(\.type), ["wave"])
    }

    func testMediaDataHeaderSizes() {
        XCTAssertEqual(MediaDataHeader.bytes(payloadSize: 100), hexBytes("0000006c 6d646174"))
        XCTAssertEqual(MediaDataHeader.bytes(payloadSize: 1 << 32),
                       hexBytes("00000001 6d646174 0000000100000010"))
    }
}
