/// A regular (not fragmented) movie parsed without holding its sample tables: the ``Movie``
/// with every box but the tables of each `stbl`, and where those tables lie in the file, for
/// a reader that walks them in windows (``WindowedSamples``) so that its memory does not grow
/// with the movie's length (issue 31: a 2-hour `moov` is megabytes, almost all `stsz`/`stco`).
///
/// `moov` is read box by box: `trak`, `mdia`, `minf` and `stbl` are descended into, the tables
/// (`stts`, `ctts`, `stsc`, `stsz`, `stco`, `co64`, `stss`, `sdtp`, `sbgp`, `sgpd`) are left in
/// the file and their payloads recorded (of `stsz` the first 12 bytes are kept: `Track` reads
/// its sample count), and every other box is read whole. The rest is parsed by
/// ``Movie/init(reading:)``'s own code, every offset it keeps mapped back to the file's.
///
/// Stricter than ``Movie/init(reading:)`` on purpose: it throws for a fragmented movie, a
/// duplicate `moov`, a file cut short, a track with a ``Track/problem``, or a box on the path
/// to the tables with a 64-bit or open-ended size. A caller then reads the file the regular
/// way, which reports (or tolerates) what is wrong exactly as every other command does.
public struct MovieOutline: Sendable {
    /// The movie; its tracks' ``Track/sampleTable()`` is not available (the tables were not read).
    public let movie: Movie
    /// Per track of ``movie``, in the same order, where its sample tables lie.
    public let tables: [SampleTableLocations]

    /// Reads the top-level boxes of `source` and the outline of its `moov`.
    ///
    /// - Throws: an ``ISOBMFFError`` when the file cannot be read this way (see the type).
    public init(reading source: some ByteSource) throws {
        var compact: CompactMovieBox?
        var movie = try Movie(reading: source) { header in
            guard header.size <= Limits.maximumMovieBoxSize else { throw Self.unsupported(header, "too large") }
            var box = CompactMovieBox(base: header.payloadOffset)
            try box.copyChildren(of: header.payloadOffset..<header.end, level: 0, path: header.path, from: source)
            compact = box
            return ByteReader(box.bytes, fileOffset: header.payloadOffset, path: header.path)
        }
        guard let compact, !movie.isFragmented, movie.truncatedBox == nil, movie.warnings.isEmpty,
              compact.tables.count == movie.tracks.count else {
            throw ISOBMFFError(.invalidValue, "not a complete regular movie", path: "moov", offset: nil)
        }
        if movie.userData != nil { movie.userDataOffset = compact.fileOffset(movie.userDataOffset) }
        if movie.metadata != nil { movie.metadataOffset = compact.fileOffset(movie.metadataOffset) }
        for t in movie.tracks.indices {
            if let problem = movie.tracks[t].problem { throw problem }
            if movie.tracks[t].userData != nil {
                movie.tracks[t].userDataOffset = compact.fileOffset(movie.tracks[t].userDataOffset)
            }
            for e in movie.tracks[t].sampleDescriptions.entries.indices {
                let offset = movie.tracks[t].sampleDescriptions.entries[e].fileOffset
                movie.tracks[t].sampleDescriptions.entries[e].fileOffset = compact.fileOffset(offset)
            }
            movie.tracks[t].releaseSampleTableBytes()
        }
        self.movie = movie
        self.tables = compact.tables
    }

    static func unsupported(_ header: BoxHeader, _ why: String) -> ISOBMFFError {
        ISOBMFFError(.invalidValue, "\(header.type) cannot be outlined: \(why)", path: header.path,
                     offset: header.offset)
    }
}

/// Where one track's sample-table boxes lie in the file (``MovieOutline``): each one's type,
/// payload range and box path, in file order.
public struct SampleTableLocations: Sendable {
    /// One table box left in the file.
    public struct Box: Sendable {
        /// `stts`, `stsz`, …
        public var type: FourCC
        /// Its payload (after the 8-byte header), in file offsets.
        public var payload: Range<UInt64>
        /// Its box path, for errors.
        public var path: String
    }

