/// A parsed movie: the file's brands, the `moov` box and its tracks, and where the media
/// data lies. Parsing reads box headers and the `moov` box only, never sample data.
public struct Movie: Sendable {
    /// The `ftyp` brands; nil in old QuickTime files, which may have none.
    public var fileType: FileTypeBox?
    /// The `mvhd`: the movie timescale and duration.
    public var header: MovieHeaderBox
    /// The `trak` boxes in file order (`moov/trak[1]` first).
    public var tracks: [Track]
    /// Where the `moov` box lies in the file.
    public var movieBoxRange: Range<UInt64>
    /// Where each `mdat` box lies in the file, header included.
    public var mediaDataRanges: [Range<UInt64>]
    /// Whether the movie has `mvex` or the file has `moof` boxes (ISO/IEC 14496-12 § 8.8).
    public var isFragmented: Bool
    /// Where each complete `moof` box lies, in file order.
    public var fragmentRanges: [Range<UInt64>]
    /// The fragment defaults of each track (`mvex/trex`).
    public var trackExtends: [TrackExtendsBox]
    /// `moov/udta` as it is (iTunes `meta`/`ilst` items, QuickTime `©xxx` items, Nero
    /// chapters `chpl`, …), header included.
    public var userData: [UInt8]?
    /// `moov/meta` as it is: keys-based metadata (`keys` + `ilst`, as iPhones write).
    public var metadata: [UInt8]?
    /// Where `userData` and `metadata` start in the file, for errors.
    public var userDataOffset: UInt64 = 0
    /// Where ``metadata`` starts in the file (0 without it), for errors.
    public var metadataOffset: UInt64 = 0
    /// The length of the file.
    public var fileLength: UInt64
    /// When the file ends inside a top-level box (after `moov`), that box's header: the file
    /// was cut short, typically in the middle of `mdat`.
    public var truncatedBox: BoxHeader?
    /// What was wrong with the file but tolerated while reading it, as FFmpeg tolerates it:
    /// a second `moov` box (`.duplicateBox`; the first is read). A track whose sample
    /// descriptions are damaged says so in its own ``Track/problem``.
    public var warnings: [ISOBMFFError] = []

    /// Whether sound sample descriptions use QuickTime's layout (see ``AudioSampleEntry``).
    public var usesQuickTimeLayout: Bool { fileType?.isQuickTime ?? true }

    /// Reads the top-level boxes of `source` and parses `moov`.
    ///
    /// Bytes after the last complete box (a trailing partial box or garbage) are ignored
    /// once `moov` has been read; before that they are an error. A second `moov` is ignored
    /// with a warning (``warnings``); a track without a readable `stsd` is kept with its
    /// ``Track/problem``.
    public init(reading source: some ByteSource) throws {
        try self.init(reading: source) { header in try Self.payload(of: header, in: source) }
    }

    /// Reads the top-level boxes of `source` as ``init(reading:)`` does, with `moov`'s payload
    /// given by `movieBox` (``MovieOutline`` passes one without its sample tables).
    init(reading source: some ByteSource, movieBox: (BoxHeader) throws -> ByteReader) throws {
        var boxes = TopLevelBoxes(source: source)
        var fileType: FileTypeBox?
        var movie: ParsedMovieBox?
        var mediaData: [Range<UInt64>] = []
        var fragments: [Range<UInt64>] = []
        var truncatedBox: BoxHeader?
        var warnings: [ISOBMFFError] = []
        while true {
            let header: BoxHeader
            do {
                guard let next = try boxes.next() else { break }
                header = next
            } catch let error as ISOBMFFError {
                if boxes.offset == 0 { throw Self.notAMovie(error) }
                if movie != nil {
                    if error.code == .boxOutsideParent { truncatedBox = boxes.lastHeader }
                    break
                }
                if error.code == .boxOutsideParent || error.code == .truncated {
                    throw ISOBMFFError(.endOfFile, "the file ends inside this box before any moov box: "
                                       + "it is truncated (\(error.message))", path: error.path, offset: error.offset)
                }
                throw error
            }
            if header.offset == 0 && !header.type.isPrintable { throw Self.notAMovie(nil) }
            switch header.type {
            case .ftyp where fileType == nil:
                guard header.size <= Limits.maximumFileTypeBoxSize else {
                    throw ISOBMFFError(.limitExceeded, "ftyp of \(header.size) bytes", path: header.path,
                                       offset: header.offset)
                }
                var payload = try Self.payload(of: header, in: source)
                fileType = try FileTypeBox(parsing: &payload)
            case .moov:
                if let first = movie {
                    // FFmpeg keeps the first too (mov.c: "Found duplicated MOOV Atom. Skipped it").
                    warnings.append(ISOBMFFError(.duplicateBox, "a second moov box, ignored: the first one (at byte "
                                                 + "\(first.range.lowerBound)) is read", path: header.path,
                                                 offset: header.offset))
                    continue
                }
                guard header.size <= Limits.maximumMovieBoxSize else {
                    throw ISOBMFFError(.limitExceeded, "moov of \(header.size) bytes is larger than the "
                                       + "\(Limits.maximumMovieBoxSize)-byte limit", path: header.path,
                                       offset: header.offset)
                }
                let payload = try movieBox(header)
                let parsed = try Self.parseMovieBox(payload)
                movie = parsed
                movie?.range = header.offset..<header.end
            case .mdat:
                mediaData.append(header.offset..<header.end)
            case .moof:
                fragments.append(header.offset..<header.end)
            default:
                break
            }
        }
        guard let movie else {
            throw ISOBMFFError(.missingBox, fileType == nil
                               ? "no ftyp or moov box: this does not look like an MP4/MOV file"
                               : "no moov box: the file is incomplete or not a movie", path: "", offset: nil)
        }
        self.fileType = fileType
        self.header = movie.header
        self.tracks = movie.tracks
        self.movieBoxRange = movie.range
        self.mediaDataRanges = mediaData
        self.userData = movie.userData
        self.metadata = movie.metadata
        self.userDataOffset = movie.userDataOffset
        self.metadataOffset = movie.metadataOffset
        self.isFragmented = movie.extends != nil || !fragments.isEmpty
        self.fragmentRanges = fragments
        self.trackExtends = movie.extends ?? []
        self.fileLength = source.length
        self.truncatedBox = truncatedBox
        self.warnings = warnings
    }

