/// The key of an `ilst` item: its four-character code (`©nam`, `trkn`), or for a freeform
/// item (`----`) the `mean` and `name` it carries (`com.apple.iTunes`, `iTunSMPB`).
public enum TagKey: Hashable, Sendable, CustomStringConvertible {
    /// An item named by its box type.
    case code(FourCC)
    /// A freeform `----` item named by its `mean` and `name` children.
    case freeform(mean: String, name: String)

    /// What an item of this code holds (see ``TagValue``).
    public enum Kind: Sendable, Equatable {
        /// UTF-8 text (data type 1).
        case text
        /// A signed integer of the given width in bytes (data type 21).
        case integer(bytes: Int)
        /// A one-byte 0 or 1 (data type 21).
        case flag
        /// A number and a total (data type 0): `trkn` in 8 bytes, `disk` in 6.
        case pair(bytes: Int)
        /// An ID3v1 genre number from 1 (data type 0, 2 bytes).
        case genreNumber
        /// JPEG or PNG images.
        case images
    }

    /// A friendly name and the code it stands for.
    public struct Friendly: Sendable, Equatable {
        /// The name users type (`title`).
        public var name: String
        /// The item's code.
        public var code: FourCC
    }

    /// The friendly keys, in the order the `tag` command lists them. Names follow FFmpeg's
    /// metadata keys where FFmpeg has one (`album_artist`, `media_kind` is its `media_type`).
    public static let friendlyKeys: [Friendly] = [
        Friendly(name: "title", code: "©nam"),
        Friendly(name: "artist", code: "©ART"),
        Friendly(name: "album", code: "©alb"),
        Friendly(name: "album_artist", code: "aART"),
        Friendly(name: "date", code: "©day"),
        Friendly(name: "genre", code: "©gen"),
        Friendly(name: "track", code: "trkn"),
        Friendly(name: "disc", code: "disk"),
        Friendly(name: "comment", code: "©cmt"),
        Friendly(name: "composer", code: "©wrt"),
        Friendly(name: "lyrics", code: "©lyr"),
        Friendly(name: "grouping", code: "©grp"),
        Friendly(name: "bpm", code: "tmpo"),
        Friendly(name: "compilation", code: "cpil"),
        Friendly(name: "gapless", code: "pgap"),
        Friendly(name: "podcast", code: "pcst"),
        Friendly(name: "sort_title", code: "sonm"),
        Friendly(name: "sort_artist", code: "soar"),
        Friendly(name: "sort_album", code: "soal"),
        Friendly(name: "sort_album_artist", code: "soaa"),
        Friendly(name: "sort_composer", code: "soco"),
        Friendly(name: "copyright", code: "cprt"),
        Friendly(name: "encoder", code: "©too"),
        Friendly(name: "description", code: "desc"),
        Friendly(name: "long_description", code: "ldes"),
        Friendly(name: "media_kind", code: "stik"),
        Friendly(name: "rating", code: "rtng"),
        Friendly(name: "show", code: "tvsh"),
        Friendly(name: "season", code: "tvsn"),
        Friendly(name: "episode", code: "tves"),
        Friendly(name: "episode_id", code: "tven"),
        Friendly(name: "network", code: "tvnn"),
        Friendly(name: "cover", code: "covr"),
    ]

    /// Reads a key as users type it: a friendly name (``friendlyKeys``), four characters
    /// each at most U+00FF (`©nam`, with © as the byte 0xA9; not `uuid`), or `----:MEAN:NAME`.
    /// Nil for anything else (the caller lists the friendly names).
    public init?(parsing text: String) {
        if let friendly = Self.friendlyKeys.first(where: { $0.name == text }) {
            self = .code(friendly.code)
        } else if let code = FourCC(text), code != "----", code != "uuid" {
            // `uuid` is no item code: a box of that type has a 16-byte extended type after
            // its header for every ISO reader, which would hide the items after it.
            self = .code(code)
        } else if text.hasPrefix("----:") {
            let rest = text.dropFirst(5)
            guard let colon = rest.firstIndex(of: ":") else { return nil }
            let mean = String(rest[..<colon])
            let name = String(rest[rest.index(after: colon)...])
            guard !mean.isEmpty, !name.isEmpty else { return nil }
            self = .freeform(mean: mean, name: name)
        } else {
            return nil
        }
    }

    /// The friendly name of this key, where it has one.
    public var friendlyName: String? {
        guard case .code(let code) = self else { return nil }
        if code == "gnre" { return "genre" }
        return Self.friendlyKeys.first(where: { $0.code == code })?.name
    }

    /// The raw code as text: `©nam`, or `----:com.apple.iTunes:iTunSMPB`.
    public var description: String {
        switch self {
        case .code(let code): return code.description
        case .freeform(let mean, let name): return "----:\(mean):\(name)"
        }
    }

    /// What an item of this key holds; text for codes not listed (iTunes' text items and
    /// most others), and for freeform items.
    public var kind: Kind {
        guard case .code(let code) = self else { return .text }
        switch code {
        case "trkn": return .pair(bytes: 8)
        case "disk": return .pair(bytes: 6)
        case "tmpo": return .integer(bytes: 2)
        case "stik", "rtng", "akID", "shwm": return .integer(bytes: 1)
        case "tvsn", "tves", "cnID", "atID", "cmID", "geID", "sfID": return .integer(bytes: 4)
        case "plID": return .integer(bytes: 8)
        case "cpil", "pgap", "pcst", "hdvd": return .flag
        case "gnre": return .genreNumber
        case "covr": return .images
        default: return .text
        }
    }
}
