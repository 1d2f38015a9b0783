/// A four-character code: the type of a box, a brand, a handler or a codec.
///
/// Stored as the four bytes read big-endian into a `UInt32`, so that any value read from a
/// file is representable; ``description`` escapes the bytes that are neither printable
/// ASCII nor `©`.
public struct FourCC: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The four bytes read big-endian: the first character in the most significant byte.
    public let rawValue: UInt32

    /// A code from its big-endian bytes; any value is allowed, as a file may hold any.
    public init(rawValue: UInt32) {
        self.rawValue = rawValue
    }

    /// Creates a code from a literal of four characters, each one byte: printable ASCII
    /// (`"moov"`) or a Latin-1 character, as in Apple's item types (`"©nam"`, whose `©` is
    /// the byte 0xA9). Only a wrong literal traps — a mistake in the source, never in a file;
    /// codes built at run time go through ``init(_:)``, which returns nil instead.
    public init(stringLiteral value: StaticString) {
        // The common case, four ASCII bytes, without building a String: switches over
        // literals (`case "mdat":`) construct the code each time they are evaluated.
        if value.hasPointerRepresentation && value.utf8CodeUnitCount == 4 {
            let raw = value.withUTF8Buffer { bytes -> UInt32? in
                var raw: UInt32 = 0
                for byte in bytes {
                    guard byte < 0x80 else { return nil }
                    raw = raw << 8 | UInt32(byte)
                }
                return raw
            }
            if let raw {
                self.rawValue = raw
                return
            }
        }
        guard let code = FourCC(value.description) else {
            preconditionFailure("a FourCC literal has exactly four characters, each U+0000 to U+00FF: \"\(value)\"")
        }
        self = code
    }

    /// A code from text made at run time: four Unicode scalars, each at most U+00FF, give
    /// the four bytes (Latin-1, so that `"©nam"` is 0xA9 6E 61 6D). Nil for any other
    /// string: fewer or more scalars, or one outside Latin-1.
    public init?(_ string: String) {
        var raw: UInt32 = 0
        var count = 0
        for scalar in string.unicodeScalars {
            guard count < 4, scalar.value <= 0xFF else { return nil }
            raw = raw << 8 | scalar.value
            count += 1
        }
        guard count == 4 else { return nil }
        self.rawValue = raw
    }

    /// The four bytes in file order.
    public var bytes: [UInt8] {
        [UInt8(truncatingIfNeeded: rawValue >> 24), UInt8(truncatingIfNeeded: rawValue >> 16),
         UInt8(truncatingIfNeeded: rawValue >> 8), UInt8(truncatingIfNeeded: rawValue)]
    }

    /// Whether all four bytes are printable ASCII, as in every registered type.
    public var isPrintable: Bool {
        bytes.allSatisfy { $0 >= 0x20 && $0 < 0x7F }
    }

    /// The code as text: printable ASCII as it is, 0xA9 as `©` (the byte that starts
    /// Apple's text item types, `©nam`), any other byte as `\xNN`. What it prints for
    /// those two kinds, ``init(_:)`` reads back as the same code.
    public var description: String {
        var text = ""
        for byte in bytes {
            if byte >= 0x20 && byte < 0x7F || byte == 0xA9 {
                text.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                text += "\\x" + byte.hexDigits()
            }
        }
        return text
    }
}

