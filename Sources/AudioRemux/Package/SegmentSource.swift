import ISOBMFF

/// One piece of a file of an on-demand package: bytes built from the movie's tables, or a
/// range of the source file to send as it is.
public enum SegmentPart: Sendable, Equatable {
    /// Bytes to send: an init segment, a playlist, or a media segment's `styp`, `moof` and
    /// `mdat` header.
    case bytes([UInt8])
    /// `count` bytes of the source file from `offset`: samples, copied as they are.
    case range(offset: UInt64, count: UInt64)

    /// The number of bytes the part stands for.
    public var byteCount: UInt64 {
        switch self {
        case .bytes(let bytes): UInt64(bytes.count)
        case .range(_, let count): count
        }
    }
}

/// The package ``Packager`` would write, served on demand from the unmodified movie
/// (issue 31): every playlist, init segment and media segment by the name `package` gives its
/// file, without writing any segment — in the default layout (a file per segment), with
/// ``PackageOptions/singleFile`` (one `trackN.mp4` per track: init segment, `sidx`, the
/// segments; ``contents(of:range:)`` answers an HTTP `Range` by building only the segments
/// it covers) and with ``PackageOptions/iFramePlaylists``.
///
/// The source is planned from the movie's tables alone (`moov`, or `moof`s): no sample byte
/// is read. It keeps, per track, one entry per segment (its first sample, decode time, size
/// and byte range, and for a regular movie the position in its tables, which stay in the file
/// and are read again in windows when a segment is asked for; a fragmented movie's tables are
/// kept in memory) besides the playlists' texts. The plan walks each track's samples once
/// and builds no segment: a segment's size comes from its samples' sizes and from the
/// writer's rule for the size of its `moof` (`MovieWriter.FragmentSizer`), a few
/// comparisons per sample. A media segment is built when asked for, by the packager's own
/// segment writer, as a header of a few hundred bytes (`styp`, `moof`, `mdat` header)
/// followed by ranges of the source. The files are the bytes `package` writes with the same
/// options (the playlists' sizes and bandwidths are those of the same segments).
///
/// ```swift
/// let source = try SegmentSource(path: "movie.mp4")
/// for part in try source.contents(of: "track1_3.m4s") ?? [] {
///     switch part {
///     case .bytes(let bytes): print("send", bytes.count, "bytes")
///     case .range(let offset, let count): print("send", count, "bytes of the movie from", offset)
///     }
/// }
/// ```
public struct SegmentSource: Sendable {
    /// One track's plan.
    struct Track: Sendable {
        var prepared: Packager.PreparedTrack
        var movieTimescale: UInt32
        /// Per segment, the decode time its `tfdt` gives (its first sample number is the lower
        /// bound of `prepared.segments`).
        var decodeTimes: [UInt64]
        /// The manifest entry: file names, sizes and (single file) byte ranges of the segments.
        var stream: StreamTrack
        /// The init segment's size in bytes.
        var initSize: UInt64
        /// The single file's `sidx`; empty in the default layout.
        var index: [UInt8]
        /// For tables read in windows, the cursor at each segment's first sample, its windows
        /// dropped; empty for tables in memory.
        var starts: [WindowedSamples.Cursor] = []
    }

    /// The movie the ranges refer to.
    public let path: String
    /// The `EXT-X-TARGETDURATION` of every media playlist.
    public let targetDuration: Int
    /// Every file of the package, in the order `package` writes them: per track its init
    /// segment and media segments (or its single file), then `master.m3u8`, `manifest.mpd`,
    /// the media playlists and the I-frame playlists.
    public let fileNames: [String]
    /// Tracks left out and other things worth saying.
    public let warnings: [String]
    /// Whether each track is one file (``PackageOptions/singleFile``).
    public let isSingleFile: Bool
    let tracks: [Track]
    let texts: [String: String]

    /// Plans the package of the movie at `path` with segments of `segmentSeconds` (the rules
    /// of ``PackageOptions/segmentSeconds``), in the default layout.
    ///
    /// - Throws: ``RemuxError``, as ``Packager/run(from:to:options:progress:isCancelled:)``
    ///   does for its input.
    public init(path: String, segmentSeconds: Double = 6) throws(RemuxError) {
        do {
            var options = PackageOptions()
            options.segmentSeconds = segmentSeconds
            try self.init(path: path, options: options)
        } catch {
            throw RemuxError(bridging: error)
        }
    }

