import ISOBMFF
import TestSupport
import XCTest

/// ``KeyFrameProbe`` against real encoder output: every sample of the files in
/// `Fixtures/keyframes/` (made by `Scripts/make-keyframe-fixtures.sh`) compared with the
/// `.keys` file beside it, FFmpeg's decoder's key_frame flag for the frame made from each
/// packet (ffprobe -show_frames, matched by pkt_pos). VC-1, which FFmpeg cannot encode,
/// is tested on hand-built advanced-profile frames.
final class KeyFrameProbeTests: XCTestCase {
    struct Track {
        var probe: KeyFrameProbe?
        var samples: [[UInt8]]
        var containerSync: [Bool]
    }

    /// The video track of `Fixtures/keyframes/name`: its probe and samples in decode order.
    func videoTrack(_ name: String) throws -> Track {
        let reader = try MovieReader(reading: MemoryByteSource(readFile(fixture("keyframes/" + name))))
        let video = try XCTUnwrap(reader.tracks.first { $0.kind == .video }, name)
        let description = try XCTUnwrap(video.sampleDescriptions.first, name)
        let probe = KeyFrameProbe(sampleEntryType: description.format, entryBytes: description.entry.bytes)
        let index = try reader.samples(of: video)
        var samples: [[UInt8]] = []
        var sync: [Bool] = []
        for sample in index {
            var bytes: [UInt8] = []
            try reader.read(sample, into: &bytes)
            samples.append(bytes)
            sync.append(sample.isSync)
        }
        return Track(probe: probe, samples: samples, containerSync: sync)
    }

    /// The oracle: one 0 or 1 per sample.
    func expectedKeys(_ name: String) throws -> [Bool] {
        let base = name.split(separator: ".").dropLast().joined(separator: ".")
        let text = try String(contentsOfFile: fixture("keyframes/\(base).keys"), encoding: .utf8)
        return text.split(separator: "\n").map { $0 == "1" }
    }

    static let fixtures: [(String, KeyFrameProbe.Codec)] = [
        ("h264-bframes.mp4", .h264), ("h264-open-gop.mp4", .h264), ("hevc.mp4", .hevc),
        ("mpeg4.mp4", .mpeg4Visual), ("h263.3gp", .h263), ("h263plus.mov", .h263), ("vp9.mp4", .vp9),
        ("av1.mp4", .av1),
    ]

    func testEverySampleMatchesFFmpegsKeyFrameFlag() throws {
        for (name, codec) in Self.fixtures {
            let track = try videoTrack(name)
            let probe = try XCTUnwrap(track.probe, name)
            XCTAssertEqual(probe.codec, codec, name)
            let expected = try expectedKeys(name)
            XCTAssertEqual(track.samples.count, expected.count, name)
            XCTAssertEqual(expected.filter { $0 }.count, 2, "\(name): two GOPs of 5")
            for (index, sample) in track.samples.enumerated() where index < expected.count {
                XCTAssertEqual(probe.isKeyFrame(sample), expected[index], "\(name) sample \(index)")
            }
        }
    }

    /// The open-GOP file's second key frame is not an IDR: only its recovery point SEI
    /// (recovery_frame_cnt 0) makes it key.
    func testOpenGOPKeyFrameIsARecoveryPointNotAnIDR() throws {
        let track = try videoTrack("h264-open-gop.mp4")
        let probe = try XCTUnwrap(track.probe)
        let keys = try expectedKeys("h264-open-gop.mp4")
        let second = try XCTUnwrap(keys.indices.dropFirst().first { keys[$0] })
        let types = nalTypes(track.samples[second], lengthSize: 4)
        XCTAssertFalse(types.contains(5), "\(types)")
        XCTAssertTrue(types.contains(6) && types.contains(1), "\(types)")
        XCTAssertEqual(probe.isKeyFrame(track.samples[second]), true)
        // Without the SEI the same slice is an ordinary non-IDR picture.
        let withoutSEI = removingNALUnits(of: 6, from: track.samples[second])
        XCTAssertEqual(probe.isKeyFrame(withoutSEI), false)
    }

