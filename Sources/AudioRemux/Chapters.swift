import ISOBMFF

/// A chapter: a title and where it starts.
public struct Chapter: Sendable, Equatable {
    /// The chapter's name, as the chapter track's text sample or Nero's `chpl` entry holds it.
    public var title: String
    /// Seconds from the start of the movie.
    public var start: Double

    /// A chapter called `title` that starts `start` seconds into the movie.
    public init(title: String, start: Double) {
        self.title = title
        self.start = start
    }
}

enum Chapters {
    /// The chapters of `movie`: from a QuickTime chapter track (a text track that another
    /// track names in `tref/chap`), else from Nero's `udta/chpl`.
    static func read(_ movie: Movie, source: some ByteSource) -> [Chapter] {
        let ids = Set(movie.tracks.flatMap { $0.references["chap"] ?? [] })
        if let track = movie.tracks.first(where: { ids.contains($0.trackID) }),
           let chapters = try? fromTrack(track, movie: movie, source: source), !chapters.isEmpty {
            return chapters
        }
        return movie.userData.map(fromNero) ?? []
    }

    /// Each sample of a QuickTime text track is a 16-bit length and that many bytes of
    /// text (QuickTime File Format, "Text Sample Data"); its decode time is the start.
    static func fromTrack(_ track: Track, movie: Movie, source: some ByteSource) throws -> [Chapter] {
        let table = try SampleTable(boxes: track.sampleTable(), fileLength: movie.fileLength)
        guard table.sampleCount <= 10_000, track.mediaHeader.timescale > 0 else { return [] }
        var starts: [UInt64] = []
        var time: UInt64 = 0
        for entry in table.boxes.timeToSample.entries {
            for _ in 0..<entry.sampleCount {
                starts.append(time)
                time += UInt64(entry.sampleDelta)
            }
        }
        var chapters: [Chapter] = []
        var failure: Error?
        table.forEachChunk { chunk in
            var offset = chunk.offset
            for sample in chunk.firstSample..<(chunk.firstSample + chunk.sampleCount) {
                let size = Int(table.boxes.sampleSizes.size(ofSample: sample))
                do {
                    let bytes = size >= 2 ? try source.bytes(at: offset, count: min(size, 2 + 1024)) : []
                    let length = bytes.count >= 2 ? min(Int(bytes[0]) << 8 | Int(bytes[1]), bytes.count - 2) : 0
                    chapters.append(Chapter(title: String(decoding: bytes.dropFirst(2).prefix(length), as: UTF8.self),
                                            start: Double(starts[sample]) / Double(track.mediaHeader.timescale)))
                } catch {
                    failure = error
                    return false
                }
                offset += UInt64(size)
            }
            return true
        }
        if let failure { throw failure }
        return chapters
    }

    /// Nero chapters (`chpl`): version, flags, [4 reserved bytes in version 1], a count,
    /// then per chapter a 64-bit start in 100 ns units and a Pascal-string title.
    static func fromNero(_ userData: [UInt8]) -> [Chapter] {
        var udta = ByteReader(userData)
        guard let (_, body) = try? udta.readBox(depth: 1) else { return [] }
        var children = body
        while let (child, payload) = try? children.readBox(depth: 2) {
            guard child.type == "chpl" else { continue }
            var reader = payload
            var chapters: [Chapter] = []
            guard let (version, _) = try? reader.readVersionAndFlags() else { return [] }
            if version == 1 { _ = try? reader.skip(4) }
            guard let count = try? reader.readUInt8() else { return [] }
            for _ in 0..<count {
                guard let start = try? reader.readUInt64(), let length = try? reader.readUInt8(),
                      let title = try? reader.readBytes(Int(length)) else { break }
                chapters.append(Chapter(title: String(decoding: title, as: UTF8.self), start: Double(start) / 1e7))
            }
            return chapters
        }
        return []
    }
}
