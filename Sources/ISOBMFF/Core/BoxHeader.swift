/// The header of one box (ISO/IEC 14496-12 § 4.2): where it is, how large, and of what type.
public struct BoxHeader: Sendable, Equatable {
    /// The box type; for a `uuid` box the real type is ``userType``.
    public let type: FourCC
    /// The 16-byte extended type of a `uuid` box.
    public let userType: [UInt8]?
    /// Absolute offset of the first byte of the header.
    public let offset: UInt64
    /// 8, 16 with a 64-bit size, plus 16 for a `uuid`.
    public let headerSize: Int
    /// The whole box, header included. A size-0 box ("to the end") is given its real size.
    public let size: UInt64
    /// Whether the header said size 0 (the box runs to the end of its parent or the file).
    public let extendsToEnd: Bool
    /// Box path for errors, such as `moov/trak/mdia`.
    public let path: String

    /// The absolute offset of the payload, the bytes after the header.
    public var payloadOffset: UInt64 { offset + UInt64(headerSize) }  // Checked in init: <= end.
    /// The payload's length: ``size`` minus ``headerSize``.
    public var payloadSize: UInt64 { size - UInt64(headerSize) }  // size >= headerSize, checked.
    /// The absolute offset one past the box's last byte: where the next box starts.
    public var end: UInt64 { offset + size }  // Checked in init not to overflow.

    /// Parses a header at the reader's position.
    ///
    /// - Parameters:
    ///   - reader: positioned at the box's first byte; left just after the header.
    ///   - available: bytes from the box's start to its parent's end (or the file's end);
    ///     the box must fit inside them. A size-0 box takes all of them.
    ///   - parentPath: the parent's box path.
    public init(parsing reader: inout ByteReader, available: UInt64, parentPath: String) throws {
        let start = reader.fileOffset
        guard available >= 8 else {
            throw reader.error(.truncated, "\(available) bytes left, too few for a box header")
        }
        let size32 = try reader.readUInt32()
        let type = try reader.readFourCC()
        let path = parentPath.isEmpty ? type.description : parentPath + "/" + type.description
        var headerSize = 8
        var size = UInt64(size32)
        var extendsToEnd = false
        if size32 == 1 {
            guard available >= 16 else {
                throw ISOBMFFError(.truncated, "box with a 64-bit size has no room for it", path: path, offset: start)
            }
            size = try reader.readUInt64()
            headerSize = 16
        } else if size32 == 0 {
            size = available
            extendsToEnd = true
        }
        var userType: [UInt8]?
        if type == .uuid {
            guard available >= UInt64(headerSize + 16) else {
                throw ISOBMFFError(.truncated, "uuid box has no room for its extended type", path: path, offset: start)
            }
            userType = try reader.readBytes(16)
            headerSize += 16
        }
        guard size >= UInt64(headerSize) else {
            throw ISOBMFFError(.invalidBoxSize, "box size \(size) is smaller than its \(headerSize)-byte header",
                               path: path, offset: start)
        }
        guard start.addingReportingOverflow(size).overflow == false else {
            throw ISOBMFFError(.invalidBoxSize, "box size \(size) overflows a 64-bit offset", path: path, offset: start)
        }
        guard size <= available else {
            throw ISOBMFFError(.boxOutsideParent,
                               "box of \(size) bytes ends past its parent or the file (\(available) bytes left)",
                               path: path, offset: start)
        }
        self.type = type
        self.userType = userType
        self.offset = start
        self.headerSize = headerSize
        self.size = size
        self.extendsToEnd = extendsToEnd
        self.path = path
    }
}
