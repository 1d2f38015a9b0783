/// Visits every box of a file in order, descending into the container boxes of
/// ISO/IEC 14496-12 (Table 1) that hold only boxes. Payloads of other boxes, `mdat`
/// included, are never read.
public enum BoxWalker {
    /// The box types ``walk(_:visit:)`` descends into: those of Table 1 whose payload is only
    /// boxes. Full boxes (`meta`) and sample entries are not, since fields come before their
    /// children.
    public static let containers: Set<FourCC> = [
        .moov, .trak, .edts, .mdia, .minf, .dinf, .stbl, .mvex, .moof, "traf", "mfra", "udta", "tref",
    ]

    /// Calls `visit` with each box header and its depth (0 for top-level boxes).
    ///
    /// Throws `.nestingTooDeep` past ``Limits/maximumDepth`` and `.limitExceeded` for a
    /// top-level container larger than ``Limits/maximumMovieBoxSize``.
    public static func walk(_ source: some ByteSource, visit: (BoxHeader, Int) throws -> Void) throws {
        var boxes = TopLevelBoxes(source: source)
        while let header = try boxes.next() {
            try visit(header, 0)
            guard containers.contains(header.type) else { continue }
            guard header.size <= Limits.maximumMovieBoxSize else {
                throw ISOBMFFError(.limitExceeded, "\(header.type) of \(header.size) bytes", path: header.path,
                                   offset: header.offset)
            }
            // payloadSize < size <= maximumMovieBoxSize (checked just above): fits in Int.
            let bytes = try source.bytes(at: header.payloadOffset, count: Int(header.payloadSize))
            try walk(ByteReader(bytes, fileOffset: header.payloadOffset, path: header.path), depth: 1, visit: visit)
        }
    }

    private static func walk(_ reader: ByteReader, depth: Int, visit: (BoxHeader, Int) throws -> Void) throws {
        var reader = reader
        while let (header, payload) = try reader.readBox(depth: depth) {
            try visit(header, depth)
            if containers.contains(header.type) {
                try walk(payload, depth: depth + 1, visit: visit)
            }
        }
    }
}