    /// Truncated, empty and garbage samples answer nil or a Bool, never trap.
    func testTruncatedAndEmptySamplesNeverTrap() throws {
        for (name, _) in Self.fixtures {
            let track = try videoTrack(name)
            let probe = try XCTUnwrap(track.probe, name)
            XCTAssertNil(probe.isKeyFrame([UInt8]()), name)
            for sample in track.samples {
                let lengths = Array(0..<min(sample.count, 80)) + stride(from: 80, to: sample.count, by: 97)
                for length in lengths {
                    _ = probe.isKeyFrame(sample[..<length])
                    _ = probe.isKeyFrame(sample[length...])  // a slice not starting at 0
                }
            }
            // Every byte value repeated, then pseudo-random bytes (xorshift, fixed seed)
            // behind each real sample's first bytes, so that the headers parse and what
            // follows is garbage.
            for byte in 0...255 {
                for count in 1...6 {
                    _ = probe.isKeyFrame([UInt8](repeating: UInt8(byte), count: count))
                }
            }
            var state: UInt64 = 0x9E37_79B9_7F4A_7C15
            for sample in track.samples {
                for keep in [0, 1, 2, 4, 5, 8] {
                    var bytes = Array(sample.prefix(keep))
                    for _ in 0..<48 {
                        state ^= state << 13
                        state ^= state >> 7
                        state ^= state << 17
                        bytes.append(UInt8(truncatingIfNeeded: state))
                    }
                    _ = probe.isKeyFrame(bytes)
                }
            }
        }
    }

    func testLengthsPastTheSampleAreNil() throws {
        let track = try videoTrack("h264-bframes.mp4")
        let probe = try XCTUnwrap(track.probe)
        XCTAssertNil(probe.isKeyFrame([0xFF, 0xFF, 0xFF, 0xFF, 0x65, 0x88]))
        XCTAssertNil(probe.isKeyFrame([0, 0, 0, 2, 0x09, 0xF0]))  // an access unit delimiter only
        XCTAssertNil(probe.isKeyFrame(track.samples[0].dropLast(track.samples[0].count - 3)))
    }

