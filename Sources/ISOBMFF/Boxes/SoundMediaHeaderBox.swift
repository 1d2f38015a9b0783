/// `smhd`: the stereo balance of an audio track (ISO/IEC 14496-12 § 12.2.2).
public struct SoundMediaHeaderBox: Box {
    public static let type = FourCC.smhd
    /// The full-box version as read (only 0 is defined), kept so the box is written back unchanged.
    public var version: UInt8 = 0
    /// The full-box flags as read (none are defined), kept so the box is written back unchanged.
    public var flags: UInt32 = 0
    /// 8.8 fixed point, 0 is centre.
    public var balance: Int16

    /// An `smhd` with `balance`, centred by default.
    public init(balance: Int16 = 0) {
        self.balance = balance
    }

    public init(parsing payload: inout ByteReader) throws {
        (version, flags) = try payload.readVersionAndFlags()
        balance = try payload.readInt16()
        try payload.skip(2)
    }

    public func write(to writer: inout BoxWriter) {
        writer.fullBox(Self.type, version: version, flags: flags) { w in
            w.write(balance)
            w.write(UInt16(0))
        }
    }
}