    /// The tables in file order; a type listed twice is a broken `stbl`.
    public var boxes: [Box] = []
}

/// `moov` rebuilt in memory without its sample tables, and how to map its offsets back.
struct CompactMovieBox {
    /// The file offset of the first byte of ``bytes``.
    let base: UInt64
    var bytes: [UInt8] = []
    /// Where bytes were left out: at compact offset `at`, `removed` bytes of the file.
    var cuts: [(at: UInt64, removed: UInt64)] = []
    var tables: [SampleTableLocations] = []

    static let tableTypes: Set<FourCC> = [.stts, .ctts, .stsc, .stsz, .stco, .co64, .stss, "sdtp", .sbgp, .sgpd]

    init(base: UInt64) {
        self.base = base
    }

    /// The file offset of what lies at `offset` of the compact `moov` (offsets as its
    /// ByteReader counts them, from ``base``).
    func fileOffset(_ offset: UInt64) -> UInt64 {
        var result = offset
        for cut in cuts where cut.at <= offset { result &+= cut.removed }  // Back inside moov: below its end.
        return result
    }

    var position: UInt64 { base &+ UInt64(bytes.count) }  // Never past moov's end in the file.

    /// Copies the boxes in `range` of the file (the payload of a box at `level`: 0 `moov`,
    /// 1 `trak`, 2 `mdia`, 3 `minf`, 4 `stbl`), descending towards the tables and leaving them out.
    mutating func copyChildren(of range: Range<UInt64>, level: Int, path: String, from source: some ByteSource)
        throws {
        var offset = range.lowerBound
        while offset < range.upperBound {
            let available = range.upperBound - offset
            let head = try source.bytes(at: offset, count: Int(min(available, 32)))
            var reader = ByteReader(head, fileOffset: offset, path: path)
            let header = try BoxHeader(parsing: &reader, available: available, parentPath: path)
            let plain = header.headerSize == 8 && !header.extendsToEnd
            let descend: FourCC? = [FourCC.trak, .mdia, .minf, .stbl].dropFirst(level).first
            if level < 4, header.type == descend {
                guard plain else { throw MovieOutline.unsupported(header, "not a plain 32-bit size") }
                if level == 0 { tables.append(SampleTableLocations()) }
                let start = bytes.count
                bytes += head[0..<8]
                try copyChildren(of: header.payloadOffset..<header.end, level: level + 1, path: header.path,
                                 from: source)
                // At most the box's own 32-bit size: its children were copied or made smaller.
                guard let size = UInt32(exactly: bytes.count - start) else {
                    throw MovieOutline.unsupported(header, "larger once copied")
                }
                for i in 0..<4 { bytes[start + i] = UInt8(truncatingIfNeeded: size >> (24 - 8 * i)) }
            } else if level == 4, plain, Self.tableTypes.contains(header.type), !tables.isEmpty {
                tables[tables.count - 1].boxes.append(.init(type: header.type,
                                                            payload: header.payloadOffset..<header.end,
                                                            path: header.path))
                // stsz keeps its version, flags, constant size and count (Track reads the count);
                // the other tables are left out whole.
                var removed = header.size
                if header.type == .stsz {
                    let kept = min(header.payloadSize, 12)
                    let size = UInt32(8 + kept)
                    for i in 0..<4 { bytes.append(UInt8(truncatingIfNeeded: size >> (24 - 8 * i))) }
                    bytes += head[4..<8]
                    bytes += try source.bytes(at: header.payloadOffset, count: Int(kept))
                    removed = header.payloadSize - kept
                }
                cuts.append((at: position, removed: removed))
            } else {
                // Bounded by moov's size, checked against Limits.maximumMovieBoxSize.
                bytes += try source.bytes(at: header.offset, count: Int(header.size))
            }
            offset = header.end
        }
    }
}
