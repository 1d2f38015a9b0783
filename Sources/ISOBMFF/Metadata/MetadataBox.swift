/// A `meta` box as Apple's metadata uses it (QuickTime File Format, "Metadata"): a handler
/// (`mdir` for iTunes-style items, `mdta` for keys-based ones), for `mdta` a `keys` box
/// naming the keys, and an `ilst` whose items hold `data` boxes.
///
/// iTunes-style items are named by their box type (`©nam`, `trkn`, or `----` with `mean`
/// and `name` children); keys-based items by their box type read as a 1-based index into
/// `keys` (`com.apple.quicktime.make`, …). Bounded: at most
/// ``Limits/maximumMetadataItems`` items and keys; `keys` counts are checked against the
/// bytes the box holds.
public struct MetadataBox: Sendable, Equatable {
    /// One value of an item: a `data` box's type indicator (1 = UTF-8, 21 = signed
    /// big-endian integer, 13/14 = JPEG/PNG, 0 = implicit, …), its locale and its bytes.
    public struct Value: Sendable, Equatable {
        /// The type indicator (1 = UTF-8, 21 = signed integer, 13/14 = JPEG/PNG, 0 = implicit).
        public var dataType: UInt32
        /// The locale field (0: any).
        public var locale: UInt32
        /// The value's bytes, after the type and locale.
        public var bytes: [UInt8]

        /// A value from its fields.
        public init(dataType: UInt32, locale: UInt32 = 0, bytes: [UInt8]) {
            self.dataType = dataType
            self.locale = locale
            self.bytes = bytes
        }

        /// The value as text, for the type indicators that name text (QuickTime File Format,
        /// "Well-known types"): 1 UTF-8 and 4 UTF-8 sort key; 2 UTF-16 and 5 UTF-16 sort key
        /// (big-endian, or as a byte-order mark says), converted; 0, the implicit type some
        /// encoders write for `iTunSMPB`, when its bytes are UTF-8 text (no control bytes
        /// but tab and line breaks, NULs only at the end), so an integer or image stays
        /// binary. Nil for other types (3, Shift-JIS, is not decoded) and for odd-length
        /// UTF-16. FFmpeg reads type 0 as text too, and a freeform (`----`) item whatever
        /// its type. O(n) in the bytes.
        public var text: String? {
            switch dataType & 0x00FF_FFFF {  // The top byte is the box's version (0).
            case 1, 4:
                return String(decoding: bytes, as: UTF8.self)
            case 2, 5:
                return Self.utf16Text(bytes)
            case 0:
                return Self.implicitText(bytes)
            default:
                return nil
            }
        }

        /// The bytes as a big-endian integer of 1, 2, 3, 4 or 8 bytes (the widths of data types
        /// 21, signed, and 22, unsigned), sign-extended when `signed`; nil for other widths and
        /// for an unsigned value past `Int64.max`.
        public func integer(signed: Bool) -> Int64? {
            guard let unsigned = unsignedInteger else { return nil }
            guard signed else { return Int64(exactly: unsigned) }
            let shift = UInt64(64 - 8 * bytes.count)  // 0 to 56: the width is 1 to 8 bytes.
            return Int64(bitPattern: unsigned << shift) >> Int64(shift)
        }

        /// The bytes as an unsigned big-endian integer of 1, 2, 3, 4 or 8 bytes; nil for
        /// other widths.
        public var unsignedInteger: UInt64? {
            guard [1, 2, 3, 4, 8].contains(bytes.count) else { return nil }
            return bytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        }

        /// UTF-16 text: big-endian unless a byte-order mark says otherwise; nil for an odd
        /// byte count. Invalid sequences become U+FFFD.
        static func utf16Text(_ bytes: [UInt8]) -> String? {
            guard bytes.count % 2 == 0 else { return nil }
            var littleEndian = false
            var start = 0
            if bytes.count >= 2 && (bytes[0], bytes[1]) == (0xFF, 0xFE) {
                (littleEndian, start) = (true, 2)
            } else if bytes.count >= 2 && (bytes[0], bytes[1]) == (0xFE, 0xFF) {
                start = 2
            }
            var units: [UInt16] = []
            units.reserveCapacity((bytes.count - start) / 2)
            for i in stride(from: start, to: bytes.count, by: 2) {
                let (high, low) = littleEndian ? (bytes[i + 1], bytes[i]) : (bytes[i], bytes[i + 1])
                units.append(UInt16(high) << 8 | UInt16(low))
            }
            return String(decoding: units, as: UTF16.self)
        }

