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

/// The package ``Packager`` would write (its default layout: a file per segment), served on
/// demand from the unmodified movie (issue 31): every playlist, init segment and media
/// segment by the name `package` gives its file, without writing any segment.
///
/// The source is planned from the movie's tables alone (`moov`, or `moof`s): no sample byte
/// is read. It keeps, per track, the sample tables and one entry per segment (its first
/// sample and decode time) besides the playlists' texts; a media segment is built when asked
/// for, by the packager's own segment writer, as a header of a few hundred bytes (`styp`,
/// `moof`, `mdat` header) followed by ranges of the source. The files are the bytes
/// `package` writes (the playlists' sizes and bandwidths are those of the same segments).
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
    }

    /// The movie the ranges refer to.
    public let path: String
    /// The `EXT-X-TARGETDURATION` of every media playlist.
    public let targetDuration: Int
    /// Every file of the package, in the order `package` writes them: per track its init
    /// segment and media segments, then `master.m3u8`, `manifest.mpd` and the media playlists.
    public let fileNames: [String]
    /// Tracks left out and other things worth saying.
    public let warnings: [String]
    let tracks: [Track]
    let texts: [String: String]

    /// Plans the package of the movie at `path` with segments of `segmentSeconds` (the rules
    /// of ``PackageOptions/segmentSeconds``).
    ///
    /// - Throws: ``RemuxError``, as ``Packager/run(from:to:options:progress:isCancelled:)``
    ///   does for its input.
    public init(path: String, segmentSeconds: Double = 6) throws {
        guard segmentSeconds.isFinite, segmentSeconds > 0, segmentSeconds <= 3600,
              let segmentDuration = MediaTime(seconds: segmentSeconds, timescale: 1_000_000),
              segmentDuration.ticks > 0 else {
            throw RemuxError(.invalidArgument, "the segment duration must be above 0 and at most 3600 s")
        }
        let input = try InputFile(path: path)
        let reader: MovieReader<InputFile>
        do {
            reader = try MovieReader(reading: input)
        } catch let error as ISOBMFFError {
            throw FileSignature.explain(RemuxError(error), source: input).naming(input.path)
        }
        let prepared = try naming(input.path) { try Packager.prepare(reader, segmentDuration: segmentDuration) }
        var tracks: [Track] = []
        var streams: [StreamTrack] = []
        var names: [String] = []
        for track in prepared.tracks {
            var stream = track.stream
            let id = track.track.id
            let movieTimescale = track.edits == nil ? reader.movie.header.timescale : track.editTimescale
            var decodeTime = track.samples.first?.decodeTime ?? 0
            var decodeTimes: [UInt64] = []
            names.append(stream.initURI)
            // Sizes only: the copies are counted, not performed.
            try Packager.streamTrack(track, movieTimescale: movieTimescale, isCancelled: { false },
                                     initSink: { Packager.PackageSink() }, initFinished: { _ in },
                                     segmentSink: { _ in Packager.PackageSink() },
                                     segmentFinished: { number, _, facts in
                                         let uri = "track\(id)_\(number + 1).m4s"
                                         stream.segments.append(StreamSegment(decodeTime: facts.decodeTime,
                                                                              duration: facts.duration, uri: uri,
                                                                              size: facts.size))
                                         names.append(uri)
                                         decodeTimes.append(decodeTime)
                                         decodeTime &+= facts.duration  // As the writer's tfdt.
                                     })
            streams.append(stream)
            tracks.append(Track(prepared: track, movieTimescale: movieTimescale, decodeTimes: decodeTimes))
        }
        let (target, texts) = try Packager.playlists(of: streams, path: input.path)
        self.path = input.path
        self.targetDuration = target
        self.fileNames = names + texts.map(\.0)
        self.warnings = prepared.warnings
        self.tracks = tracks
        self.texts = Dictionary(texts, uniquingKeysWith: { a, _ in a })
    }

    /// The IDs (in the input) of the tracks packaged and their numbers of media segments.
    public var segmentCounts: [(trackID: UInt32, count: Int)] {
        tracks.map { ($0.prepared.track.id, $0.prepared.segments.count) }
    }

    /// The file of the package named `name` (one of ``fileNames``) as bytes and ranges of the
    /// source to send in order, or nil when the package has no such file.
    public func contents(of name: String) throws -> [SegmentPart]? {
        if let text = texts[name] { return [.bytes(Array(text.utf8))] }
        for track in tracks {
            let id = track.prepared.track.id
            if name == track.prepared.stream.initURI { return [.bytes(try initSegment(track))] }
            let prefix = "track\(id)_"
            guard name.hasPrefix(prefix), name.hasSuffix(".m4s"),
                  let number = Int(name.dropFirst(prefix.count).dropLast(4)), number >= 1,
                  "\(prefix)\(number).m4s" == name, number <= track.decodeTimes.count else { continue }
            return try segment(number - 1, of: track)
        }
        return nil
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
        var iterator = prepared.samples.makeIterator(from: range.lowerBound)
        var sink = Packager.PackageSink(parts: [])
        _ = try Packager.writeSegment(range.count, of: prepared, from: &iterator, writer: &writer, track: id,
                                      into: &sink)
        return sink.parts ?? []
    }
}