    /// Mutants: the same samples with the one field the probe reads changed say otherwise.
    func testChangingTheTypeFieldChangesTheAnswer() throws {
        // H.264: the IDR slice (type 5) made non-IDR (type 1), nal_ref_idc kept.
        var h264 = try videoTrack("h264-bframes.mp4")
        let idr = try XCTUnwrap(h264.probe?.isKeyFrame(h264.samples[0]))
        XCTAssertTrue(idr)
        let nonIDR = rewritingNALHeaders(h264.samples[0]) { $0 & 0x1F == 5 ? $0 & 0xE0 | 1 : $0 }
        XCTAssertEqual(h264.probe?.isKeyFrame(nonIDR), false)
        h264.samples[1] = rewritingNALHeaders(h264.samples[1]) { $0 & 0x1F == 1 ? $0 & 0xE0 | 5 : $0 }
        XCTAssertEqual(h264.probe?.isKeyFrame(h264.samples[1]), true)

        // HEVC: the IRAP NAL unit types made TRAIL_R (1).
        let hevc = try videoTrack("hevc.mp4")
        XCTAssertEqual(hevc.probe?.isKeyFrame(hevc.samples[0]), true)
        let trail = rewritingNALHeaders(hevc.samples[0]) { header in
            let type = header >> 1 & 0x3F
            return (16...23).contains(type) ? header & 0x81 | 1 << 1 : header
        }
        XCTAssertEqual(hevc.probe?.isKeyFrame(trail), false)

        // MPEG-4 Visual: vop_coding_type 00 (I) made 01 (P).
        let mpeg4 = try videoTrack("mpeg4.mp4")
        var vop = mpeg4.samples[0]
        let vopStart = try XCTUnwrap(startCode(0xB6, in: vop))
        vop[vopStart + 1] = vop[vopStart + 1] & 0x3F | 0x40
        XCTAssertEqual(mpeg4.probe?.isKeyFrame(mpeg4.samples[0]), true)
        XCTAssertEqual(mpeg4.probe?.isKeyFrame(vop), false)

        // H.263: PTYPE bit 9 (picture coding type) set: INTER. PSC 22 + TR 8 + 8 bits = bit 38.
        let h263 = try videoTrack("h263.3gp")
        var picture = h263.samples[0]
        picture[4] |= 0x02
        XCTAssertEqual(h263.probe?.isKeyFrame(h263.samples[0]), true)
        XCTAssertEqual(h263.probe?.isKeyFrame(picture), false)
        picture[4] &= ~0x02
        XCTAssertEqual(h263.probe?.isKeyFrame(picture), true)
        picture[2] = 0x80 | picture[2] & 0x03  // PSC kept
        picture[3] &= ~0x02  // PTYPE bit 1 must be 1
        XCTAssertNil(h263.probe?.isKeyFrame(picture))

        // VP9: frame_type (the sixth bit below profile 3) set.
        let vp9 = try videoTrack("vp9.mp4")
        var frame = vp9.samples[0]
        XCTAssertNotEqual(frame[0] >> 4 & 3, 3, "not profile 3, whose reserved bit moves frame_type")
        frame[0] |= 0x04
        XCTAssertEqual(vp9.probe?.isKeyFrame(vp9.samples[0]), true)
        XCTAssertEqual(vp9.probe?.isKeyFrame(frame), false)
        frame[0] = frame[0] & ~0x04 | 0x08  // show_existing_frame
        XCTAssertEqual(vp9.probe?.isKeyFrame(frame), false)
        frame[0] &= 0x3F  // frame_marker 0
        XCTAssertNil(vp9.probe?.isKeyFrame(frame))

        // AV1: the first frame's frame_type made INTER_FRAME (1).
        let av1 = try videoTrack("av1.mp4")
        var unit = av1.samples[0]
        let header = try XCTUnwrap(firstFrameHeaderPayload(unit))
        XCTAssertEqual(unit[header] >> 7, 0, "not show_existing_frame")
        XCTAssertEqual(unit[header] >> 5 & 3, 0, "KEY_FRAME")
        unit[header] |= 0x20
        XCTAssertEqual(av1.probe?.isKeyFrame(av1.samples[0]), true)
        XCTAssertEqual(av1.probe?.isKeyFrame(unit), false)
    }

    // MARK: H.264 SEI, hand-built

    /// An avc1 probe with 4-byte lengths.
    func avcProbe() throws -> KeyFrameProbe {
        let avcC = CodecConfigurationBox(type: "avcC", payload: [1, 0x64, 0, 0x0A, 0xFF, 0xE0, 0x00])
        let entry = VisualSampleEntry(format: "avc1", width: 16, height: 16, configuration: avcC)
        var writer = BoxWriter()
        entry.write(to: &writer)
        return try XCTUnwrap(KeyFrameProbe(sampleEntryType: "avc1", entryBytes: writer.bytes))
    }

    func lengthPrefixed(_ units: [[UInt8]]) -> [UInt8] {
        var out: [UInt8] = []
        for unit in units {
            let count = UInt32(unit.count)
            out += [UInt8(count >> 24), UInt8(count >> 16 & 0xFF), UInt8(count >> 8 & 0xFF), UInt8(count & 0xFF)]
            out += unit
        }
        return out
    }

