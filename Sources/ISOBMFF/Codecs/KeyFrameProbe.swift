/// Reads a video sample's bitstream to tell whether it is a random-access point: whether it
/// can be decoded without any earlier sample.
///
/// Containers are not always right about this: a phone's H.263 `.3gp` lists P-pictures in
/// `stss` (ISO/IEC 14496-12 § 8.6.2), a Smooth Streaming VC-1 track marks every sample sync.
/// A cut that starts on such a sample starts on a picture that needs one before it. The
/// probe reads the few header bits each codec puts first (a NAL unit type, a picture coding
/// type, a frame type) and never decodes anything; each read is bounded by the sample and
/// by ``Limits/keyFrameProbeScanBytes`` and ``Limits/keyFrameProbeUnits``.
///
/// Codecs handled: H.264 (`avc1`, `avc3`), HEVC (`hvc1`, `hev1`, `dvh1`, `dvhe`), MPEG-4
/// Visual (`mp4v` carrying objectTypeIndication 0x20, or without a readable `esds`), H.263
/// (`s263`, `h263`, QuickTime's `H263`), VC-1 advanced profile (`vc-1` with a `dvc1` box
/// holding the sequence header), VP9 (`vp09`) and AV1 (`av01`). For anything else (audio,
/// intra-only codecs, encrypted entries, VC-1 simple and main profiles) there is no probe:
/// trust the container's sync marks.
public struct KeyFrameProbe: Sendable {
    /// The codec family recognised (for messages and tests).
    public enum Codec: String, Sendable {
        /// H.264 / AVC (ITU-T H.264): `avc1`, `avc3`.
        case h264
        /// HEVC (ITU-T H.265): `hvc1`, `hev1`, and Dolby Vision's `dvh1`, `dvhe`.
        case hevc
        /// MPEG-4 Visual (ISO/IEC 14496-2): `mp4v`.
        case mpeg4Visual
        /// H.263 (ITU-T H.263): `s263`, `h263`, `H263`.
        case h263
        /// VC-1 advanced profile (SMPTE 421M): `vc-1`.
        case vc1
        /// VP9: `vp09`.
        case vp9
        /// AV1: `av01`.
        case av1
    }

    /// The codec whose bitstream the probe reads.
    public let codec: Codec

    /// What the sample entry's configuration tells the reader of each sample.
    enum Parameters: Sendable {
        /// H.264 or HEVC: the size of each NAL unit's length prefix, 1...4 bytes.
        case nalUnits(lengthSize: Int)
        case startCodes
        /// VC-1 advanced profile: the sequence header's INTERLACE flag.
        case vc1(interlace: Bool)
        /// AV1: the sequence header's reduced_still_picture_header, nil when no sequence
        /// header was found in `av1C`.
        case av1(reducedStillPictureHeader: Bool?)
    }

    let parameters: Parameters

    /// A probe for the entry `sampleEntryType` whose whole box (header included, as `stsd`
    /// keeps it: ``SampleDescriptionBox/Entry/bytes``) is `entryBytes`.
    ///
    /// nil when the entry's codec is not one whose key frames the bitstream tells cheaply
    /// (audio, intra-only, encrypted, unknown), or when the configuration the probe needs
    /// (`avcC`, `hvcC`, `dvc1`) is missing or unreadable: then trust the container's sync marks.
    public init?(sampleEntryType: FourCC, entryBytes: [UInt8]) {
        let entry = SampleDescriptionBox.Entry(format: sampleEntryType, bytes: entryBytes)
        guard Self.codec(of: sampleEntryType) != nil,
              let visual = try? VisualSampleEntry(parsing: entry) else { return nil }
        self.init(format: sampleEntryType, children: visual.children)
    }

    /// A probe for a parsed visual sample entry (``SampleDescription/video``); nil as for
    /// ``init(sampleEntryType:entryBytes:)``.
    public init?(sampleEntry: VisualSampleEntry) {
        self.init(format: sampleEntry.format, children: sampleEntry.children)
    }

