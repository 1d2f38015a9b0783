import ISOBMFF

/// Edits of a copied `moov/udta` for a cut: boxes that describe the whole input (`chpl`
/// chapters, the `iTunSMPB` item) are removed so the cut can carry its own.
enum Gapless {
    /// `userData` without its children of the given types (the rest kept byte for byte).
    static func removing(_ types: Set<FourCC>, from userData: [UInt8]) -> [UInt8] {
        rebuild(userData) { header, _, _ in types.contains(header.type) ? nil : [] }
    }

    /// `userData` without the `----` item named `iTunSMPB` in its `meta/ilst`.
    static func removingGaplessItem(_ userData: [UInt8]) -> [UInt8] {
        rebuild(userData) { header, payload, reader in
            guard header.type == "meta", let children = Metadata.metaChildren(payload) else { return [] }
            let isFullBox = children.fileOffset != payload.fileOffset
            var list = children
            var w = BoxWriter()
            w.box("meta") { meta in
                if isFullBox { meta.write(UInt32(0)) }
                while let (child, childPayload) = try? list.readBox(depth: 3) {
                    guard child.type == "ilst" else {
                        meta.write(bytes: list.bytes(of: child))
                        continue
                    }
                    var items = childPayload
                    meta.box("ilst") { ilst in
                        while let (item, _) = try? items.readBox(depth: 4) {
                            let bytes = items.bytes(of: item)
                            let isGapless = item.type == "----" && contains(bytes, Array("iTunSMPB".utf8))
                            if !isGapless { ilst.write(bytes: bytes) }
                        }
                    }
                }
            }
            _ = reader
            return w.bytes
        }
    }

    /// Rebuilds `udta`: `transform` returns nil to drop a child, [] to keep it as it is, or
    /// the bytes to write instead.
    private static func rebuild(_ userData: [UInt8],
                                _ transform: (BoxHeader, ByteReader, ByteReader) -> [UInt8]?) -> [UInt8] {
        var reader = ByteReader(userData)
        guard let (_, payload) = try? reader.readBox(depth: 1) else { return userData }
        var children = payload
        var w = BoxWriter()
        w.box("udta") { udta in
            while let (child, childPayload) = try? children.readBox(depth: 2) {
                guard let replacement = transform(child, childPayload, children) else { continue }
                udta.write(bytes: replacement.isEmpty ? children.bytes(of: child) : replacement)
            }
        }
        return w.bytes
    }

    private static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard haystack.count >= needle.count else { return false }
        for i in 0...(haystack.count - needle.count) where haystack[i..<(i + needle.count)].elementsEqual(needle) {
            return true
        }
        return false
    }
}
