/// A box type this package parses into fields and writes back byte for byte.
///
/// `init(parsing:)` reads the box's payload (the bytes after its header) through a reader
/// that cannot see past the box; `write(to:)` writes the whole box, header included.
public protocol Box: Sendable, Equatable {
    /// The four-character code in the box header (§ 4.2) that this type parses and writes.
    static var type: FourCC { get }
    /// Parses the box from `payload`: a reader over the bytes after the header, which cannot
    /// see past the box's end.
    ///
    /// Throws an ``ISOBMFFError`` naming the box path and byte offset when a field runs past
    /// the box or holds a value the specification does not allow.
    init(parsing payload: inout ByteReader) throws
    /// Appends the whole box, header included, to `writer`, whose ``BoxWriter/box(_:_:)``
    /// fills in the size. A parsed box that was not changed is written back byte for byte,
    /// except where the type says otherwise (``SampleSizeBox`` always writes `stsz`).
    func write(to writer: inout BoxWriter)
}

extension Box {
    /// The box as bytes, header included.
    public var serialized: [UInt8] {
        var writer = BoxWriter()
        write(to: &writer)
        return writer.bytes
    }
}

/// The smallest full-box version that can hold `values` (1 when any needs 64 bits).
func versionFor(_ values: UInt64...) -> UInt8 {
    values.contains { $0 > UInt64(UInt32.max) } ? 1 : 0
}

extension ByteReader {
    /// Throws `.unsupportedVersion` unless `version` is one of `known`.
    func check(version: UInt8, in known: ClosedRange<UInt8>) throws {
        guard known.contains(version) else {
            throw error(.unsupportedVersion, "version \(version) is not one this parser knows")
        }
    }
}
