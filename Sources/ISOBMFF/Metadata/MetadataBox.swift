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

    /// Parses the payload of a `meta` box (ISO's full box or QuickTime's plain box).
    /// Malformed parts end the list they are in; nothing here throws.
    public init(parsing payload: ByteReader) {
        handlerType = nil
        keys = []
        items = []
        guard var children = CopiedBoxSanitizer.metaChildren(payload) else { return }
        var itemList: ByteReader?
        while let (child, body) = try? children.readBox(depth: 1) {
            var reader = body
            switch child.type {
            case .hdlr:
                if handlerType == nil, (try? reader.skip(8)) != nil { handlerType = try? reader.readFourCC() }
            case "keys":
                if keys.isEmpty { keys = Self.keys(reader) }
            case "ilst":
                if itemList == nil { itemList = body }
            default:
                break
            }
        }
        guard var list = itemList else { return }
        while items.count < Limits.maximumMetadataItems, let (item, body) = try? list.readBox(depth: 1) {
            items.append(Self.item(item.type, body, keys: handlerType == "mdta" ? keys : []))
        }
    }

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

    static func item(_ type: FourCC, _ payload: ByteReader, keys: [String]) -> Item {
        var item = Item(type: type, keyName: nil, mean: nil, name: nil, values: [])
        if !keys.isEmpty, type.rawValue >= 1, let index = Int(exactly: type.rawValue), index <= keys.count {
            item.keyName = keys[index - 1]
        }
        var children = payload
        while item.values.count < Limits.maximumMetadataItems, let (child, body) = try? children.readBox(depth: 1) {
            var reader = body
            switch child.type {
            case "data":
                guard let dataType = try? reader.readUInt32(), let locale = try? reader.readUInt32() else { continue }
                item.values.append(Value(dataType: dataType, locale: locale, bytes: reader.readRemainingBytes()))
            case "mean", "name":
                guard (try? reader.skip(4)) != nil else { continue }
                let text = String(decoding: reader.readRemainingBytes(), as: UTF8.self)
                if child.type == "mean" { item.mean = text } else { item.name = text }
            default:
                break
            }
        }
        return item
    }
}
