/// A four-character code: the type of a box, a brand, a handler or a codec.
///
/// Stored as the four bytes read big-endian into a `UInt32`, so that any value read from a
/// file is representable; ``description`` escapes bytes that are not printable ASCII.
public struct FourCC: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let rawValue: UInt32

    public init(rawValue: UInt32) {
        self.rawValue = rawValue
    }

    /// Creates a code from a four-character ASCII literal such as `"moov"`.
    public init(stringLiteral value: StaticString) {
        precondition(value.utf8CodeUnitCount == 4, "a FourCC literal has exactly four ASCII characters")
        var raw: UInt32 = 0
        value.withUTF8Buffer { bytes in
            for byte in bytes { raw = raw << 8 | UInt32(byte) }
        }
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

    /// The code as text; bytes outside printable ASCII appear as `\xNN`.
    public var description: String {
        var text = ""
        for byte in bytes {
            if byte >= 0x20 && byte < 0x7F {
                text.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                text += "\\x" + hex(byte)
            }
        }
        return text
    }
}

func hex(_ byte: UInt8) -> String {
    let digits = Array("0123456789abcdef")
    return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
}

/// The box, brand and handler types this package knows by name.
extension FourCC {
    public static let ftyp: FourCC = "ftyp"
    public static let moov: FourCC = "moov"
    public static let mdat: FourCC = "mdat"
    public static let free: FourCC = "free"
    public static let skip: FourCC = "skip"
    public static let wide: FourCC = "wide"
    public static let uuid: FourCC = "uuid"
    public static let mvhd: FourCC = "mvhd"
    public static let trak: FourCC = "trak"
    public static let tkhd: FourCC = "tkhd"
    public static let edts: FourCC = "edts"
    public static let elst: FourCC = "elst"
    public static let mdia: FourCC = "mdia"
    public static let mdhd: FourCC = "mdhd"
    public static let hdlr: FourCC = "hdlr"
    public static let minf: FourCC = "minf"
    public static let smhd: FourCC = "smhd"
    public static let dinf: FourCC = "dinf"
    public static let dref: FourCC = "dref"
    public static let stbl: FourCC = "stbl"
    public static let stsd: FourCC = "stsd"
    public static let stts: FourCC = "stts"
    public static let ctts: FourCC = "ctts"
    public static let stsc: FourCC = "stsc"
    public static let stsz: FourCC = "stsz"
    public static let stz2: FourCC = "stz2"
    public static let stco: FourCC = "stco"
    public static let co64: FourCC = "co64"
    public static let stss: FourCC = "stss"
    public static let sgpd: FourCC = "sgpd"
    public static let sbgp: FourCC = "sbgp"
    public static let esds: FourCC = "esds"
    public static let wave: FourCC = "wave"
    public static let frma: FourCC = "frma"
    public static let mvex: FourCC = "mvex"
    public static let moof: FourCC = "moof"

    // Sample entry formats.
    public static let mp4a: FourCC = "mp4a"
    public static let enca: FourCC = "enca"

    // Handler types (ISO/IEC 14496-12 § 8.4.3).
    public static let soun: FourCC = "soun"
    public static let vide: FourCC = "vide"

    // Brands.
    public static let quickTime: FourCC = "qt  "
    public static let m4a: FourCC = "M4A "
    public static let mp42: FourCC = "mp42"
    public static let isom: FourCC = "isom"

    // Data entries (ISO/IEC 14496-12 § 8.7.2).
    public static let url: FourCC = "url "
    public static let urn: FourCC = "urn "

    // Sample grouping types.
    public static let roll: FourCC = "roll"
}