    /// Forgets every track's raw `stbl` bytes (see ``Track/releaseSampleTableBytes()``).
    public mutating func releaseSampleTableBytes() {
        for i in tracks.indices { tracks[i].releaseSampleTableBytes() }
    }

    private static func notAMovie(_ error: ISOBMFFError?) -> ISOBMFFError {
        ISOBMFFError(.invalidValue, "not an MP4/MOV/M4A file: the first bytes are not a box header"
                     + (error.map { " (\($0.message))" } ?? ""), path: "", offset: 0)
    }

    private static func payload(of header: BoxHeader, in source: some ByteSource) throws -> ByteReader {
        // Limits above keep the size far below Int.max.
        let bytes = try source.bytes(at: header.payloadOffset, count: Int(header.payloadSize))
        return ByteReader(bytes, fileOffset: header.payloadOffset, path: header.path)
    }

    struct ParsedMovieBox {
        var header: MovieHeaderBox
        var tracks: [Track]
        var range: Range<UInt64> = 0..<0
        var extends: [TrackExtendsBox]?
        var userData: [UInt8]?
        var metadata: [UInt8]?
        var userDataOffset: UInt64 = 0
        var metadataOffset: UInt64 = 0
    }

    private static func parseMovieBox(_ moov: ByteReader) throws -> ParsedMovieBox {
        var reader = moov
        var header: MovieHeaderBox?
        var tracks: [Track] = []
        var extends: [TrackExtendsBox]?
        var userData: [UInt8]?
        var metadata: [UInt8]?
        var userDataOffset: UInt64 = 0
        var metadataOffset: UInt64 = 0
        while let (child, payload) = try reader.readBox(depth: 1) {
            switch child.type {
            case .mvhd:
                guard header == nil else { throw duplicate(child) }
                var body = payload
                header = try MovieHeaderBox(parsing: &body)
            case .trak:
                var body = payload
                body.path = "moov/trak[\(tracks.count + 1)]"
                tracks.append(try Track(parsing: body))
            case .mvex:
                var mvex = payload
                var defaults: [TrackExtendsBox] = extends ?? []
                while let (box, boxPayload) = try mvex.readBox(depth: 2) {
                    guard box.type == TrackExtendsBox.type else { continue }
                    var body = boxPayload
                    defaults.append(try TrackExtendsBox(parsing: &body))
                }
                extends = defaults
            case .moov:
                throw ISOBMFFError(.duplicateBox, "a moov box inside moov", path: child.path, offset: child.offset)
            case "udta" where userData == nil:
                userData = reader.bytes(of: child)
                userDataOffset = child.offset
            case "meta" where metadata == nil:
                metadata = reader.bytes(of: child)
                metadataOffset = child.offset
            default:
                break
            }
        }
        guard let header else {
            throw ISOBMFFError(.missingBox, "moov has no mvhd", path: moov.path, offset: moov.fileOffset)
        }
        var seen: Set<UInt32> = []
        for track in tracks where !seen.insert(track.trackID).inserted {
            throw ISOBMFFError(.duplicateBox, "a second track with ID \(track.trackID)", path: track.path, offset: nil)
        }
        return ParsedMovieBox(header: header, tracks: tracks, extends: extends, userData: userData, metadata: metadata,
                              userDataOffset: userDataOffset, metadataOffset: metadataOffset)
    }
}

func duplicate(_ header: BoxHeader) -> ISOBMFFError {
    ISOBMFFError(.duplicateBox, "\(header.type) appears more than once", path: header.path, offset: header.offset)
}

func missing(_ type: FourCC, in reader: ByteReader) -> ISOBMFFError {
    ISOBMFFError(.missingBox, "no \(type) box", path: reader.path, offset: reader.fileOffset)
}
