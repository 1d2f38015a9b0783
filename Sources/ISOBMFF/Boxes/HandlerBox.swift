/// `hdlr`: what kind of media a track holds (ISO/IEC 14496-12 § 8.4.3).
public struct HandlerBox: Box {
    public static let type = FourCC.hdlr
    /// The full-box version as read (only 0 is defined), kept so the box is written back unchanged.
    public var version: UInt8
    /// The full-box flags as read (none are defined), kept so the box is written back unchanged.
    public var flags: UInt32
    /// `pre_defined` in ISO; QuickTime's component type (`mhlr`, `dhlr`).
    public var componentType: FourCC
    /// `soun`, `vide`, `text`, `tmcd`, …
    public var handlerType: FourCC
    /// QuickTime's manufacturer and flags; zero in ISO files.
    public var reserved: [UInt8]
    /// The name as stored: a C string in ISO files, often a Pascal string in QuickTime files.
    public var name: [UInt8]

    /// A handler for a new track, with `name` stored as the C string ISO expects.
    public init(handlerType: FourCC, name: String) {
        version = 0
        flags = 0
        componentType = FourCC(rawValue: 0)
        self.handlerType = handlerType
        reserved = [UInt8](repeating: 0, count: 12)
        self.name = Array(name.utf8) + [0]
    }

    /// Parses the handler. A box that ends right after the handler type, as some writers
    /// make it, is accepted with a short ``reserved`` and an empty ``name``.
    public init(parsing payload: inout ByteReader) throws {
        (version, flags) = try payload.readVersionAndFlags()
        componentType = try payload.readFourCC()
        handlerType = try payload.readFourCC()
        // Some writers end the box right after the handler type.
        reserved = try payload.readBytes(min(12, payload.remaining))
        name = payload.readRemainingBytes()
    }

    public func write(to writer: inout BoxWriter) {
        writer.fullBox(Self.type, version: version, flags: flags) { w in
            w.write(componentType)
            w.write(handlerType)
            w.write(bytes: reserved)
            w.write(bytes: name)
        }
    }
}