    /// The recovery point SEI is found behind another message whose payload holds an
    /// emulation prevention byte: its size counts the unescaped bytes.
    func testRecoveryPointBehindEscapedPayload() throws {
        let probe = try avcProbe()
        let slice: [UInt8] = [0x41, 0x9A, 0x02]  // non-IDR, nal_ref_idc 2
        // payloadType 5, size 4: 00 00 01 02 escaped as 00 00 03 01 02; then payloadType 6,
        // size 1, recovery_frame_cnt ue(v) = 0 ('1'), exact_match 1, broken_link 0,
        // changing_slice_group_idc 00, stop bit... = 0b1100_0100; then rbsp trailing bits.
        let sei: [UInt8] = [0x06, 5, 4, 0, 0, 3, 1, 2, 6, 1, 0xC4, 0x80]
        XCTAssertEqual(probe.isKeyFrame(lengthPrefixed([sei, slice])), true)
        // recovery_frame_cnt 1 ('010'): the picture is not correct until the next one.
        var later = sei
        later[10] = 0x44
        XCTAssertEqual(probe.isKeyFrame(lengthPrefixed([later, slice])), false)
        // The same bytes read without unescaping would put payloadType 6 one byte off.
        let unescapedWrongly: [UInt8] = [0x06, 5, 5, 0, 0, 3, 1, 2, 6, 1, 0xC4, 0x80]
        XCTAssertEqual(probe.isKeyFrame(lengthPrefixed([unescapedWrongly, slice])), false)
        // An SEI and no slice: nil.
        XCTAssertNil(probe.isKeyFrame(lengthPrefixed([sei])))
        // forbidden_zero_bit set: nil.
        XCTAssertNil(probe.isKeyFrame(lengthPrefixed([[0xE5, 0x88]])))
        XCTAssertEqual(probe.isKeyFrame(lengthPrefixed([[0x09, 0xF0], [0x65, 0x88]])), true)
    }

    // MARK: VC-1, hand-built (FFmpeg has no VC-1 encoder)

    /// Bits as text ("110 0...", spaces ignored) to bytes, zero padded.
    func bits(_ text: String) -> [UInt8] {
        let digits = text.filter { $0 == "0" || $0 == "1" }.map { $0 == "1" ? UInt8(1) : 0 }
        var bytes = [UInt8](repeating: 0, count: (digits.count + 7) / 8)
        for (index, bit) in digits.enumerated() { bytes[index / 8] |= bit << (7 - UInt8(index % 8)) }
        return bytes
    }

    /// An advanced-profile sequence header (SMPTE 421M § 6.1) for 160x120, after its start code.
    func vc1SequenceHeader(interlace: Bool) -> [UInt8] {
        bits("11 001 01 000 00000 0" + "000001001111" + "000000111011" + "0" + (interlace ? "1" : "0")
             + "0 0 1 0 0 0")
    }

    func vc1Probe(interlace: Bool) throws -> KeyFrameProbe {
        // dvc1 (SMPTE RP 2025): profile 12 (advanced), level, flags, frame rate; then the
        // sequence header and an entry point header with their start codes.
        var dvc1: [UInt8] = [0xC4, 0x40, 0x04, 0x00, 0x00, 0x00, 0x19, 0, 0, 1, 0x0F]
        dvc1 += vc1SequenceHeader(interlace: interlace)
        dvc1 += [0, 0, 1, 0x0E, 0x48, 0x9B, 0xE0]
        let entry = VisualSampleEntry(format: "vc-1", width: 160, height: 120,
                                      configuration: CodecConfigurationBox(type: "dvc1", payload: dvc1))
        let probe = try XCTUnwrap(KeyFrameProbe(sampleEntry: entry))
        XCTAssertEqual(probe.codec, .vc1)
        return probe
    }

