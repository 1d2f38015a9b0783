/// `ftyp`: the brands a file conforms to (ISO/IEC 14496-12 § 4.3).
public struct FileTypeBox: Box {
    public static let type = FourCC.ftyp
    public var majorBrand: FourCC
    public var minorVersion: UInt32
    public var compatibleBrands: [FourCC]

    public init(majorBrand: FourCC, minorVersion: UInt32, compatibleBrands: [FourCC]) {
        self.majorBrand = majorBrand
        self.minorVersion = minorVersion
        self.compatibleBrands = compatibleBrands
    }

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
