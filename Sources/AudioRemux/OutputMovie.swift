import ISOBMFF

/// The planned output file: `ftyp`, then `moov` (faststart: always before the media data),
/// then the header of the `mdat` whose payload is the samples, copied in order.
///
/// The layout is computed before anything is written: the sample tables are rebuilt for
/// the output's own chunks, and `moov` is sized first so the chunk offsets can point past it
/// (with `co64` only when an offset needs more than 32 bits).
/// What an extraction carries beyond the audio: metadata and a chapter track.
struct OutputExtras {
    /// `moov/udta` (iTunes items, QuickTime items, Nero chapters), header included.
    var userData: [UInt8]?
    /// `moov/meta` (keys-based metadata), header included.
    var metadata: [UInt8]?
    /// The audio track's `trak/udta` and `mdia/elng`.
    var trackUserData: [UInt8]?
    var extendedLanguage: [UInt8]?
    /// A QuickTime chapter track (text), referenced from the audio by `tref/chap`.
    var chapterTrack: TrackPlan?
}

struct OutputMovie {
    var fileType: [UInt8]
    var movieBox: [UInt8]
    var mediaDataHeader: [UInt8]
    var payloadSize: UInt64

    /// Output chunks hold at most this many bytes of samples.
    static let chunkByteLimit: UInt64 = 1 << 20

    /// The brands for an output holding `codec`: `M4A ` for the codecs Apple's M4A
    /// carries (AAC, ALAC, AC-3, E-AC-3); plain ISO brands for the others, with `Opus` for
    /// Opus as its ISOBMFF mapping asks.
    static func fileType(for codec: AudioCodec.Kind) -> FileTypeBox {
        switch codec {
        case .aac, .alac, .ac3, .eac3:
            FileTypeBox(majorBrand: .m4a, minorVersion: 0x200, compatibleBrands: [.m4a, .mp42, .isom])
        case .opus:
            FileTypeBox(majorBrand: .isom, minorVersion: 0x200, compatibleBrands: [.isom, "iso2", .mp42, "Opus"])
        case .mp3, .mp2, .flac:
            FileTypeBox(majorBrand: .isom, minorVersion: 0x200, compatibleBrands: [.isom, "iso2", .mp42])
        }
    }

    /// - Parameters:
    ///   - entries: the output's sample entries; `entryIndex` maps an input `stsd` index
    ///     (1-based) to its 1-based index among them.
    ///   - codec: decides the brands, and for AAC the roll-recovery group (-1) written when
    ///     the input has none, as FFmpeg does.
    /// The media duration written in `mdhd`.
    var mediaDuration: UInt64
    /// The output's presented duration in seconds (its edit list's).
    var presentedSeconds: Double

