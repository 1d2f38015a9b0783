/// Walks the top-level boxes of a file, reading only their headers.
struct TopLevelBoxes {
    let source: any ByteSource
    var offset: UInt64 = 0

    init(source: any ByteSource) {
        self.source = source
    }

    /// The next top-level box header, or nil at the end of the file.
    mutating func next() throws -> BoxHeader? {
        let length = source.length
        guard offset < length else { return nil }
        let available = length - offset
        let headerBytes = try source.bytes(at: offset, count: Int(min(available, 32)))
        var reader = ByteReader(headerBytes, fileOffset: offset)
        let header = try BoxHeader(parsing: &reader, available: available, parentPath: "")
        offset = header.end
        return header
    }
}