    /// Plans the package of the movie at `path` as `package` writes it with `options` (their
    /// segment duration, single file and I-frame playlists; `overwrite` does not apply).
    ///
    /// - Throws: ``RemuxError``, as ``Packager/run(from:to:options:progress:isCancelled:)``
    ///   does for its input.
    public init(path: String, options: PackageOptions) throws(RemuxError) {
        do {
            let segmentSeconds = options.segmentSeconds
            guard segmentSeconds.isFinite, segmentSeconds > 0, segmentSeconds <= 3600,
                  let segmentDuration = MediaTime(seconds: segmentSeconds, timescale: 1_000_000),
                  segmentDuration.ticks > 0 else {
                throw RemuxError(.invalidArgument, "the segment duration must be above 0 and at most 3600 s")
            }
            let input = try InputFile(path: path)
            let (reader, prepared) = try Packager.open(input, segmentDuration: segmentDuration)
            var tracks: [Track] = []
            var names: [String] = []
            for track in prepared.tracks {
                let movieTimescale = track.edits == nil ? reader.movie.header.timescale : track.editTimescale
                var starts: [WindowedSamples.Cursor] = []
                // Sizes computed from the tables: no segment is built.
                let (initSize, facts) = try Packager.measureTrack(
                    track, source: input, movieTimescale: movieTimescale, isCancelled: { false },
                    segmentStarted: { _, cursor in cursor.parked.map { starts.append($0) } })
                let (stream, index) = try Packager.layout(track, initSize: initSize, segments: facts,
                                                          singleFile: options.singleFile,
                                                          iFrames: options.iFramePlaylists)
                var decodeTimes: [UInt64] = []
                decodeTimes.reserveCapacity(facts.count)
                var decodeTime = track.samples.firstDecodeTime
                for segment in facts {
                    decodeTimes.append(decodeTime)
                    decodeTime &+= segment.duration  // As the writer's tfdt.
                }
                names.append(stream.initURI)
                if !options.singleFile { names += stream.segments.map(\.uri) }
                tracks.append(Track(prepared: track, movieTimescale: movieTimescale, decodeTimes: decodeTimes,
                                    stream: stream, initSize: initSize, index: index, starts: starts))
            }
            let (target, texts) = try Packager.playlists(of: tracks.map(\.stream), path: input.path)
            self.path = input.path
            self.targetDuration = target
            self.fileNames = names + texts.map(\.0)
            self.warnings = prepared.warnings
            self.isSingleFile = options.singleFile
            self.tracks = tracks
            self.texts = Dictionary(texts, uniquingKeysWith: { a, _ in a })
        } catch {
            throw RemuxError(bridging: error)
        }
    }

    /// The IDs (in the input) of the tracks packaged and their numbers of media segments.
    public var segmentCounts: [(trackID: UInt32, count: Int)] {
        tracks.map { ($0.prepared.track.id, $0.prepared.segments.count) }
    }

    /// The size in bytes of the file named `name` (one of ``fileNames``), for a
    /// `Content-Length`; nil when the package has no such file. O(segments) for a single file.
    public func size(of name: String) -> UInt64? {
        if let text = texts[name] { return UInt64(text.utf8.count) }
        for track in tracks {
            if name == track.stream.initURI {
                guard isSingleFile else { return track.initSize }
                return track.stream.segments.reduce(track.initSize + UInt64(track.index.count)) { $0 + $1.size }
            }
            if let number = segmentNumber(name, of: track) { return track.stream.segments[number].size }
        }
        return nil
    }

    /// The file of the package named `name` (one of ``fileNames``) as bytes and ranges of the
    /// source to send in order, or nil when the package has no such file. A single file is
    /// built whole (every segment's header): serve its byte ranges with
    /// ``contents(of:range:)``.
    public func contents(of name: String) throws(RemuxError) -> [SegmentPart]? {
        try bridged {
            try contents(of: name, range: 0..<UInt64.max)
        }
    }

