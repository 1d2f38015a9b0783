import ISOBMFF

/// Edits of a copied `moov/udta` for a cut: boxes that describe the whole input (`chpl`
/// chapters) are removed so the cut can carry its own; ``Metadata`` removes `iTunSMPB`.
enum Gapless {
    /// `userData` without its children of the given types (the rest kept byte for byte).
    static func removing(_ types: Set<FourCC>, from userData: [UInt8]) -> [UInt8] {
        rebuild(userData) { header, _ in types.contains(header.type) ? nil : [] }
    }

    /// Rebuilds `udta`: `transform` returns nil to drop a child, [] to keep it as it is, or
    /// the bytes to write instead.
    private static func rebuild(_ userData: [UInt8],
                                _ transform: (BoxHeader, ByteReader) -> [UInt8]?) -> [UInt8] {
        var reader = ByteReader(userData)
        guard let (_, payload) = try? reader.readBox(depth: 1) else { return userData }
        var children = payload
        var w = BoxWriter()
        w.box("udta") { udta in
            while let (child, childPayload) = try? children.readBox(depth: 2) {
                guard let replacement = transform(child, childPayload) else { continue }
                udta.write(bytes: replacement.isEmpty ? children.bytes(of: child) : replacement)
            }
        }
        return w.bytes
    }
}
