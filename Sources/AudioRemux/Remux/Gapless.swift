import ISOBMFF

/// Edits of a copied `moov/udta` for a cut: boxes that describe the whole input (`chpl`
/// chapters) are removed so the cut can carry its own; ``Metadata`` removes `iTunSMPB`.
enum Gapless {
    /// `userData` without its children of the given types (the rest kept byte for byte);
    /// unchanged when it is not one box.
    static func removing(_ types: Set<FourCC>, from userData: [UInt8]) -> [UInt8] {
        UserDataBox(parsing: userData)?.bytes { types.contains($0.type) ? nil : $0.bytes } ?? userData
    }
}