    /// The bytes `range` of the file named `name` (clamped to its size), as bytes and ranges
    /// of the source to send in order; nil when the package has no such file. For a single
    /// file only the segments the range covers are built: an `EXT-X-BYTERANGE` or a DASH
    /// `sidx` reference costs one segment.
    public func contents(of name: String, range: Range<UInt64>) throws(RemuxError) -> [SegmentPart]? {
        try bridged {
            if let text = texts[name] { return Self.clip([.bytes(Array(text.utf8))], to: range) }
            for track in tracks {
                if name == track.stream.initURI {
                    guard isSingleFile else { return Self.clip([.bytes(try initSegment(track))], to: range) }
                    var parts: [SegmentPart] = []
                    let head = track.initSize + UInt64(track.index.count)
                    var base: UInt64?  // The file offset of the first byte of `parts`.
                    if range.lowerBound < head {
                        parts.append(.bytes(try initSegment(track) + track.index))
                        base = 0
                    }
                    var offset = head
                    for (number, segment) in track.stream.segments.enumerated() {
                        defer { offset += segment.size }  // The file's size fits 64 bits: sizes < 2^31 each.
                        guard offset < range.upperBound else { break }
                        guard offset + segment.size > range.lowerBound else { continue }
                        if base == nil { base = offset }
                        parts += try self.segment(number, of: track)
                    }
                    let start = base ?? 0
                    return Self.joined(Self.clip(parts, to: (max(range.lowerBound, start) - start)
                                                     ..< (max(range.upperBound, start) - start)))
                }
                if let number = segmentNumber(name, of: track) {
                    return Self.clip(try segment(number, of: track), to: range)
                }
            }
            return nil
        }
    }

    /// The number (0-based) of the media segment named `name` of `track` in the default layout.
    func segmentNumber(_ name: String, of track: Track) -> Int? {
        guard !isSingleFile else { return nil }
        let prefix = "track\(track.prepared.track.id)_"
        guard name.hasPrefix(prefix), name.hasSuffix(".m4s"),
              let number = Int(name.dropFirst(prefix.count).dropLast(4)), number >= 1,
              Packager.segmentName(track.prepared.track.id, number - 1) == name,
              number <= track.decodeTimes.count else { return nil }
        return number - 1
    }

    /// The bytes `range` of the file made of `parts` (a range past its end gives fewer).
    static func clip(_ parts: [SegmentPart], to range: Range<UInt64>) -> [SegmentPart] {
        var result: [SegmentPart] = []
        var offset: UInt64 = 0
        for part in parts {
            let count = part.byteCount
            defer { offset += count }
            let start = max(range.lowerBound, offset)
            let end = min(range.upperBound, offset + count)
            guard start < end else { continue }
            let (from, length) = (start - offset, end - start)
            switch part {
            case .bytes(let bytes):
                // from + length <= count = bytes.count: in range.
                result.append(.bytes(Array(bytes[Int(from)..<Int(from + length)])))
            case .range(let source, _):
                result.append(.range(offset: source + from, count: length))
            }
        }
        return result
    }

    /// `parts` with adjacent byte parts joined.
    static func joined(_ parts: [SegmentPart]) -> [SegmentPart] {
        var result: [SegmentPart] = []
        for part in parts {
            if case .bytes(let more) = part, case .bytes(let last)? = result.last {
                result[result.count - 1] = .bytes(last + more)
            } else {
                result.append(part)
            }
        }
        return result
    }

    /// The init segment of `track`: `ftyp` and a `moov` without samples.
    func initSegment(_ track: Track) throws -> [UInt8] {
        var (writer, _) = try Packager.segmentWriter(track.prepared, movieTimescale: track.movieTimescale)
        var sink = Packager.PackageSink(parts: [])
        try writer.writeFragment(into: &sink)
        guard case .bytes(let bytes)? = sink.parts?.first, sink.parts?.count == 1 else { return [] }
        return bytes
    }

    /// Media segment `number` (0-based) of `track`, made by the packager's segment writer
    /// resumed at that segment: its header and the ranges of its samples.
    func segment(_ number: Int, of track: Track) throws -> [SegmentPart] {
        let prepared = track.prepared
        var (writer, id) = try Packager.segmentWriter(prepared, movieTimescale: track.movieTimescale)
        guard let sequence = UInt32(exactly: number) else { return [] }
        try writer.setFirstDecodeTime(track.decodeTimes[number], for: id)
        try writer.resumeStream(afterFragments: sequence)
        let range = prepared.segments[number]
        var iterator: PackageCursor
        switch prepared.samples {
        case .indexed(let index):
            iterator = .indexed(index.makeIterator(from: range.lowerBound))
        case .windowed:
            // The cursor kept at the segment's start, reading the movie's tables again.
            guard number < track.starts.count else { return [] }
            iterator = .windowed(track.starts[number], try InputFile(path: path))
        }
        var sink = Packager.PackageSink(parts: [])
        _ = try Packager.writeSegment(range.count, of: prepared, from: &iterator, writer: &writer, track: id,
                                      into: &sink)
        return sink.parts ?? []
    }
}
