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

extension BoxWalker {
    /// The boxes that fill `range` of `source` exactly, in order, read from their headers
    /// alone (their payloads, however large, are not read): the one query by which box
    /// lists are walked without holding them, as tag edits walk `moov` to leave the covers
    /// in the file. Nil when a box does not fit the range, when the range ends in fewer
    /// bytes than a header, or past `limit` boxes.
    public static func children(in source: some ByteSource, filling range: Range<UInt64>,
                                limit: Int = Limits.maximumMetadataItems) throws -> [BoxHeader]? {
        var boxes: [BoxHeader] = []
        var offset = range.lowerBound
        while offset < range.upperBound {
            let available = range.upperBound - offset
            guard available >= 8, boxes.count < limit else { return nil }
            // 24 bytes: a 32-bit size and a type, and a uuid's extended type (§ 4.2).
            let bytes = try source.bytes(at: offset, count: Int(min(available, 24)))
            var reader = ByteReader(bytes, fileOffset: offset)
            guard let header = try? BoxHeader(parsing: &reader, available: available, parentPath: "") else {
                return nil
            }
            boxes.append(header)
            offset = header.end
        }
        return boxes
    }
}

extension BoxWalker {
    /// The first box of type `type` in `boxes` (a box list at nesting `depth`: 1 for the
    /// children of a top-level box), with a reader over its payload; nil when the list has
    /// none. The boxes before it are read as `ByteReader/readBox(depth:)` reads them, so
    /// that a damaged one throws its error, and nothing after it is read: the one query by
    /// which tags and chapters find a child (`udta` in `moov`, `mvhd`, `tkhd`). A reader that
    /// stops silently at a damaged list (players do, for `udta`) calls it with `try?`.
    public static func first(_ type: FourCC, in boxes: ByteReader, depth: Int) throws
        -> (header: BoxHeader, payload: ByteReader)? {
        var boxes = boxes
        while let (header, payload) = try boxes.readBox(depth: depth) {
            if header.type == type { return (header, payload) }
        }
        return nil
    }

    /// The bytes, header included, of the first `type` child of the box that `box` begins
    /// with (``first(_:in:depth:)`` at depth 2: `udta` in a `moov`); nil when it has none.
    /// Throws when that box, or a child before the one found, is damaged.
    public static func firstChild(_ type: FourCC, of box: [UInt8]) throws -> [UInt8]? {
        var reader = ByteReader(box)
        guard let (_, payload) = try reader.readBox(depth: 1),
              let (child, _) = try first(type, in: payload, depth: 2) else { return nil }
        return reader.bytes(of: child)
    }
}
