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
    /// track names in `tref/chap`), else from Nero's `udta/chpl`. At most
    /// ``Limits/maximumChapterCount``: a chapter track declaring more is not read.
    static func read(_ movie: Movie, source: some ByteSource) -> [Chapter] {
        for track in movie.tracks {
            for id in track.references["chap"] ?? [] where id != track.trackID {
                guard let chapters = movie.tracks.first(where: { $0.trackID == id }), isTextTrack(chapters),
                      let read = try? fromTrack(chapters, movie: movie, source: source), !read.isEmpty else { continue }
                return read
            }
        }
        return movie.userData.map(fromNero) ?? []
    }

    /// Whether `track` can be a chapter track: a text handler (`text`, QuickTime's, or
    /// `sbtl`, Apple's subtitles) and a text sample entry (`text` or 3GPP's `tx3g`), as FFmpeg
    /// and QuickTime read chapters. A `tref/chap` that names anything else (a video track)
    /// is not followed.
    static func isTextTrack(_ track: Track) -> Bool {
        guard ["text", "sbtl"].contains(track.handlerType),
              let entry = track.sampleDescriptions.entries.first else { return false }
        return ["text", "tx3g"].contains(entry.format)
    }

    /// The samples of a chapter track: each one's bytes (a 16-bit length, the title, and
    /// what the writer added, such as an `encd` box) and duration, read into memory.
    /// Bounded: at most ``Limits/maximumChapterCount`` samples (checked on the declared
    /// count before any table is built), each copied whole up to
    /// ``Limits/maximumChapterSampleSize`` bytes, else rebuilt from its title cut to
    /// ``Limits/maximumChapterTitleBytes``.
    struct TrackSamples {
        var table: SampleTable
        var samples: [[UInt8]]
        var durations: [UInt32]
        var decodeTimes: [UInt64]
    }

    static func samples(of track: Track, movie: Movie, source: some ByteSource) throws -> TrackSamples? {
        guard track.declaredSampleCount <= Limits.maximumChapterCount else {
            throw RemuxError(.invalidInput, "\(track.path): the chapter track declares \(track.declaredSampleCount) "
                             + "chapters, more than the \(Limits.maximumChapterCount) this tool reads")
        }
        let table = try parse { try SampleTable(boxes: track.sampleTable(), fileLength: movie.fileLength) }
        guard table.sampleCount > 0, table.sampleCount <= Limits.maximumChapterCount else { return nil }
        var durations: [UInt32] = []
        var decodeTimes: [UInt64] = []
        var time: UInt64 = 0
        for entry in table.boxes.timeToSample.entries {
            for _ in 0..<entry.sampleCount where durations.count < table.sampleCount {
                durations.append(entry.sampleDelta)
                decodeTimes.append(time)
                time += UInt64(entry.sampleDelta)  // SampleTable checked that the total fits 64 bits.
            }
        }
        var samples: [[UInt8]] = []
        var failure: Error?
        let sizes = table.boxes.sampleSizes
        table.forEachChunk { chunk in
            var offset = chunk.offset
            for sample in chunk.firstSample..<(chunk.firstSample + chunk.sampleCount) {
                let size = Int(sizes.size(ofSample: sample))
                do {
                    if size <= Limits.maximumChapterSampleSize {
                        samples.append(try source.bytes(at: offset, count: size))
                    } else {
                        let head = try source.bytes(at: offset, count: 2 + Limits.maximumChapterTitleBytes)
                        samples.append(textSample(title(ofSample: head)))
                    }
                } catch {
                    failure = error
                    return false
                }
                offset += UInt64(size)  // Inside the validated chunk.
            }
            return true
        }
        if let failure { throw failure }
        return TrackSamples(table: table, samples: samples, durations: durations, decodeTimes: decodeTimes)
    }

    /// Each sample of a QuickTime text track is a 16-bit length and that many bytes of
    /// text (QuickTime File Format, "Text Sample Data"); its decode time is the start.
    static func fromTrack(_ track: Track, movie: Movie, source: some ByteSource) throws -> [Chapter] {
        guard track.mediaHeader.timescale > 0, let read = try samples(of: track, movie: movie, source: source) else {
            return []
        }
        return zip(read.samples, read.decodeTimes).map { bytes, start in
            Chapter(title: title(ofSample: bytes), start: Double(start) / Double(track.mediaHeader.timescale))
        }
    }

    /// The title in a text sample, at most ``Limits/maximumChapterTitleBytes`` bytes of it.
    static func title(ofSample bytes: [UInt8]) -> String {
        guard bytes.count >= 2 else { return "" }
        let length = min(Int(bytes[0]) << 8 | Int(bytes[1]), bytes.count - 2, Limits.maximumChapterTitleBytes)
        return String(decoding: bytes[2..<(2 + length)], as: UTF8.self)
    }

    /// A text sample holding `title`: its 16-bit length, the UTF-8 bytes, and the `encd`
    /// box that says they are UTF-8 (0x100), as FFmpeg writes chapter samples.
    static func textSample(_ title: String) -> [UInt8] {
        let text = Array(title.utf8.prefix(Limits.maximumChapterTitleBytes))
        var w = BoxWriter(capacity: text.count + 14)
        w.write(UInt16(text.count))  // At most maximumChapterTitleBytes.
        w.write(bytes: text)
        w.box("encd") { $0.write(UInt32(0x100)) }
        return w.bytes
    }

    /// Nero chapters (`udta/chpl`, ``NeroChapters``), in seconds.
    static func fromNero(_ userData: [UInt8]) -> [Chapter] {
        NeroChapters(userData: userData)?.entries.map { Chapter(title: $0.title, start: Double($0.start) / 1e7) } ?? []
    }
}
