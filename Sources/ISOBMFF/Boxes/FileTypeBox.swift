/// `ftyp`: the brands a file conforms to (ISO/IEC 14496-12 § 4.3).
public struct FileTypeBox: Box {
    public static let type = FourCC.ftyp
    /// The brand the file claims first (`isom`, `mp42`, `M4A `, `qt  `).
    public var majorBrand: FourCC
    /// The version of the major brand; informative only.
    public var minorVersion: UInt32
    /// Every brand whose rules the file follows; a reader plays the file when it knows one.
    public var compatibleBrands: [FourCC]

    /// An `ftyp` to write at the start of a new file.
    public init(majorBrand: FourCC, minorVersion: UInt32, compatibleBrands: [FourCC]) {
        self.majorBrand = majorBrand
        self.minorVersion = minorVersion
        self.compatibleBrands = compatibleBrands
    }

    /// Parses the brands. A trailing partial brand, which some tools write, is ignored rather
    /// than refused.
    public init(parsing payload: inout ByteReader) throws {
        majorBrand = try payload.readFourCC()
        minorVersion = try payload.readUInt32()
        compatibleBrands = []
        // A trailing partial brand (seen in the wild) is ignored.
        while payload.remaining >= 4 { compatibleBrands.append(try payload.readFourCC()) }
    }

    public func write(to writer: inout BoxWriter) {
        writer.box(Self.type) { w in
            w.write(majorBrand)
            w.write(minorVersion)
            for brand in compatibleBrands { w.write(brand) }
        }
    }

    /// Whether the file declares itself QuickTime (`qt  `), whose sound descriptions carry
    /// version 1 and 2 extensions (QuickTime File Format, "Sound Sample Descriptions").
    public var isQuickTime: Bool {
        majorBrand == .quickTime || compatibleBrands.contains(.quickTime)
    }
}
