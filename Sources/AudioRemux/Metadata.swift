import ISOBMFF

/// iTunes-style metadata (`udta/meta/ilst`, the QuickTime File Format's "Metadata" chapter
/// as Apple's M4A uses it) as `probe` lists it, and the `iTunSMPB` gapless item, both over
/// the one tag model (``ItemList``).
enum Metadata {
    /// The key of the `----` item `com.apple.iTunes` / `iTunSMPB`.
    static let gaplessKey = TagKey.freeform(mean: "com.apple.iTunes", name: "iTunSMPB")

    /// The `iTunSMPB` text that tells players ignoring edit lists how much priming and
    /// padding to drop: priming, padding and the original sample count, in hexadecimal,
    /// among zero fields, as iTunes writes it.
    static func gaplessText(priming: UInt64, padding: UInt64, sampleCount: UInt64) -> String {
        " 00000000 \(priming.hexDigits(8, uppercase: true)) \(padding.hexDigits(8, uppercase: true)) "
            + "\(sampleCount.hexDigits(16, uppercase: true))"
            + String(repeating: " 00000000", count: 8)
    }

    /// Whether `userData` (a whole `udta`) holds an `iTunSMPB` item.
    static func hasGaplessItem(_ userData: [UInt8]?) -> Bool {
        userData.map { ItemList(userData: $0)[gaplessKey] != nil } ?? false
    }

    /// `userData` (or a new `udta`) with an `iTunSMPB` item of these numbers, the other
    /// items and boxes kept byte for byte.
    static func userData(_ userData: [UInt8]?, settingGapless priming: UInt64, padding: UInt64,
                         sampleCount: UInt64) -> [UInt8]? {
        var list = ItemList(userData: userData ?? [])
        list.set(.text([gaplessText(priming: priming, padding: padding, sampleCount: sampleCount)]), for: gaplessKey)
        return list.userData(replacingIn: userData)
    }

    /// `userData` without its `iTunSMPB` item (found by its `mean` and `name`, never by a
    /// byte search), everything else kept byte for byte; unchanged when it has none.
    static func userData(removingGaplessFrom userData: [UInt8]) -> [UInt8] {
        var list = ItemList(userData: userData)
        guard list[gaplessKey] != nil else { return userData }
        list.remove(gaplessKey)
        return list.userData(replacingIn: userData) ?? userData
    }

    /// The items of `udta`'s `meta/ilst`, as ``items(userData:metadata:)`` lists them.
    static func items(in userData: [UInt8]) -> [MetadataItem] {
        items(userData: userData, metadata: nil)
    }

    /// The metadata items `probe` lists: those of each `meta` in `moov/udta` (iTunes style),
    /// then those of `moov/meta` (keys-based, as iPhones write: named by their key), each
    /// with its value as text where it has one (``TagValue/text(of:key:)``). At most
    /// ``Limits/maximumMetadataItems``.
    static func items(userData: [UInt8]?, metadata: [UInt8]?) -> [MetadataItem] {
        var boxes = userData.flatMap(UserDataBox.init(parsing:))?.metadata ?? []
        if let metadata {
            var meta = ByteReader(metadata)
            if let (child, body) = try? meta.readBox(depth: 1), child.type == "meta" {
                boxes.append(MetadataBox(parsing: body))
            }
        }
        var items: [MetadataItem] = []
        for box in boxes {
            for item in box.items where items.count < Limits.maximumMetadataItems {
                var key = item.keyName ?? itemKey(item.type)
                if item.type == "----" && item.keyName == nil { key = "----:\(item.mean ?? ""):\(item.name ?? "")" }
                let size = item.values.reduce(0) { $0 + $1.bytes.count }
                let text = item.values.first.flatMap { TagValue.text(of: $0, key: .code(item.type)) }
                items.append(MetadataItem(key: key, text: text, valueSize: size))
            }
        }
        return items
    }

    /// An item type as text: `©` for the 0xA9 byte that starts Apple's text items.
    static func itemKey(_ type: FourCC) -> String {
        var key = ""
        for byte in type.bytes {
            if byte == 0xA9 {
                key += "\u{A9}"
            } else if byte >= 0x20 && byte < 0x7F {
                key.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                key += "?"
            }
        }
        return key
    }
}