    func testVC1ProgressivePictureTypes() throws {
        let probe = try vc1Probe(interlace: false)
        let frame: [UInt8] = [0, 0, 1, 0x0D]
        XCTAssertEqual(probe.isKeyFrame(frame + bits("110 00000 1")), true)  // I
        XCTAssertEqual(probe.isKeyFrame(frame + bits("0 1010101")), false)  // P
        XCTAssertEqual(probe.isKeyFrame(frame + bits("10 101010")), false)  // B
        XCTAssertEqual(probe.isKeyFrame(frame + bits("1110 1010")), false)  // BI
        XCTAssertEqual(probe.isKeyFrame(frame + bits("1111 0000")), false)  // skipped
        // Sequence header and entry point before the frame, as in Smooth Streaming key samples.
        var withHeaders: [UInt8] = [0, 0, 1, 0x0F]
        withHeaders += vc1SequenceHeader(interlace: false)
        withHeaders += [0, 0, 1, 0x0E, 0x48, 0x9B, 0xE0]
        XCTAssertEqual(probe.isKeyFrame(withHeaders + frame + bits("110 00000")), true)
        XCTAssertEqual(probe.isKeyFrame(withHeaders + frame + bits("0 1000000")), false)
        // The frame layer alone, without a start code.
        XCTAssertEqual(probe.isKeyFrame(bits("110 00000 11")), true)
        XCTAssertEqual(probe.isKeyFrame(bits("0 1000000 11")), false)
        // Truncated: a start code and no picture type; headers and no frame.
        XCTAssertNil(probe.isKeyFrame(frame))
        XCTAssertNil(probe.isKeyFrame(withHeaders))
        XCTAssertNil(probe.isKeyFrame(frame + [0xF0].prefix(0)))
    }

    func testVC1InterlacedPictureTypes() throws {
        let probe = try vc1Probe(interlace: true)
        let frame: [UInt8] = [0, 0, 1, 0x0D]
        XCTAssertEqual(probe.isKeyFrame(frame + bits("0 110 0000")), true)  // progressive I
        XCTAssertEqual(probe.isKeyFrame(frame + bits("0 0 000000")), false)  // progressive P
        XCTAssertEqual(probe.isKeyFrame(frame + bits("10 110 000")), true)  // frame interlace I
        XCTAssertEqual(probe.isKeyFrame(frame + bits("10 0 00000")), false)  // frame interlace P
        XCTAssertEqual(probe.isKeyFrame(frame + bits("11 000 000")), true)  // fields I/I
        XCTAssertEqual(probe.isKeyFrame(frame + bits("11 001 000")), true)  // fields I/P
        XCTAssertEqual(probe.isKeyFrame(frame + bits("11 010 000")), false)  // fields P/I
        XCTAssertEqual(probe.isKeyFrame(frame + bits("11 100 000")), false)  // fields B/B
        // A sequence header in the sample says progressive: the same bits read as PTYPE.
        let progressive: [UInt8] = [0, 0, 1, 0x0F] + vc1SequenceHeader(interlace: false)
        XCTAssertEqual(probe.isKeyFrame(progressive + frame + bits("110 00000")), true)
        XCTAssertEqual(probe.isKeyFrame(progressive + frame + bits("0 1100000")), false)
    }

    func testVC1EscapedFrameHeader() throws {
        // A frame whose first bytes hold 00 00 03 0x: the 03 is an emulation prevention
        // byte, removed before reading (SMPTE 421M Annex E). Interlaced: FCM '0', PTYPE '0'
        // are the first two zero bits; the 03 removed, PTYPE is read from the 00s: P.
        let probe = try vc1Probe(interlace: false)
        XCTAssertEqual(probe.isKeyFrame([0, 0, 1, 0x0D, 0, 0, 3, 1]), false)
        XCTAssertEqual(probe.isKeyFrame([0xC0, 0, 0, 3, 1]), true)
    }

    func testVC1WithoutAdvancedSequenceHeaderHasNoProbe() {
        // Main profile: dvc1 holds STRUCT_C, no start codes.
        let dvc1: [UInt8] = [0x40, 0x40, 0x04, 0x00, 0x00, 0x00, 0x19, 0x4E, 0x29, 0x1A, 0x01]
        let entry = VisualSampleEntry(format: "vc-1", width: 160, height: 120,
                                      configuration: CodecConfigurationBox(type: "dvc1", payload: dvc1))
        XCTAssertNil(KeyFrameProbe(sampleEntry: entry))
        XCTAssertNil(KeyFrameProbe(sampleEntry: VisualSampleEntry(format: "vc-1", width: 16, height: 16,
                                                                  configuration: nil)))
    }

