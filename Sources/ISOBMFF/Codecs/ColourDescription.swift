/// The colour description of a video track (ITU-T H.273 code points: colour primaries,
/// transfer characteristics, matrix coefficients), as a sample entry gives it: its `colr`
/// box of type `nclx` (ISO/IEC 14496-12 § 12.1.5) or `nclc` (QuickTime File Format, "Color
/// parameter atom"), else the codec configuration: the `vpcC` fields (VP codec ISOBMFF
/// binding § 2.2), or the VUI of the first sequence parameter set in an `avcC` (ITU-T H.264
/// § 7.3.2.1.1 and § E.1.1) or `hvcC` (ITU-T H.265 § 7.3.2.2.1 and § E.2.1).
///
/// Every parse reads through a bounded bit reader: a truncated or hostile parameter set
/// gives nil, never a trap; loops driven by counts in the bytes are capped at what the
/// specifications allow.
public struct ColourDescription: Sendable, Equatable {
    /// `colour_primaries` (1: BT.709, 9: BT.2020, 2: unspecified).
    public var colourPrimaries: UInt16
    /// `transfer_characteristics` (1: BT.709, 16: SMPTE ST 2084 (PQ), 18: ARIB STD-B67 (HLG)).
    public var transferCharacteristics: UInt16
    /// `matrix_coefficients` (1: BT.709, 9: BT.2020 non-constant luminance).
    public var matrixCoefficients: UInt16
    /// Where the description was found.
    public var origin: Origin

    /// Where a ``ColourDescription`` was read.
    public enum Origin: String, Sendable, Equatable {
        /// The sample entry's `colr` box (`nclx` or `nclc`).
        case colourBox = "colr"
        /// The `vpcC` configuration.
        case vpConfiguration = "vpcC"
        /// The VUI of the sequence parameter set in the `avcC` or `hvcC`.
        case sequenceParameterSet = "SPS"
    }

    /// A description from its code points.
    public init(colourPrimaries: UInt16, transferCharacteristics: UInt16, matrixCoefficients: UInt16,
                origin: Origin) {
        self.colourPrimaries = colourPrimaries
        self.transferCharacteristics = transferCharacteristics
        self.matrixCoefficients = matrixCoefficients
        self.origin = origin
    }

    /// The description of `entry`: its first `colr` box of type `nclx` or `nclc`, else its
    /// codec configuration's; nil when neither says (an ICC profile alone, no VUI colour
    /// description, a configuration too short or malformed).
    public init?(entry: VisualSampleEntry) {
        for child in entry.children where child.type == "colr" {
            if let found = Self(colourBox: child.payload[...]) {
                self = found
                return
            }
        }
        guard let configuration = entry.configuration else { return nil }
        let record = configuration.payload[...]
        switch configuration.type.description {
        case "avcC":
            guard let found = Self(avcConfiguration: record) else { return nil }
            self = found
        case "hvcC":
            guard let found = Self(hevcConfiguration: record) else { return nil }
            self = found
        case "vpcC":
            // A full box, version 1: profile, level, bitDepth/chromaSubsampling/fullRange,
            // colourPrimaries, transferCharacteristics, matrixCoefficients (8 bits each).
            let start = record.startIndex
            guard record.count >= 10, record[start] == 1 else { return nil }
            self.init(colourPrimaries: UInt16(record[start + 7]), transferCharacteristics: UInt16(record[start + 8]),
                      matrixCoefficients: UInt16(record[start + 9]), origin: .vpConfiguration)
        default:
            return nil
        }
    }

    /// From the payload of a `colr` box: `nclx` or `nclc`, then three 16-bit code points
    /// (`nclx` adds a full-range bit, not needed here); nil for `rICC`/`prof` (an ICC profile
    /// names no transfer function by code point) or fewer bytes.
    public init?(colourBox payload: ArraySlice<UInt8>) {
        let start = payload.startIndex
        guard payload.count >= 10 else { return nil }
        let type = String(decoding: payload[start..<start + 4], as: UTF8.self)
        guard type == "nclx" || type == "nclc" else { return nil }
        func field(_ offset: Int) -> UInt16 {
            UInt16(payload[start + offset]) << 8 | UInt16(payload[start + offset + 1])
        }
        self.init(colourPrimaries: field(4), transferCharacteristics: field(6), matrixCoefficients: field(8),
                  origin: .colourBox)
    }