    private init?(format: FourCC, children: [CodecConfigurationBox]) {
        guard let codec = Self.codec(of: format) else { return nil }
        func child(_ type: FourCC) -> [UInt8]? { children.first { $0.type == type }?.payload }
        switch codec {
        case .h264:
            // AVCDecoderConfigurationRecord (ISO/IEC 14496-15 § 5.3.3.1): byte 4 holds
            // lengthSizeMinusOne in its low 2 bits.
            guard let avcC = child(.avcC), avcC.count > 4 else { return nil }
            parameters = .nalUnits(lengthSize: Int(avcC[4] & 3) + 1)
        case .hevc:
            // HEVCDecoderConfigurationRecord (ISO/IEC 14496-15 § 8.3.3.1): byte 21.
            guard let hvcC = child(.hvcC), hvcC.count > 21 else { return nil }
            parameters = .nalUnits(lengthSize: Int(hvcC[21] & 3) + 1)
        case .mpeg4Visual:
            // mp4v also carries MPEG-1/2 video (ISO/IEC 14496-1 § 7.2.6.6.2, objectTypeIndication
            // 0x60...0x6A), whose pictures have no VOP: only 0x20 is MPEG-4 Visual. Without
            // a readable esds the stream itself is checked (no VOP found: nil).
            if let esds = child(.esds) {
                var reader = ByteReader(esds)
                if let descriptor = try? ElementaryStreamDescriptorBox(parsing: &reader),
                   descriptor.objectTypeIndication != 0x20 {
                    return nil
                }
            }
            parameters = .startCodes
        case .h263, .vp9:
            parameters = .startCodes
        case .vc1:
            guard let dvc1 = child(.dvc1), let interlace = VC1.interlace(inConfiguration: dvc1[...]) else {
                return nil
            }
            parameters = .vc1(interlace: interlace)
        case .av1:
            // AV1CodecConfigurationRecord (AV1 Codec ISO Media File Format Binding § 2.3.3):
            // four bytes, then configOBUs.
            let configOBUs = child(.av1C).map { $0.dropFirst(4) } ?? []
            parameters = .av1(reducedStillPictureHeader: AV1.reducedStillPictureHeader(in: configOBUs))
        }
        self.codec = codec
    }

    /// The codec family of a sample entry type; nil for the ones without a probe.
    static func codec(of format: FourCC) -> Codec? {
        switch format {
        case .avc1, .avc3: .h264
        case .hvc1, .hev1, .dvh1, .dvhe: .hevc
        case .mp4v: .mpeg4Visual
        case .s263, .h263, .h263QuickTime: .h263
        case .vc1: .vc1
        case .vp09: .vp9
        case .av01: .av1
        default: nil
        }
    }

    /// Whether `sample` can be decoded alone.
    ///
    /// - Returns: true when it is a random-access point (an IDR or IRAP picture, an I-VOP,
    ///   an INTRA picture, a key frame, or for H.264 a recovery point with
    ///   recovery_frame_cnt 0); false when it needs earlier frames; nil when the bytes do
    ///   not tell (malformed, truncated, or no picture header within the scan limits).
    public func isKeyFrame(_ sample: ArraySlice<UInt8>) -> Bool? {
        switch (codec, parameters) {
        case (.h264, .nalUnits(let lengthSize)): NALUnits.h264IsKeyFrame(sample, lengthSize: lengthSize)
        case (.hevc, .nalUnits(let lengthSize)): NALUnits.hevcIsKeyFrame(sample, lengthSize: lengthSize)
        case (.mpeg4Visual, _): StartCodes.mpeg4VisualIsKeyFrame(sample)
        case (.h263, _): StartCodes.h263IsKeyFrame(sample)
        case (.vc1, .vc1(let interlace)): VC1.isKeyFrame(sample, interlace: interlace)
        case (.vp9, _): VP9.isKeyFrame(sample)
        case (.av1, .av1(let reduced)): AV1.isKeyFrame(sample, reducedStillPictureHeader: reduced)
        default: nil
        }
    }

    /// Whether `sample` can be decoded alone: true when it is a random-access point, false
    /// when it needs earlier frames, nil when the bytes do not tell (the same answer as for
    /// the sample as an `ArraySlice`).
    public func isKeyFrame(_ sample: [UInt8]) -> Bool? {
        isKeyFrame(sample[...])
    }
}
