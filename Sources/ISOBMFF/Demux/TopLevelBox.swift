/// Walks the top-level boxes of a file, reading only their headers.
struct TopLevelBoxes {
    let source: any ByteSource
    var offset: UInt64 = 0
    /// The header read last, even when it was refused for running past the end of the file.
    var lastHeader: BoxHeader?

    init(source: any ByteSource) {
        self.source = source
    }

    /// The next top-level box header, or nil at the end of the file.
    mutating func next() throws -> BoxHeader? {
        let length = source.length
        guard offset < length else { return nil }
        let available = length - offset  // offset < length, checked just above.
        let headerBytes = try source.bytes(at: offset, count: Int(min(available, 32)))
        var reader = ByteReader(headerBytes, fileOffset: offset)
        // Parse once without the end check, to remember what a truncated box claimed.
        var unchecked = reader
        lastHeader = try? BoxHeader(parsing: &unchecked, available: UInt64.max - offset, parentPath: "")
        let header = try BoxHeader(parsing: &reader, available: available, parentPath: "")
        offset = header.end
        return header
    }
}