    /// From the first SPS of an `AVCDecoderConfigurationRecord` (ISO/IEC 14496-15 § 5.3.3.1:
    /// five bytes, then `numOfSequenceParameterSets` in the low 5 bits and each set behind
    /// its 16-bit length); nil when the SPS has no VUI colour description.
    public init?(avcConfiguration record: ArraySlice<UInt8>) {
        let start = record.startIndex
        guard record.count >= 8, record[start + 5] & 0x1F > 0 else { return nil }
        let length = Int(record[start + 6]) << 8 | Int(record[start + 7])
        let first = start + 8
        guard length >= 2, length <= record.endIndex - first else { return nil }
        let nal = record[first..<first + length]
        guard nal[first] & 0x1F == 7 else { return nil }  // nal_unit_type 7: SPS
        let rbsp = Bitstream.unescaped(nal.dropFirst(), limit: Limits.parameterSetBytes)
        guard let found = Self.avcSequenceParameterSet(rbsp) else { return nil }
        self = found
    }

    /// From the first SPS (NAL unit type 33) of an `HEVCDecoderConfigurationRecord`
    /// (ISO/IEC 14496-15 § 8.3.3.1: 22 bytes, `numOfArrays`, then per array a type byte,
    /// a 16-bit count and each NAL unit behind its 16-bit length).
    public init?(hevcConfiguration record: ArraySlice<UInt8>) {
        guard record.count >= 23 else { return nil }
        var index = record.startIndex + 22
        let arrays = Int(record[index])
        index += 1
        for _ in 0..<arrays {
            guard record.endIndex - index >= 3 else { return nil }
            let type = record[index] & 0x3F
            let count = Int(record[index + 1]) << 8 | Int(record[index + 2])
            index += 3
            for _ in 0..<count {
                guard record.endIndex - index >= 2 else { return nil }
                let length = Int(record[index]) << 8 | Int(record[index + 1])
                index += 2
                guard length <= record.endIndex - index else { return nil }
                let nal = record[index..<index + length]
                index += length
                guard type == 33, nal.count > 2 else { continue }
                let rbsp = Bitstream.unescaped(nal.dropFirst(2), limit: Limits.parameterSetBytes)
                guard let found = Self.hevcSequenceParameterSet(rbsp) else { return nil }
                self = found
                return
            }
        }
        return nil
    }

    /// `seq_parameter_set_data()` of H.264 (§ 7.3.2.1.1) up to its VUI, from the byte after
    /// the NAL unit header.
    static func avcSequenceParameterSet(_ rbsp: ArraySlice<UInt8>) -> ColourDescription? {
        var r = BitReader(rbsp)
        guard let profile = r.bits(8), r.skip(16), r.unsignedExpGolomb() != nil else { return nil }
        if [100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135].contains(profile) {
            guard let chroma = r.unsignedExpGolomb() else { return nil }
            if chroma == 3 { guard r.skip(1) else { return nil } }  // separate_colour_plane_flag
            // bit_depth_luma_minus8, bit_depth_chroma_minus8, qpprime_y_zero_transform_bypass_flag
            guard r.unsignedExpGolomb() != nil, r.unsignedExpGolomb() != nil, r.skip(1),
                  let matrices = r.bit() else { return nil }
            if matrices == 1 {
                for list in 0..<(chroma == 3 ? 12 : 8) {
                    guard let present = r.bit() else { return nil }
                    if present == 1, !skipAVCScalingList(&r, size: list < 6 ? 16 : 64) { return nil }
                }
            }
        }
        guard r.unsignedExpGolomb() != nil, let orderType = r.unsignedExpGolomb() else { return nil }
        switch orderType {
        case 0:
            guard r.unsignedExpGolomb() != nil else { return nil }  // log2_max_pic_order_cnt_lsb_minus4
        case 1:
            // delta_pic_order_always_zero_flag, offset_for_non_ref_pic, offset_for_top_to_bottom_field
            guard r.skip(1), r.signedExpGolomb() != nil, r.signedExpGolomb() != nil,
                  let cycle = r.unsignedExpGolomb(), cycle <= 255 else { return nil }  // § 7.4.2.1.1: 0…255
            for _ in 0..<cycle { guard r.signedExpGolomb() != nil else { return nil } }
        case 2:
            break
        default:
            return nil
        }
        // max_num_ref_frames, gaps_in_frame_num_value_allowed_flag, pic_width_in_mbs_minus1,
        // pic_height_in_map_units_minus1, frame_mbs_only_flag
        guard r.unsignedExpGolomb() != nil, r.skip(1), r.unsignedExpGolomb() != nil, r.unsignedExpGolomb() != nil,
              let frameOnly = r.bit() else { return nil }
        if frameOnly == 0 { guard r.skip(1) else { return nil } }  // mb_adaptive_frame_field_flag
        guard r.skip(1), let cropping = r.bit() else { return nil }  // direct_8x8_inference_flag
        if cropping == 1 {
            for _ in 0..<4 { guard r.unsignedExpGolomb() != nil else { return nil } }
        }
        guard r.bit() == 1 else { return nil }  // vui_parameters_present_flag
        return videoSignal(&r)
    }

