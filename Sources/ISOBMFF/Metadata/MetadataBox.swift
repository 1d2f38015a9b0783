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
