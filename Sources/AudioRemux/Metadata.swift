import ISOBMFF

/// iTunes-style metadata (`udta/meta/ilst`, the QuickTime File Format's "Metadata" chapter
/// as Apple's M4A uses it): finding items and adding the `iTunSMPB` gapless item.
enum Metadata {
    /// The `----` item `com.apple.iTunes` / `iTunSMPB` that tells players ignoring edit
    /// lists how much priming and padding to drop: priming, padding and the original
    /// sample count, in hexadecimal, among zero fields, as iTunes writes it.
    static func gaplessItem(priming: UInt64, padding: UInt64, sampleCount: UInt64) -> [UInt8] {
        func hex(_ value: UInt64, _ digits: Int) -> String {
            let text = String(value, radix: 16, uppercase: true)
            return String(repeating: "0", count: max(0, digits - text.count)) + text
        }
        let text = " 00000000 \(hex(priming, 8)) \(hex(padding, 8)) \(hex(sampleCount, 16))"
            + String(repeating: " 00000000", count: 8)
        return freeformItem(mean: "com.apple.iTunes", name: "iTunSMPB", text: text)
    }

    static func freeformItem(mean: String, name: String, text: String) -> [UInt8] {
        var w = BoxWriter()
        w.box("----") { item in
            item.fullBox("mean", version: 0, flags: 0) { $0.write(bytes: Array(mean.utf8)) }
            item.fullBox("name", version: 0, flags: 0) { $0.write(bytes: Array(name.utf8)) }
            item.fullBox("data", version: 0, flags: 1) { data in  // type 1: UTF-8
                data.write(UInt32(0))  // locale
                data.write(bytes: Array(text.utf8))
            }
        }
        return w.bytes
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
            return genre >= 1 && genre <= id3Genres.count ? id3Genres[genre - 1] : "\(genre)"
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

    /// The genres of ID3v1 (0–79), which `gnre` numbers from 1.
    static let id3Genres = [
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

    /// The names of the freeform (`----`) items in `udta`'s `meta/ilst`.
    static func freeformNames(in userData: [UInt8]) -> [String] {
        var names: [String] = []
        forEachItem(in: userData) { item, payload in
            guard item == "----" else { return }
            var children = payload
            while let (child, body) = try? children.readBox(depth: 6) {
                var text = body
                if child.type == "name", (try? text.skip(4)) != nil {
                    names.append(String(decoding: text.readRemainingBytes(), as: UTF8.self))
                }
            }
        }
        return names
    }

    /// Calls `body` with each `ilst` item type and payload of `udta/meta`.
    static func forEachItem(in userData: [UInt8], _ body: (FourCC, ByteReader) -> Void) {
        var udta = ByteReader(userData)
        guard let (_, udtaPayload) = try? udta.readBox(depth: 1) else { return }
        var children = udtaPayload
        while let (child, payload) = try? children.readBox(depth: 2) {
            guard child.type == "meta", var meta = metaChildren(payload) else { continue }
            while let (box, boxPayload) = try? meta.readBox(depth: 3) {
                guard box.type == "ilst" else { continue }
                var items = boxPayload
                while let (item, itemPayload) = try? items.readBox(depth: 4) { body(item.type, itemPayload) }
            }
        }
    }

    /// The children of a `meta` box, after its version and flags when it has them.
    static func metaChildren(_ payload: ByteReader) -> ByteReader? {
        CopiedBoxSanitizer.metaChildren(payload)
    }

    /// `userData` (or a new `udta`) with `item` appended to its `meta/ilst`, creating
    /// `meta` (with an `mdir` handler) and `ilst` where missing. Other boxes are kept as
    /// they are, in order.
    static func userData(_ userData: [UInt8]?, adding item: [UInt8]) -> [UInt8] {
        var w = BoxWriter()
        var added = false
        w.box("udta") { udta in
            if let userData {
                var reader = ByteReader(userData)
                if let (_, payload) = try? reader.readBox(depth: 1) {
                    var children = payload
                    while let (child, childPayload) = try? children.readBox(depth: 2) {
                        if child.type == "meta", !added, let rebuilt = meta(childPayload, adding: item) {
                            udta.write(bytes: rebuilt)
                            added = true
                        } else {
                            udta.write(bytes: children.bytes(of: child))
                        }
                    }
                }
            }
            if !added {
                udta.fullBox("meta", version: 0, flags: 0) { meta in
                    HandlerBox(handlerType: "mdir", name: "").withComponentType("appl").write(to: &meta)
                    meta.box("ilst") { $0.write(bytes: item) }
                }
            }
        }
        return w.bytes
    }

    private static func meta(_ payload: ByteReader, adding item: [UInt8]) -> [UInt8]? {
        guard var children = metaChildren(payload) else { return nil }
        let isFullBox = children.fileOffset != payload.fileOffset
        var w = BoxWriter()
        var added = false
        w.box("meta") { meta in
            if isFullBox { meta.write(UInt32(0)) }
            while let (child, childPayload) = try? children.readBox(depth: 3) {
                if child.type == "ilst" && !added {
                    var items = childPayload
                    meta.box("ilst") { ilst in
                        ilst.write(bytes: items.readRemainingBytes())
                        ilst.write(bytes: item)
                    }
                    added = true
                } else {
                    meta.write(bytes: children.bytes(of: child))
                }
            }
            if !added { meta.box("ilst") { $0.write(bytes: item) } }
        }
        return w.bytes
    }
}

extension HandlerBox {
    /// The handler with QuickTime's component manufacturer field set, as iTunes writes
    /// `mdir` handlers (`appl`).
    func withComponentType(_ manufacturer: FourCC) -> HandlerBox {
        var copy = self
        copy.reserved = manufacturer.bytes + [UInt8](repeating: 0, count: 8)
        copy.name = [0]
        return copy
    }
}