    /// Skips `scaling_list()` (H.264 § 7.3.2.1.1.1): `size` deltas until one makes the next
    /// scale 0.
    static func skipAVCScalingList(_ r: inout BitReader, size: Int) -> Bool {
        var last: Int64 = 8
        var next: Int64 = 8
        for _ in 0..<size where next != 0 {
            guard let delta = r.signedExpGolomb() else { return false }
            // |delta| < 2^32: the sum fits an Int64; the remainder is taken as the spec does.
            next = ((last + delta + 256) % 256 + 256) % 256
            if next != 0 { last = next }
        }
        return true
    }

    /// `seq_parameter_set_rbsp()` of H.265 (§ 7.3.2.2.1) up to its VUI, from the byte after
    /// the two-byte NAL unit header.
    static func hevcSequenceParameterSet(_ rbsp: ArraySlice<UInt8>) -> ColourDescription? {
        var r = BitReader(rbsp)
        guard r.skip(4), let sublayers = r.bits(3), r.skip(1) else { return nil }
        // profile_tier_level(1, sps_max_sub_layers_minus1) (§ 7.3.3): 96 bits of general
        // profile, tier and level, the sub-layer flags, then each sub-layer's 88 and 8 bits.
        guard r.skip(96) else { return nil }
        var present: [(profile: UInt32, level: UInt32)] = []
        for _ in 0..<sublayers {
            guard let profile = r.bit(), let level = r.bit() else { return nil }
            present.append((profile, level))
        }
        if sublayers > 0 { guard r.skip(2 * (8 - Int(sublayers))) else { return nil } }
        for flags in present {
            guard r.skip(flags.profile == 1 ? 88 : 0), r.skip(flags.level == 1 ? 8 : 0) else { return nil }
        }
        guard r.unsignedExpGolomb() != nil, let chroma = r.unsignedExpGolomb() else { return nil }
        if chroma == 3 { guard r.skip(1) else { return nil } }
        // pic_width_in_luma_samples, pic_height_in_luma_samples, conformance_window_flag
        guard r.unsignedExpGolomb() != nil, r.unsignedExpGolomb() != nil, let window = r.bit() else { return nil }
        if window == 1 {
            for _ in 0..<4 { guard r.unsignedExpGolomb() != nil else { return nil } }
        }
        // bit depths, log2_max_pic_order_cnt_lsb_minus4, sps_sub_layer_ordering_info_present_flag
        guard r.unsignedExpGolomb() != nil, r.unsignedExpGolomb() != nil, let orderBits = r.unsignedExpGolomb(),
              orderBits <= 12, let ordering = r.bit() else { return nil }  // § 7.4.3.2.1: 0…12
        for _ in (ordering == 1 ? 0 : sublayers)...sublayers {
            for _ in 0..<3 { guard r.unsignedExpGolomb() != nil else { return nil } }
        }
        // Coding and transform block sizes, transform hierarchy depths.
        for _ in 0..<6 { guard r.unsignedExpGolomb() != nil else { return nil } }
        guard let scaling = r.bit() else { return nil }
        if scaling == 1 {
            guard let data = r.bit() else { return nil }
            if data == 1, !skipHEVCScalingListData(&r) { return nil }
        }
        guard r.skip(2), let pcm = r.bit() else { return nil }  // amp, sample_adaptive_offset
        if pcm == 1 {
            guard r.skip(8), r.unsignedExpGolomb() != nil, r.unsignedExpGolomb() != nil, r.skip(1) else { return nil }
        }
        guard let setCount = r.unsignedExpGolomb(), setCount <= 64 else { return nil }  // § 7.4.3.2.1: 0…64
        var deltaPictures: [Int] = []
        for index in 0..<Int(setCount) {
            guard let count = skipShortTermReferenceSet(&r, index: index, previous: deltaPictures) else { return nil }
            deltaPictures.append(count)
        }
        guard let longTerm = r.bit() else { return nil }
        if longTerm == 1 {
            guard let count = r.unsignedExpGolomb(), count <= 32 else { return nil }  // § 7.4.3.2.1: 0…32
            for _ in 0..<count { guard r.skip(Int(orderBits) + 4 + 1) else { return nil } }
        }
        // sps_temporal_mvp_enabled_flag, strong_intra_smoothing_enabled_flag
        guard r.skip(2), r.bit() == 1 else { return nil }  // vui_parameters_present_flag
        return videoSignal(&r)
    }