    ///   - mediaDuration: the `mdhd` duration to write. When it differs from the input's
    ///     (fragmented or salvaged input), edits of duration 0 or running past the media
    ///     are fitted to it.
    init(movie: Movie, track: Track, table: SampleTable, entries: [[UInt8]], entryIndex: [UInt32: UInt32],
         codec: AudioCodec.Kind, mediaDuration: UInt64, extras: OutputExtras = OutputExtras()) throws {
        let addAACRoll = codec == .aac
        // Output chunks: consecutive samples up to chunkByteLimit, split where the entry changes.
        var chunkSamples: [(count: UInt32, entry: UInt32)] = []
        var chunkStarts: [UInt64] = []
        var position: UInt64 = 0
        var chunkBytes: UInt64 = 0
        let sizes = table.boxes.sampleSizes
        table.forEachChunk { chunk in
            let entry = entryIndex[chunk.sampleDescriptionIndex] ?? 1
            for sample in chunk.firstSample..<(chunk.firstSample + chunk.sampleCount) {
                let size = UInt64(sizes.size(ofSample: sample))
                if let last = chunkSamples.last, last.entry == entry, chunkBytes + size <= Self.chunkByteLimit
                    || chunkBytes == 0
                {
                    chunkSamples[chunkSamples.count - 1].count += 1
                    chunkBytes += size
                } else {
                    chunkSamples.append((1, entry))
                    chunkStarts.append(position)
                    chunkBytes = size
                }
                position += size
            }
            return true
        }
        var runs: [SampleToChunkBox.Entry] = []
        for (i, chunk) in chunkSamples.enumerated() {
            if let last = runs.last, last.samplesPerChunk == chunk.count, last.sampleDescriptionIndex == chunk.entry {
                continue
            }
            runs.append(.init(firstChunk: UInt32(i + 1), samplesPerChunk: chunk.count,
                              sampleDescriptionIndex: chunk.entry))
        }

        var media = track.mediaHeader
        // With an edit list, the input's movie timescale is kept, so the edits stay exact.
        // Without one, the output gets the edit list FFmpeg writes: all of the media from
        // time 0, in milliseconds, rounded up.
        let inputEdits = track.editList.flatMap { $0.entries.isEmpty ? nil : $0 }
        let movieTimescale = inputEdits != nil ? movie.header.timescale : 1000
        guard movieTimescale > 0, media.timescale > 0 else {
            throw RemuxError(.invalidInput, "\(track.path): the movie or media timescale is 0")
        }
        var editList = inputEdits ?? EditListBox(entries: [
            .init(segmentDuration: rescaleRoundingUp(mediaDuration, from: media.timescale, to: movieTimescale) ?? 0,
                  mediaTime: 0),
        ])
        if mediaDuration != media.duration, inputEdits != nil {
            var edits = editList
            for i in edits.entries.indices where !edits.entries[i].isEmpty {
                let start = UInt64(clamping: edits.entries[i].mediaTime)
                let available = rescale(mediaDuration > start ? mediaDuration - start : 0, from: media.timescale,
                                        to: movieTimescale) ?? UInt64.max
                if edits.entries[i].segmentDuration == 0 || edits.entries[i].segmentDuration > available {
                    edits.entries[i].segmentDuration = available
                }
            }
            editList = edits
        }
        media.duration = mediaDuration
        self.mediaDuration = mediaDuration
        let trackDuration = editList.entries.reduce(UInt64(0)) { total, entry in
            let (sum, overflow) = total.addingReportingOverflow(entry.segmentDuration)
            return overflow ? UInt64.max : sum
        }
        if trackDuration == UInt64.max {
            throw RemuxError(.invalidInput, "\(track.path): the track's duration does not fit in 64 bits")
        }

        presentedSeconds = Double(trackDuration) / Double(movieTimescale)
        var movieHeader = movie.header
        movieHeader.timescale = movieTimescale
        movieHeader.duration = trackDuration
        movieHeader.nextTrackID = extras.chapterTrack == nil ? 2 : 3
        var trackHeader = track.header
        trackHeader.trackID = 1
        trackHeader.duration = trackDuration
        trackHeader.flags |= TrackHeaderBox.enabledFlag | TrackHeaderBox.inMovieFlag
        trackHeader.width = 0
        trackHeader.height = 0

        var groupDescriptions = table.boxes.sampleGroupDescriptions
        var sampleToGroups = table.boxes.sampleToGroups
        if addAACRoll && !groupDescriptions.contains(where: { $0.groupingType == .roll }) {
            groupDescriptions.append(.aacRoll)
            sampleToGroups.append(SampleToGroupBox(groupingType: .roll, entries: [
                .init(sampleCount: UInt32(table.sampleCount), groupDescriptionIndex: 1),
            ]))
        }

        func buildMovieBox(firstChunkOffset: UInt64) -> [UInt8] {
            var w = BoxWriter(capacity: 4096 + table.sampleCount * 4 + chunkStarts.count * 8)
            w.box(.moov) { moov in
                movieHeader.write(to: &moov)
                moov.box(.trak) { trak in
                    trackHeader.write(to: &trak)
                    if extras.chapterTrack != nil {
                        trak.box("tref") { tref in tref.box("chap") { $0.write(UInt32(2)) } }
                    }
                    trak.box(.edts) { edts in editList.write(to: &edts) }
                    trak.box(.mdia) { mdia in
                        media.write(to: &mdia)
                        HandlerBox(handlerType: .soun, name: "SoundHandler").write(to: &mdia)
                        if let elng = extras.extendedLanguage { mdia.write(bytes: elng) }
                        mdia.box(.minf) { minf in
                            SoundMediaHeaderBox(balance: track.soundMediaHeader?.balance ?? 0).write(to: &minf)
                            minf.box(.dinf) { dinf in DataReferenceBox.selfContained.write(to: &dinf) }
                            minf.box(.stbl) { stbl in
                                SampleDescriptionBox(entries: entries.map { .init(format: .mp4a, bytes: $0) })
                                    .write(to: &stbl)
                                table.boxes.timeToSample.write(to: &stbl)
                                table.boxes.compositionOffsets?.write(to: &stbl)
                                table.boxes.syncSamples?.write(to: &stbl)
                                SampleToChunkBox(entries: runs).write(to: &stbl)
                                sizes.write(to: &stbl)
                                ChunkOffsetBox(offsets: chunkStarts.map { $0 + firstChunkOffset }).write(to: &stbl)
                                for box in groupDescriptions { box.write(to: &stbl) }
                                for box in sampleToGroups { box.write(to: &stbl) }
                            }
                        }
                    }
                    if let udta = extras.trackUserData { trak.write(bytes: udta) }
                }
                if var chapters = extras.chapterTrack {
                    // One chunk, after the audio.
                    chapters.retime(from: movie.header.timescale, to: movieTimescale)
                    Self.writeCopiedTrack(chapters, chunkOffset: firstChunkOffset + table.totalSampleBytes, to: &moov)
                }
                if let udta = extras.userData { moov.write(bytes: udta) }
                if let meta = extras.metadata { moov.write(bytes: meta) }
            }
            return w.bytes
        }

        fileType = Self.fileType(for: codec).serialized
        payloadSize = table.totalSampleBytes + (extras.chapterTrack?.sizes.reduce(UInt64(0)) { $0 + UInt64($1) } ?? 0)
        mediaDataHeader = MediaDataHeader.bytes(payloadSize: payloadSize)
        // The moov size depends on stco versus co64, which depends on the offsets, which
        // depend on the moov size: iterate until the size is stable (at most twice more).
        // Only one moov is alive at a time: a 10-hour track's takes megabytes.
        var size = buildMovieBox(firstChunkOffset: 0).count
        var box: [UInt8] = []
        while true {
            box = []
            box = buildMovieBox(firstChunkOffset: UInt64(fileType.count + size + mediaDataHeader.count))
            if box.count == size { break }
            size = box.count
        }
        movieBox = box
    }

    /// A track copied whole (tables as they are), its samples in one chunk at `chunkOffset`.
    static func writeCopiedTrack(_ track: TrackPlan, chunkOffset: UInt64, to moov: inout BoxWriter) {
        let count = UInt32(track.sampleCount)
        track.write(runs: count == 0 ? [] : [.init(firstChunk: 1, samplesPerChunk: count, sampleDescriptionIndex: 1)],
                    chunkOffsets: count == 0 ? [] : [chunkOffset], to: &moov)
    }
}