        /// Bytes of the implicit type read as text when they are valid UTF-8 without
        /// control characters other than tab, line feed and carriage return; NULs may end
        /// it (a C string's terminator) and are dropped.
        static func implicitText(_ bytes: [UInt8]) -> String? {
            var end = bytes.count
            while end > 0 && bytes[end - 1] == 0 { end -= 1 }
            var text = ""
            let failed = transcode(bytes[..<end].makeIterator(), from: UTF8.self, to: UTF32.self,
                                   stoppingOnError: true) { unit in
                if let scalar = Unicode.Scalar(unit) { text.unicodeScalars.append(scalar) }
            }
            guard !failed, !text.unicodeScalars.contains(where: {
                ($0.value < 0x20 && $0 != "\t" && $0 != "\n" && $0 != "\r") || $0.value == 0x7F
            }) else { return nil }
            return text
        }
    }

    /// One `ilst` item.
    public struct Item: Sendable, Equatable {
        /// The item's box type: `©nam`, `trkn`, `----`, or a key index for keys-based metadata.
        public var type: FourCC
        /// The key's name for keys-based metadata (`com.apple.quicktime.make`).
        public var keyName: String?
        /// A freeform (`----`) item's `mean` (`com.apple.iTunes`) and `name` (`iTunSMPB`).
        public var mean: String?
        /// A freeform item's `name` (`iTunSMPB`); see ``mean``.
        public var name: String?
        /// The item's `data` boxes, in order.
        public var values: [Value]
    }

    /// The `hdlr` handler type: `mdir` or `mdta`; nil without `hdlr`.
    public var handlerType: FourCC?
    /// The names in `keys`, in order (keys-based metadata only).
    public var keys: [String]
    /// The `ilst` items, in file order.
    public var items: [Item]
    /// Whether the box is ISO's full box (version and flags before the children) rather than
    /// QuickTime's plain box.
    public var isFullBox: Bool
    /// The box's children (`hdlr`, `keys`, `ilst`, `free`, …), in order, as read.
    public var children: [ChildBox]
    /// Where the children stop being readable; nil when all of them were read.
    public var damage: ChildBoxDamage?

    /// Parses the payload of a `meta` box (ISO's full box or QuickTime's plain box).
    /// Malformed parts end the list they are in; nothing here throws.
    public init(parsing payload: ByteReader) {
        self = MetadataBox(reading: payload) ?? MetadataBox(isFullBox: false)
    }

    private init(isFullBox: Bool) {
        handlerType = nil
        keys = []
        items = []
        self.isFullBox = isFullBox
        children = []
    }

    /// Parses the payload of a `meta` box as ``init(parsing:)`` does; nil when it is too
    /// short to be one (a full box's version and flags cut short).
    public init?(reading payload: ByteReader) {
        self.init(reading: payload, items: true)
    }

    /// The box, its `ilst` items read only when `readingItems` (an editor that replaces the
    /// `ilst` needs only the children).
    init?(reading payload: ByteReader, items readingItems: Bool) {
        guard let list = CopiedBoxSanitizer.metaChildren(payload) else { return nil }
        self.init(isFullBox: list.fileOffset != payload.fileOffset)
        (children, damage) = ChildBox.children(of: list, depth: 4)
        for child in children {
            var reader = child.payload
            switch child.type {
            case .hdlr:
                if handlerType == nil, (try? reader.skip(8)) != nil { handlerType = try? reader.readFourCC() }
            case "keys":
                if keys.isEmpty { keys = Self.keys(reader) }
            default:
                break
            }
        }
        guard readingItems, let list = itemList else { return }
        let keys = handlerType == "mdta" ? self.keys : []
        var items: [Item] = []
        _ = ItemList.readItems(list) { header, _, item in items.append(Self.item(header.type, item, keys: keys)) }
        self.items = items
    }

    /// The payload of the first `ilst`; nil without one.
    public var itemList: ByteReader? { children.first(where: { $0.type == "ilst" })?.payload }

    /// The `keys` box (full box, a count, then per key a size, a namespace and the name).
    static func keys(_ payload: ByteReader) -> [String] {
        var reader = payload
        guard (try? reader.readVersionAndFlags()) != nil, let count = try? reader.readEntryCount(entrySize: 8) else {
            return []
        }
        var names: [String] = []
        for _ in 0..<min(count, Limits.maximumMetadataItems) {
            guard let size = try? reader.readUInt32(), size >= 8, let length = Int(exactly: size - 8),
                  (try? reader.skip(4)) != nil, let name = try? reader.readBytes(length) else { break }
            names.append(String(decoding: name, as: UTF8.self))
        }
        return names
    }

    static func item(_ type: FourCC, _ read: ItemList.ReadItem, keys: [String]) -> Item {
        var item = Item(type: type, keyName: nil, mean: read.mean, name: read.name, values: read.values)
        if !keys.isEmpty, type.rawValue >= 1, let index = Int(exactly: type.rawValue), index <= keys.count {
            item.keyName = keys[index - 1]
        }
        return item
    }
}
