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

    /// The values of an item (its `data` boxes) typed by what its key holds (``TagKey/kind``),
    /// as iTunes and mutagen read them; `data` when they are not what the key expects (an
    /// item some writer got wrong is kept, not reinterpreted). A pair and a genre number are
    /// read whatever their data type, as mutagen (`__parse_pair`, `__parse_genre`) and FFmpeg
    /// read them: iTunes 6 wrote `gnre` as type 18. With ``displayText`` and
    /// ``ItemList``'s writer, the one table of what each item holds, read, shown and written.
    public init(values: [MetadataBox.Value], kind: TagKey.Kind) {
        let only = values.count == 1 ? values[0] : nil
        let type = only.map { $0.dataType & 0x00FF_FFFF }
        switch kind {
        case .text:
            let texts = values.compactMap { [0, 1, 2, 4, 5].contains($0.dataType & 0x00FF_FFFF) ? $0.text : nil }
            if !values.isEmpty && texts.count == values.count {
                self = .text(texts)
                return
            }
        case .integer:
            if let only, let type, [0, 21, 22].contains(type), let value = only.integer(signed: type != 22) {
                self = .integer(value)
                return
            }
        case .flag:
            if let only, let type, [0, 21, 22].contains(type), let value = only.integer(signed: false) {
                self = .flag(value != 0)
                return
            }
        case .pair:
            if let only, only.bytes.count >= 6 {
                let bytes = only.bytes
                self = .pair(number: UInt16(bytes[2]) << 8 | UInt16(bytes[3]),
                             total: UInt16(bytes[4]) << 8 | UInt16(bytes[5]))
                return
            }
        case .genreNumber:
            if let only, only.bytes.count == 2 {
                self = .genreNumber(UInt16(only.bytes[0]) << 8 | UInt16(only.bytes[1]))
                return
            }
        case .images:
            var images: [TagImage] = []
            for value in values {
                switch value.dataType & 0x00FF_FFFF {
                case 13: images.append(TagImage(format: .jpeg, bytes: value.bytes))
                case 14: images.append(TagImage(format: .png, bytes: value.bytes))
                case 0: if let image = TagImage(bytes: value.bytes) { images.append(image) }
                default: break
                }
            }
            if !values.isEmpty && images.count == values.count {
                self = .images(images)
                return
            }
        }
        self = .data(values)
    }

    /// One `data` value of an item with `key` as text, as `probe` lists it (after FFmpeg):
    /// typed as ``init(values:kind:)`` types it and shown as ``displayText`` shows it (a pair
    /// as "3/12", a flag as true or false, a genre number as its name, a number); none for
    /// images. A value its key does not type, or text: as its data type says — text
    /// (``MetadataBox/Value/text``), a signed (21) or unsigned (22) big-endian integer — else
    /// none. O(n) in the value's size.
    public static func text(of value: MetadataBox.Value, key: TagKey) -> String? {
        switch TagValue(values: [value], kind: key.kind) {
        case .images:
            return nil
        case .text, .data:
            switch value.dataType & 0x00FF_FFFF {
            case 21: return value.integer(signed: true).map { "\($0)" }
            case 22: return value.unsignedInteger.map { "\($0)" }
            default: return value.text
            }
        case let typed:
            return typed.displayText
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
