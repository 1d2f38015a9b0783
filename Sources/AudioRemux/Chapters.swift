import ISOBMFF

/// Reading chapters from a movie. The boxes themselves have one reader and one writer each,
/// in ISOBMFF: ``ChapterTrack`` (the QuickTime text track) and ``NeroChapters`` (`chpl`).
enum Chapters {
    /// The chapters of `movie`: from a QuickTime chapter track (a text track that another
    /// track names in `tref/chap`), else from Nero's `udta/chpl`. At most
    /// ``Limits/maximumChapterCount``: a chapter track declaring more is not read.
    static func read(_ movie: Movie, source: some ByteSource) -> [Chapter] {
        fromChapterTrack(movie, source: source) ?? movie.userData.map(fromNero) ?? []
    }

    /// The chapters of `movie`'s QuickTime chapter track; nil when it has none that reads.
    static func fromChapterTrack(_ movie: Movie, source: some ByteSource) -> [Chapter]? {
        for chapters in Track.chapterTracks(in: movie.tracks) {
            if let read = try? fromTrack(chapters, movie: movie, source: source), !read.isEmpty { return read }
        }
        return nil
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
        // The one track index: the checks extraction's tables pass (none overlapping moov).
        let table = try parse { try MovieReader(movie: movie, source: source).sampleTable(of: track).table }
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
                        samples.append(ChapterTrack.textSample(ChapterTrack.title(ofSample: head)))
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
    /// text (QuickTime File Format, "Text Sample Data"); its decode time is the start, placed
    /// by the one presentation rule (``TrackPresentation``, its edits checked against the
    /// track's media), as FFmpeg places it: later by the leading empty edits, earlier by the
    /// first media edit's start. A chapter that starts inside what the first edit skips (a
    /// chapter track primed like its audio) starts where the track is first shown: it is the
    /// chapter playing then, as FFmpeg and mutagen list it from 0. One that no edit shows
    /// (after the presentation's end) is left out: no player reaches it.
    static func fromTrack(_ track: Track, movie: Movie, source: some ByteSource) throws -> [Chapter] {
        let timescale = track.mediaHeader.timescale
        guard timescale > 0, let read = try samples(of: track, movie: movie, source: source) else {
            return []
        }
        let presentation = TrackPresentation(of: track, in: movie, mediaDuration: read.table.totalDuration,
                                             mediaEnd: read.table.presentationEnd)
        let firstShown = presentation.edits.first { !$0.isEmpty }?.mediaTime ?? 0
        return zip(read.samples, read.decodeTimes).compactMap { bytes, start in
            guard let time = Int64(exactly: start),
                  let seconds = presentation.presentedSeconds(ofMediaTime: Swift.max(time, firstShown),
                                                              mediaTimescale: timescale) else { return nil }
            return Chapter(title: ChapterTrack.title(ofSample: bytes), start: seconds)
        }
    }

    /// Nero chapters (`udta/chpl`, ``NeroChapters``).
    static func fromNero(_ userData: [UInt8]) -> [Chapter] {
        NeroChapters(userData: userData)?.entries ?? []
    }
}
