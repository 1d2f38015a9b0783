/// The typed value of one iTunes-style `ilst` item (QuickTime File Format, "Metadata";
/// the well-known data types 0 implicit, 1 UTF-8, 13 JPEG, 14 PNG, 21 signed integer).
///
/// Which case an item holds follows from its code, as iTunes, mutagen and FFmpeg read them:
/// `trkn`/`disk` are pairs, `tmpo`/`stik`/`rtng`/… integers, `cpil`/`pgap` flags, `gnre` a
/// genre number, `covr` images, text items text, freeform items (`----`) text when every
/// `data` box is text, else their `data` boxes as they are.
public enum TagValue: Sendable, Equatable {
    /// UTF-8 text, one string per `data` box (most items hold one).
    case text([String])
    /// A big-endian integer (data type 21), written in the width its code takes.
    case integer(Int64)
    /// A boolean stored as a one-byte integer: `cpil`, `pgap`, `pcst`, `hdvd`.
    case flag(Bool)
    /// A number and a total (`trkn`, `disk`): 16 bits each, 0 for "no total".
    case pair(number: UInt16, total: UInt16)
    /// `gnre`: an ID3v1 genre numbered from 1.
    case genreNumber(UInt16)
    /// Cover images (`covr`), one per `data` box.
    case images([TagImage])
    /// `data` boxes kept as they are: their type, locale and bytes.
    case data([MetadataBox.Value])

    /// The value as text, as the `tag` command prints it: text joined by " / ", a pair as
    /// "3/12" (or "3" without total), a flag as true/false, a genre number as its ID3v1
    /// name, images as their formats and sizes. O(n) in the value's size.
    public var displayText: String {
        switch self {
        case .text(let strings):
            return strings.joined(separator: " / ")
        case .integer(let value):
            return "\(value)"
        case .flag(let value):
            return value ? "true" : "false"
        case .pair(let number, let total):
            return total > 0 ? "\(number)/\(total)" : "\(number)"
        case .genreNumber(let number):
            return TagValue.genreName(number) ?? "\(number)"
        case .images(let images):
            return images.map { "\($0.format.rawValue) image, \($0.byteCount) bytes" }.joined(separator: "; ")
        case .data(let values):
            return values.map { value in value.text ?? "\(value.bytes.count) bytes of type \(value.dataType)" }
                .joined(separator: " / ")
        }
    }

    /// The ID3v1 genre that `gnre` numbers from 1; nil outside 1…80.
    public static func genreName(_ number: UInt16) -> String? {
        number >= 1 && Int(number) <= id3Genres.count ? id3Genres[Int(number) - 1] : nil
    }

    /// The genres of ID3v1 (0–79), which `gnre` numbers from 1.
    public static let id3Genres = [
        "Blues", "Classic Rock", "Country", "Dance", "Disco", "Funk", "Grunge", "Hip-Hop", "Jazz", "Metal",
        "New Age", "Oldies", "Other", "Pop", "R&B", "Rap", "Reggae", "Rock", "Techno", "Industrial",
        "Alternative", "Ska", "Death Metal", "Pranks", "Soundtrack", "Euro-Techno", "Ambient", "Trip-Hop", "Vocal",
        "Jazz+Funk", "Fusion", "Trance", "Classical", "Instrumental", "Acid", "House", "Game", "Sound Clip",
        "Gospel", "Noise", "AlternRock", "Bass", "Soul", "Punk", "Space", "Meditative", "Instrumental Pop",
        "Instrumental Rock", "Ethnic", "Gothic", "Darkwave", "Techno-Industrial", "Electronic", "Pop-Folk",
        "Eurodance", "Dream", "Southern Rock", "Comedy", "Cult", "Gangsta", "Top 40", "Christian Rap",
        "Pop/Funk", "Jungle", "Native American", "Cabaret", "New Wave", "Psychadelic", "Rave", "Showtunes",
        "Trailer", "Lo-Fi", "Tribal", "Acid Punk", "Acid Jazz", "Polka", "Retro", "Musical", "Rock & Roll",
        "Hard Rock",
    ]
}

/// A cover image (`covr`): JPEG (data type 13) or PNG (14), told apart by their signatures.
public struct TagImage: Sendable, Equatable {
    /// The image formats `covr` holds.
    public enum Format: String, Sendable, Equatable {
        /// JPEG (data type 13).
        case jpeg = "JPEG"
        /// PNG (data type 14).
        case png = "PNG"

        /// The `data` box type indicator (QuickTime File Format, "Well-known types").
        public var dataType: UInt32 { self == .jpeg ? 13 : 14 }
    }

    /// An image left in its file until it is written: the writer copies its bytes into the
    /// `covr` item's `data` box through its copy buffer, so that a cover of any size costs
    /// no memory of its size (issue 28). Only `TagFile.edit` streams them; the other writers
    /// read them first.
    public struct Streamed: Sendable, Equatable {
        /// The image file, as given.
        public var path: String
        /// Its length, which the writer checks again before copying.
        public var count: UInt64
        /// Where the image's bytes start in the file being edited, for a cover the file
        /// already holds and the edit keeps (`path` is then empty): the writer copies them
        /// from there as they are, unchecked (a damaged cover is kept, not judged).
        public var keptAt: UInt64?

        /// The image in the file at `path`, of `count` bytes.
        public init(path: String, count: UInt64) {
            self.path = path
            self.count = count
        }

        /// The cover of `count` bytes at `offset` of the file being edited, left there.
        public init(keptAt offset: UInt64, count: UInt64) {
            path = ""
            self.count = count
            keptAt = offset
        }
    }

    /// The image's format.
    public var format: Format
    /// The image file's bytes; empty for a ``streamed`` image.
    public var bytes: [UInt8]
    /// The file a streamed image's bytes stay in; nil when they are ``bytes``.
    public var streamed: Streamed?

    /// The image's size in bytes, held or streamed.
    public var byteCount: UInt64 { streamed?.count ?? UInt64(bytes.count) }

    /// An image whose format is known.
    public init(format: Format, bytes: [UInt8]) {
        self.format = format
        self.bytes = bytes
    }

    /// An image of `format` left in its file (``Streamed``), checked where it is read.
    public init(format: Format, streamed: Streamed) {
        self.format = format
        bytes = []
        self.streamed = streamed
    }

    /// An image from a file's bytes: JPEG when they start FF D8 FF, PNG when they start with
    /// PNG's eight-byte signature; nil for anything else.
    public init?(bytes: [UInt8]) {
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) {
            self.init(format: .jpeg, bytes: bytes)
        } else if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            self.init(format: .png, bytes: bytes)
        } else {
            return nil
        }
    }
}
