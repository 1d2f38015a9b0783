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
        func hex(_ value: UInt64, _ digits: Int) -> String {
            let text = String(value, radix: 16, uppercase: true)
            return String(repeating: "0", count: max(0, digits - text.count)) + text
        }
        return " 00000000 \(hex(priming, 8)) \(hex(padding, 8)) \(hex(sampleCount, 16))"
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
    /// with its value as text where it has one (see ``text(of:item:)``). At most
    /// ``Limits/maximumMetadataItems``.
    static func items(userData: [UInt8]?, metadata: [UInt8]?) -> [MetadataItem] {
        var boxes: [MetadataBox] = []
        if let userData {
            var udta = ByteReader(userData)
            if let (_, payload) = try? udta.readBox(depth: 1) {
                var children = payload
                while let (child, body) = try? children.readBox(depth: 2) {
                    if child.type == "meta" { boxes.append(MetadataBox(parsing: body)) }
                }
            }
        }
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
                items.append(MetadataItem(key: key, text: item.values.first.flatMap { text(of: $0, item: item.type) },
                                          valueSize: size))
            }
        }
        return items
    }

    /// An item's value as text, as FFmpeg shows it where it shows it: text of the data
    /// types that hold it (``MetadataBox/Value/text``: 1 and 4 UTF-8, 0 when its bytes are
    /// text; also 2 and 5, UTF-16, which FFmpeg skips); `trkn` and `disk` as "3/12"
    /// (number and total, iTunes' 16-bit fields at bytes 2 and 4); `gnre` as the ID3v1 genre it numbers from 1; `cpil` (and `pgap`,
    /// `pcst`) as true or false; `tmpo` and other integers (data types 21 and 22, or 0 for
    /// these items) as a number. Nil for images and other binary data.
    static func text(of value: MetadataBox.Value, item: FourCC) -> String? {
        let bytes = value.bytes
        func integer(_ bytes: ArraySlice<UInt8>) -> UInt64 { bytes.reduce(0) { $0 << 8 | UInt64($1) } }
        switch item {
        case "trkn", "disk":
            guard bytes.count >= 6 else { return nil }
            let number = integer(bytes[2..<4])
            let total = integer(bytes[4..<6])
            return total > 0 ? "\(number)/\(total)" : "\(number)"
        case "gnre":
            guard bytes.count == 2 else { return nil }
            let genre = Int(integer(bytes[0..<2]))
            return TagValue.genreName(UInt16(genre)) ?? "\(genre)"
        case "cpil", "pgap", "pcst":
            guard let last = bytes.last, bytes.count <= 8 else { return nil }
            return last != 0 ? "true" : "false"
        case "tmpo":
            guard !bytes.isEmpty, bytes.count <= 8 else { return nil }
            return "\(integer(bytes[...]))"
        default:
            break
        }
        switch value.dataType & 0x00FF_FFFF {
        case 0, 1, 2, 4, 5:  // Text, UTF-8 or UTF-16; type 0 only when it is text.
            return value.text
        case 21:  // Signed big-endian integer of 1, 2, 3, 4 or 8 bytes.
            guard [1, 2, 3, 4, 8].contains(bytes.count) else { return nil }
            let unsigned = integer(bytes[...])
            let shift = UInt64(64 - 8 * bytes.count)
            return "\(Int64(bitPattern: unsigned << shift) >> Int64(shift))"
        case 22:  // Unsigned big-endian integer.
            guard [1, 2, 3, 4, 8].contains(bytes.count) else { return nil }
            return "\(integer(bytes[...]))"
        default:
            return nil
        }
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