/// The box, brand and handler types this package knows by name.
extension FourCC {
    /// `ftyp`: the file type box (§ 4.3).
    public static let ftyp: FourCC = "ftyp"
    /// `moov`: the movie box, holding all metadata (§ 8.2.1).
    public static let moov: FourCC = "moov"
    /// `mdat`: media data, the samples themselves (§ 8.1.1).
    public static let mdat: FourCC = "mdat"
    /// `free`: free space, ignored by readers (§ 8.1.2).
    public static let free: FourCC = "free"
    /// `skip`: free space, like `free` (§ 8.1.2).
    public static let skip: FourCC = "skip"
    /// `wide`: QuickTime's 8 bytes of room for an `mdat` header to grow to 64 bits.
    public static let wide: FourCC = "wide"
    /// `uuid`: a user extension box whose real type is a 16-byte UUID (§ 4.2).
    public static let uuid: FourCC = "uuid"
    /// `mvhd`: the movie header (§ 8.2.2).
    public static let mvhd: FourCC = "mvhd"
    /// `trak`: one track (§ 8.3.1).
    public static let trak: FourCC = "trak"
    /// `tkhd`: the track header (§ 8.3.2).
    public static let tkhd: FourCC = "tkhd"
    /// `edts`: the edit box, holding `elst` (§ 8.6.5).
    public static let edts: FourCC = "edts"
    /// `elst`: the edit list (§ 8.6.6).
    public static let elst: FourCC = "elst"
    /// `mdia`: the media box (§ 8.4.1).
    public static let mdia: FourCC = "mdia"
    /// `mdhd`: the media header (§ 8.4.2).
    public static let mdhd: FourCC = "mdhd"
    /// `hdlr`: the handler reference, the kind of media (§ 8.4.3).
    public static let hdlr: FourCC = "hdlr"
    /// `minf`: the media information box (§ 8.4.4).
    public static let minf: FourCC = "minf"
    /// `smhd`: the sound media header (§ 12.2.2).
    public static let smhd: FourCC = "smhd"
    /// `dinf`: the data information box, holding `dref` (§ 8.7.1).
    public static let dinf: FourCC = "dinf"
    /// `dref`: the data references (§ 8.7.2).
    public static let dref: FourCC = "dref"
    /// `stbl`: the sample table box (§ 8.5.1).
    public static let stbl: FourCC = "stbl"
    /// `stsd`: the sample descriptions (§ 8.5.2).
    public static let stsd: FourCC = "stsd"
    /// `stts`: decoding time to sample (§ 8.6.1.2).
    public static let stts: FourCC = "stts"
    /// `ctts`: composition time to sample (§ 8.6.1.3).
    public static let ctts: FourCC = "ctts"
    /// `stsc`: sample to chunk (§ 8.7.4).
    public static let stsc: FourCC = "stsc"
    /// `stsz`: sample sizes (§ 8.7.3.2).
    public static let stsz: FourCC = "stsz"
    /// `stz2`: compact sample sizes (§ 8.7.3.3).
    public static let stz2: FourCC = "stz2"
    /// `stco`: 32-bit chunk offsets (§ 8.7.5).
    public static let stco: FourCC = "stco"
    /// `co64`: 64-bit chunk offsets (§ 8.7.5).
    public static let co64: FourCC = "co64"
    /// `stss`: sync samples (§ 8.6.2).
    public static let stss: FourCC = "stss"
    /// `stps`: QuickTime's partial sync samples (open-GOP key frames).
    public static let stps: FourCC = "stps"
    /// `sgpd`: sample group descriptions (§ 8.9.3).
    public static let sgpd: FourCC = "sgpd"
    /// `sbgp`: sample to group (§ 8.9.2).
    public static let sbgp: FourCC = "sbgp"
    /// `esds`: the MPEG-4 elementary stream descriptor (ISO/IEC 14496-14 § 5.6).
    public static let esds: FourCC = "esds"
    /// `wave`: QuickTime's sound description extension, which wraps `frma` and `esds`.
    public static let wave: FourCC = "wave"
    /// `frma`: the original format of a wrapped or protected entry (§ 8.12.2).
    public static let frma: FourCC = "frma"
    /// `mvex`: movie extends, present when the file has fragments (§ 8.8.1).
    public static let mvex: FourCC = "mvex"
    /// `moof`: a movie fragment (§ 8.8.4).
    public static let moof: FourCC = "moof"

    // Sample entry formats.
    /// `mp4a`: the MPEG-4 audio sample entry (ISO/IEC 14496-14 § 5.6).
    public static let mp4a: FourCC = "mp4a"
    /// `enca`: an encrypted audio sample entry (§ 8.12, ISO/IEC 23001-7).
    public static let enca: FourCC = "enca"