    /// Skips `scaling_list_data()` (H.265 § 7.3.4).
    static func skipHEVCScalingListData(_ r: inout BitReader) -> Bool {
        for sizeID in 0..<4 {
            for _ in stride(from: 0, to: 6, by: sizeID == 3 ? 3 : 1) {
                guard let predicted = r.bit() else { return false }
                if predicted == 0 {
                    guard r.unsignedExpGolomb() != nil else { return false }  // scaling_list_pred_matrix_id_delta
                    continue
                }
                if sizeID > 1 { guard r.signedExpGolomb() != nil else { return false } }  // dc_coef_minus8
                for _ in 0..<min(64, 1 << (4 + (sizeID << 1))) {
                    guard r.signedExpGolomb() != nil else { return false }
                }
            }
        }
        return true
    }

    /// Skips `st_ref_pic_set(index)` (H.265 § 7.3.7) and returns its NumDeltaPocs (§ 7.4.8:
    /// with prediction, the number of entries of the reference set whose `use_delta_flag` is
    /// 1, inferred 1 when `used_by_curr_pic_flag` is); nil when malformed.
    static func skipShortTermReferenceSet(_ r: inout BitReader, index: Int, previous: [Int]) -> Int? {
        var predicted: UInt32 = 0
        if index != 0 { guard let flag = r.bit() else { return nil }; predicted = flag }
        if predicted == 1 {
            // In an SPS delta_idx_minus1 is absent (inferred 0): the reference is the set before.
            guard r.skip(1), r.unsignedExpGolomb() != nil, let reference = previous.last else { return nil }
            var count = 0
            for _ in 0...reference {
                guard let used = r.bit() else { return nil }
                var useDelta: UInt32 = 1
                if used == 0 { guard let flag = r.bit() else { return nil }; useDelta = flag }
                if used == 1 || useDelta == 1 { count += 1 }
            }
            return count
        }
        guard let negative = r.unsignedExpGolomb(), let positive = r.unsignedExpGolomb(),
              negative <= 16, positive <= 16 else { return nil }  // § 7.4.8: at most sps_max_dec_pic_buffering
        for _ in 0..<(negative + positive) {
            guard r.unsignedExpGolomb() != nil, r.skip(1) else { return nil }
        }
        return Int(negative + positive)
    }

    /// The start of `vui_parameters()` shared by H.264 (§ E.1.1) and H.265 (§ E.2.1), up to
    /// the colour description; nil when `colour_description_present_flag` is 0.
    static func videoSignal(_ r: inout BitReader) -> ColourDescription? {
        guard let aspect = r.bit() else { return nil }
        if aspect == 1 {
            guard let idc = r.bits(8) else { return nil }
            if idc == 255 { guard r.skip(32) else { return nil } }  // Extended_SAR: sar_width, sar_height
        }
        guard let overscan = r.bit() else { return nil }
        if overscan == 1 { guard r.skip(1) else { return nil } }
        // video_signal_type_present_flag, video_format, video_full_range_flag, colour_description_present_flag
        guard r.bit() == 1, r.skip(4), r.bit() == 1, let primaries = r.bits(8), let transfer = r.bits(8),
              let matrix = r.bits(8) else { return nil }
        return ColourDescription(colourPrimaries: UInt16(primaries), transferCharacteristics: UInt16(transfer),
                                 matrixCoefficients: UInt16(matrix), origin: .sequenceParameterSet)
    }

    /// The HLS `VIDEO-RANGE` (RFC 8216bis § 4.4.6.2) of the transfer characteristics: `PQ`
    /// for 16 (SMPTE ST 2084), `HLG` for 18 (ARIB STD-B67), `SDR` otherwise.
    public var videoRange: String {
        switch transferCharacteristics {
        case 16: "PQ"
        case 18: "HLG"
        default: "SDR"
        }
    }
}

extension Limits {
    /// The most bytes of a parameter set unescaped to read its VUI: an SPS with scaling
    /// lists and reference picture sets takes a few hundred.
    public static let parameterSetBytes = 4096
}