    /// A VP9 superframe (VP9 bitstream Annex B): the first frame, at byte 0, decides; the
    /// index at the end is not read.
    func testVP9SuperframeFirstFrameDecides() throws {
        let vp9 = try videoTrack("vp9.mp4")
        let probe = try XCTUnwrap(vp9.probe)
        // frame_marker 10, profile 0, show_existing 0, frame_type 1, show_frame 0: a hidden
        // inter frame (an alt-ref); then a shown key frame (frame_type 0).
        let hidden: [UInt8] = [0x84, 0x00, 0x40, 0x92]
        let key: [UInt8] = [0x82, 0x49, 0x83, 0x42]
        // Index: marker 110 00 001 (1-byte sizes, 2 frames), the sizes, the marker again.
        let index: [UInt8] = [0xC1, 4, 4, 0xC1]
        XCTAssertEqual(probe.isKeyFrame(hidden + key + index), false)
        XCTAssertEqual(probe.isKeyFrame(key + hidden + index), true)
        // Profile 3 has a reserved bit before show_existing_frame, which must be 0.
        XCTAssertEqual(probe.isKeyFrame([0b1011_0000, 0x00]), true)
        XCTAssertEqual(probe.isKeyFrame([0b1011_0010, 0x00]), false)
        XCTAssertNil(probe.isKeyFrame([0b1011_1000, 0x00]))
    }

    // MARK: AV1 and the entries without a probe

    func testAV1ReducedStillPictureHeaderIsAlwaysKey() throws {
        // A sequence header OBU (type 1, has_size) whose first byte is seq_profile 0,
        // still_picture 1, reduced_still_picture_header 1; then a frame OBU (type 6).
        let sequence: [UInt8] = [0x0A, 2, 0b0001_1000, 0x00]
        let frame: [UInt8] = [0x32, 2, 0xFF, 0xFF]  // bits that would read as show_existing_frame
        let av1C = CodecConfigurationBox(type: "av1C", payload: [0x81, 0x00, 0x0C, 0x00] + sequence)
        let probe = try XCTUnwrap(KeyFrameProbe(sampleEntry: VisualSampleEntry(format: "av01", width: 16, height: 16,
                                                                               configuration: av1C)))
        XCTAssertEqual(probe.isKeyFrame([0x12, 0] + frame), true)  // temporal delimiter, frame
        // Not reduced: the same frame bytes say show_existing_frame.
        let plain = try XCTUnwrap(KeyFrameProbe(sampleEntry: VisualSampleEntry(format: "av01", width: 16, height: 16,
                                                                               configuration: nil)))
        XCTAssertEqual(plain.isKeyFrame([0x12, 0] + frame), false)
        XCTAssertEqual(plain.isKeyFrame([0x12, 0] + sequence + frame), true)  // in-band sequence header
        // A hidden key frame (show_frame 0) is not key; a shown one is.
        XCTAssertEqual(plain.isKeyFrame([0x32, 1, 0b0000_0000]), false)
        XCTAssertEqual(plain.isKeyFrame([0x32, 1, 0b0001_0000]), true)
        // An OBU size past the end; leb128 of more than 8 bytes; no frame.
        XCTAssertNil(plain.isKeyFrame([0x32, 9, 0x10]))
        XCTAssertNil(plain.isKeyFrame([0x32] + [UInt8](repeating: 0x80, count: 9) + [0]))
        XCTAssertNil(plain.isKeyFrame([0x12, 0]))
    }