    // Handler types (ISO/IEC 14496-12 § 8.4.3).
    /// `soun`: the audio handler (§ 12.2).
    public static let soun: FourCC = "soun"
    /// `vide`: the video handler (§ 12.1).
    public static let vide: FourCC = "vide"

    // Brands.
    /// `qt  `: the QuickTime movie brand (QuickTime File Format).
    public static let quickTime: FourCC = "qt  "
    /// `M4A `: Apple's brand for MPEG-4 audio files.
    public static let m4a: FourCC = "M4A "
    /// `mp42`: the MP4 version 2 brand (ISO/IEC 14496-14).
    public static let mp42: FourCC = "mp42"
    /// `isom`: the ISO base media file format brand (Annex E).
    public static let isom: FourCC = "isom"

    // Data entries (ISO/IEC 14496-12 § 8.7.2).
    /// `url `: a data entry locating media by URL, or in this file with flag 1 (§ 8.7.2).
    public static let url: FourCC = "url "
    /// `urn `: a data entry locating media by name (§ 8.7.2).
    public static let urn: FourCC = "urn "

    // Sample grouping types.
    /// `roll`: the roll recovery sample group; for audio, the pre-roll before a seek point (§ 10.1).
    public static let roll: FourCC = "roll"
}

/// Video sample entry formats and the configuration boxes they carry, for the codecs whose
/// key frames ``KeyFrameProbe`` reads.
extension FourCC {
    /// `avc1`: H.264 with parameter sets in `avcC` only (ISO/IEC 14496-15 § 5.4.2).
    public static let avc1: FourCC = "avc1"
    /// `avc3`: H.264 with parameter sets in the samples too (ISO/IEC 14496-15 § 5.4.2).
    public static let avc3: FourCC = "avc3"
    /// `avcC`: the AVC decoder configuration record (ISO/IEC 14496-15 § 5.3.3).
    public static let avcC: FourCC = "avcC"
    /// `hvc1`: HEVC with parameter sets in `hvcC` only (ISO/IEC 14496-15 § 8.4.1).
    public static let hvc1: FourCC = "hvc1"
    /// `hev1`: HEVC with parameter sets in the samples too (ISO/IEC 14496-15 § 8.4.1).
    public static let hev1: FourCC = "hev1"
    /// `dvh1`: Dolby Vision over HEVC, parameter sets in the entry (Dolby Vision in ISOBMFF).
    public static let dvh1: FourCC = "dvh1"
    /// `dvhe`: Dolby Vision over HEVC, parameter sets in the samples too.
    public static let dvhe: FourCC = "dvhe"
    /// `hvcC`: the HEVC decoder configuration record (ISO/IEC 14496-15 § 8.3.3).
    public static let hvcC: FourCC = "hvcC"
    /// `mp4v`: MPEG-4 Visual, or another MPEG video named by its `esds` (ISO/IEC 14496-14 § 5.6).
    public static let mp4v: FourCC = "mp4v"
    /// `s263`: H.263 in 3GPP files (3GPP TS 26.244 § 6.6).
    public static let s263: FourCC = "s263"
    /// `h263`: H.263 as some writers name it in ISO files.
    public static let h263: FourCC = "h263"
    /// `H263`: H.263 in QuickTime movies (what FFmpeg's mov muxer writes for H.263+).
    public static let h263QuickTime: FourCC = "H263"
    /// `vc-1`: SMPTE VC-1 (SMPTE RP 2025), configured by `dvc1`.
    public static let vc1: FourCC = "vc-1"
    /// `dvc1`: the VC-1 decoder specific structure (SMPTE RP 2025 § 6).
    public static let dvc1: FourCC = "dvc1"
    /// `vp09`: VP9 (VP Codec ISO Media File Format Binding § 2.2), configured by `vpcC`.
    public static let vp09: FourCC = "vp09"
    /// `av01`: AV1 (AV1 Codec ISO Media File Format Binding § 2.2), configured by `av1C`.
    public static let av01: FourCC = "av01"
    /// `av1C`: the AV1 codec configuration record (AV1 ISOBMFF binding § 2.3).
    public static let av1C: FourCC = "av1C"
}
