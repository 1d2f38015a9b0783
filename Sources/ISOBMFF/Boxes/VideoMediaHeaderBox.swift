/// `vmhd`: the media information header of a video track (ISO/IEC 14496-12 § 12.1.2).
/// Its flags are 1 by the specification (a QuickTime legacy: "no lean ahead").
public struct VideoMediaHeaderBox: Box {
    public static let type: FourCC = "vmhd"
    /// The full-box version as read (only 0 is defined), kept so the box is written back unchanged.
    public var version: UInt8 = 0
    /// 1 in every file this package writes, as § 12.1.2 requires.
    public var flags: UInt32 = 1
    /// The composition mode: 0 is copy, the only one ISO defines.
    public var graphicsMode: UInt16
    /// The red, green and blue of the transfer colour of some QuickTime graphics modes.
    public var opcolor: [UInt16]

    /// A header with copy mode and a black opcolor, as every ISO file has it.
    public init(graphicsMode: UInt16 = 0, opcolor: [UInt16] = [0, 0, 0]) {
        self.graphicsMode = graphicsMode
        self.opcolor = opcolor
    }

    public init(parsing payload: inout ByteReader) throws {
        (version, flags) = try payload.readVersionAndFlags()
        graphicsMode = try payload.readUInt16()
        opcolor = [try payload.readUInt16(), try payload.readUInt16(), try payload.readUInt16()]
    }

    public func write(to writer: inout BoxWriter) {
        writer.fullBox(Self.type, version: version, flags: flags) { w in
            w.write(graphicsMode)
            // Exactly three values: a shorter array is padded with zeros, a longer one cut.
            for index in 0..<3 { w.write(index < opcolor.count ? opcolor[index] : 0) }
        }
    }
}

/// `nmhd`: the null media information header, for tracks that are neither audio nor video
/// (ISO/IEC 14496-12 § 8.4.5.2): a full box with no fields.
public enum NullMediaHeader {
    /// The 12 bytes of an `nmhd` with version and flags 0.
    public static let bytes: [UInt8] = [0, 0, 0, 12, 0x6E, 0x6D, 0x68, 0x64, 0, 0, 0, 0]
}
