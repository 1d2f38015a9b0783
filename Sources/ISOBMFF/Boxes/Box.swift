/// A box type this package parses into fields and writes back byte for byte.
///
/// `init(parsing:)` reads the box's payload (the bytes after its header) through a reader
/// that cannot see past the box; `write(to:)` writes the whole box, header included.
public protocol Box: Sendable, Equatable {
    static var type: FourCC { get }
    init(parsing payload: inout ByteReader) throws
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