    func testEntriesWithoutAProbe() throws {
        // Audio, encrypted video, intra-only codecs: trust the container.
        let audio = try MovieReader(reading: MemoryByteSource(readFile(fixture("aac-48k-mono.mp4"))))
        for track in audio.tracks {
            for description in track.sampleDescriptions where description.format == "mp4a" {
                XCTAssertNil(KeyFrameProbe(sampleEntryType: description.format, entryBytes: description.entry.bytes))
            }
        }
        for format: FourCC in ["encv", "drmi", "mjpa", "jpeg", "apch", "raw ", "avc2"] {
            let entry = VisualSampleEntry(format: format, width: 16, height: 16, configuration: nil)
            var writer = BoxWriter()
            entry.write(to: &writer)
            XCTAssertNil(KeyFrameProbe(sampleEntryType: format, entryBytes: writer.bytes), "\(format)")
        }
        // avc1 without avcC; garbage entry bytes.
        XCTAssertNil(KeyFrameProbe(sampleEntry: VisualSampleEntry(format: "avc1", width: 16, height: 16,
                                                                  configuration: nil)))
        XCTAssertNil(KeyFrameProbe(sampleEntryType: "avc1", entryBytes: [0, 0, 0, 9, 0x61]))
        // mp4v carrying MPEG-2 video (objectTypeIndication 0x61) has no VOPs.
        let mpeg4 = try videoTrack("mpeg4.mp4")
        let reader = try MovieReader(reading: MemoryByteSource(readFile(fixture("keyframes/mpeg4.mp4"))))
        var entry = try XCTUnwrap(reader.tracks.first?.sampleDescriptions.first?.video)
        let esdsIndex = try XCTUnwrap(entry.children.firstIndex { $0.type == "esds" })
        var esds = entry.children[esdsIndex].payload
        let oti = try XCTUnwrap(esds.firstIndex(of: 0x20))
        esds[oti] = 0x61
        entry.children[esdsIndex].payload = esds
        XCTAssertNil(KeyFrameProbe(sampleEntry: entry))
        XCTAssertNotNil(mpeg4.probe)
    }

    // MARK: Helpers

    func nalTypes(_ sample: [UInt8], lengthSize: Int) -> [UInt8] {
        var types: [UInt8] = []
        var offset = 0
        while offset + lengthSize < sample.count {
            let length = sample[offset..<offset + lengthSize].reduce(0) { $0 << 8 | Int($1) }
            types.append(sample[offset + lengthSize] & 0x1F)
            offset += lengthSize + length
        }
        return types
    }

    func removingNALUnits(of type: UInt8, from sample: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var offset = 0
        while offset + 4 < sample.count {
            let length = sample[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            if sample[offset + 4] & 0x1F != type { out += sample[offset..<offset + 4 + length] }
            offset += 4 + length
        }
        return out
    }

    /// `sample` (4-byte lengths) with each NAL unit's first header byte passed through `change`.
    func rewritingNALHeaders(_ sample: [UInt8], _ change: (UInt8) -> UInt8) -> [UInt8] {
        var out = sample
        var offset = 0
        while offset + 4 < out.count {
            let length = out[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            out[offset + 4] = change(out[offset + 4])
            offset += 4 + length
        }
        return out
    }

    func startCode(_ code: UInt8, in bytes: [UInt8]) -> Int? {
        (0..<max(0, bytes.count - 4)).first {
            bytes[$0] == 0 && bytes[$0 + 1] == 0 && bytes[$0 + 2] == 1 && bytes[$0 + 3] == code
        }.map { $0 + 3 }
    }

    /// The offset of the first frame (header) OBU's payload in an AV1 temporal unit.
    func firstFrameHeaderPayload(_ unit: [UInt8]) -> Int? {
        var offset = 0
        while offset < unit.count {
            let header = unit[offset]
            let type = header >> 3 & 0x0F
            var index = offset + 1 + Int(header >> 2 & 1)
            var size = 0, shift = 0
            while index < unit.count {
                let byte = unit[index]
                index += 1
                size |= Int(byte & 0x7F) << shift
                shift += 7
                if byte & 0x80 == 0 { break }
            }
            if type == 3 || type == 6 { return index }
            offset = index + size
        }
        return nil
    }
}
