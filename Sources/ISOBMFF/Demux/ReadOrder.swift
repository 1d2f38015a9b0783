/// The order in which a demuxer reading a whole file takes the samples of its tracks, and
/// so how far it gets in a file cut short: players stop at the first sample of which no
/// byte is in the file, in this order, for every track at once (issue 32: `probe
/// --packets` lists a truncated file as ffprobe lists it).
///
/// The rule is FFmpeg's (libavformat/mov.c, choosing the next sample of a seekable file),
/// learnt from its behaviour and its source: among the tracks' next samples, take the one
/// with the lowest decode time, except that of two whose decode times lie within one second
/// of each other the one stored earlier in the file comes first; the tracks are weighed in
/// their order in `moov`, each against the best so far. Decode times are compared in
/// microseconds (rounded to the nearest), as FFmpeg compares them.
public enum ReadOrder {
    /// One track's part in the read: the samples wholly inside the file, and what follows them.
    public struct Track: Sendable {
        /// The samples that lie wholly inside the file, in decoding order.
        public var samples: SampleIndex
        /// The track's media timescale.
        public var timescale: UInt32
        /// Ticks taken off every decode time (FFmpeg's shift for negative composition
        /// offsets; 0 for most tracks).
        public var decodeTimeShift: Int64
        /// What follows `samples`: nil for a complete track, and for a track the demuxer
        /// skips without reading (a chapter track).
        public var cut: Cut?

        /// A track's part: its whole `samples` in a `timescale`, FFmpeg's `decodeTimeShift`,
        /// and how they end (`cut`: nil for a complete track).
        public init(samples: SampleIndex, timescale: UInt32, decodeTimeShift: Int64 = 0, cut: Cut?) {
            self.samples = samples
            self.timescale = timescale
            self.decodeTimeShift = decodeTimeShift
            self.cut = cut
        }
    }

    /// How a track's samples end in a file cut short.
    public enum Cut: Sendable, Equatable {
        /// The next sample starts at or past the end of the file: reading it stops the read.
        case atNextSample
        /// The next sample starts at `offset`, inside the file, and is cut by its end: a
        /// demuxer reads its partial bytes (ffprobe lists them, as a packet of fewer bytes)
        /// and goes on; the sample after it, `duration` ticks later, stops the read.
        case inside(offset: UInt64, duration: UInt32)
    }

    /// How many of each track's `samples` are read before the read stops at the first
    /// sample of which no byte is in the file (every track's count when none is cut). The
    /// sample that stops it lies past every byte of the file, so it loses every tie on
    /// position. O(samples read × tracks).
    public static func samplesBeforeFirstMissing(_ tracks: [Track]) -> [Int] {
        // Per track: how many of its samples were read, counting a partial one after `samples`.
        var read = [Int](repeating: 0, count: tracks.count)
        guard tracks.contains(where: { $0.cut != nil }) else { return tracks.map(\.samples.count) }
        let second: Int64 = 1_000_000
        while true {
            // nil offset: past every byte of the file, the sample that stops the read.
            var best: (track: Int, time: Int64, offset: UInt64?)?
            for (k, track) in tracks.enumerated() {
                let position = read[k]
                let decodeTime: UInt64
                let offset: UInt64?
                if position < track.samples.count {
                    (decodeTime, offset) = (track.samples[position].decodeTime, track.samples[position].offset)
                } else {
                    switch track.cut {
                    case nil: continue
                    case .atNextSample: (decodeTime, offset) = (track.samples.endDecodeTime, nil)
                    case .inside(let cut, let duration):
                        if position == track.samples.count {
                            (decodeTime, offset) = (track.samples.endDecodeTime, cut)
                        } else {
                            let (end, overflow) = track.samples.endDecodeTime.addingReportingOverflow(UInt64(duration))
                            (decodeTime, offset) = (overflow ? .max : end, nil)
                        }
                    }
                }
                let time = microseconds(decodeTime, shift: track.decodeTimeShift, timescale: track.timescale)
                guard let current = best else {
                    best = (k, time, offset)
                    continue
                }
                let (gap, overflow) = current.time.subtractingReportingOverflow(time)
                let earlier: Bool
                if !overflow && gap.magnitude <= second.magnitude {
                    switch (offset, current.offset) {
                    case let (mine?, theirs?): earlier = mine < theirs
                    case (.some, nil): earlier = true
                    default: earlier = false
                    }
                } else {
                    earlier = time < current.time
                }
                if earlier { best = (k, time, offset) }
            }
            guard let chosen = best else { break }  // Every track read to its end.
            if chosen.offset == nil { break }  // The first sample not in the file: the read stops.
            read[chosen.track] += 1
        }
        return zip(read, tracks).map { min($0, $1.samples.count) }
    }

    /// `ticks` − `shift` in microseconds; `Int64.max` where that does not fit (real decode
    /// times are far from it).
    static func microseconds(_ ticks: UInt64, shift: Int64, timescale: UInt32) -> Int64 {
        let (shifted, overflow) = Int64(clamping: ticks).subtractingReportingOverflow(shift)
        guard !overflow, let time = MediaTime(ticks: shifted, timescale: max(timescale, 1)),
              let rescaled = time.rescaled(to: 1_000_000) else { return .max }
        return rescaled.ticks
    }
}

extension MovieReader {
    /// How many of each track's whole samples (``wholeSamples(of:)``) a player reads from a
    /// file cut short before it stops (``ReadOrder``): what ffprobe lists of such a file, less
    /// the partial bytes it gives of the sample the end cuts. For a complete file, every
    /// sample. `tracks` are the movie's tracks in its order, each with its whole samples
    /// and whether they stop at the end of the file (nil samples: a track that cannot be
    /// read, left out of the read). A chapter track (`tref/chap`), which players skip unread,
    /// never stops the read; FFmpeg's decode-time shift for negative composition offsets
    /// (``CompositionOffsetBox/ffmpegDecodeTimeShift``) is applied as it applies it:
    /// `decodeTimeShifts` holds it for each of `tracks` where the caller has it
    /// (``ffmpegDecodeTimeShift(of:samples:)``, which parses the `ctts` again); a missing or nil
    /// one is computed here.
    public func samplesReadBeforeTheCut(
        _ tracks: [(track: MediaTrack, samples: SampleIndex?, isCut: Bool)], decodeTimeShifts: [Int64?] = []) -> [Int] {
        let chapters = Set(self.tracks.flatMap(\.track.chapterReferences))
        var order: [ReadOrder.Track] = []
        var places: [Int?] = []
        for (n, (track, samples, isCut)) in tracks.enumerated() {
            guard let samples else {
                places.append(nil)
                continue
            }
            places.append(order.count)
            var cut: ReadOrder.Cut?
            if isCut && !chapters.contains(track.id) {
                cut = try? self.cut(of: track, after: samples.count)
            }
            order.append(ReadOrder.Track(samples: samples, timescale: track.track.mediaHeader.timescale,
                                         decodeTimeShift: (n < decodeTimeShifts.count ? decodeTimeShifts[n] : nil)
                                            ?? ffmpegDecodeTimeShift(of: track, samples: samples), cut: cut))
        }
        let counts = ReadOrder.samplesBeforeFirstMissing(order)
        return places.map { $0.map { counts[$0] } ?? 0 }
    }

    /// FFmpeg's shift of every decode time of a regular track whose `ctts` holds negative
    /// offsets (``CompositionOffsetBox/ffmpegDecodeTimeShift``); 0 otherwise.
    public func ffmpegDecodeTimeShift(of track: MediaTrack, samples: SampleIndex) -> Int64 {
        guard !movie.isFragmented, samples.compositionOffsetRange.lowerBound < 0,
              let ctts = try? track.track.sampleTable().compositionOffsets else { return 0 }
        return ctts.ffmpegDecodeTimeShift
    }

    /// How the samples of `track` end in a file cut short, after the first `count`, which
    /// lie wholly inside it (what ``wholeSamples(of:)`` returned): the next sample starts
    /// past the end of the file, or inside it and is cut (``ReadOrder/Cut``); nil when the
    /// track has no sample after them, or (fragmented) none in the cut fragment's `moof`. What ``ReadOrder`` needs to read the file as a
    /// player does. Costs O(table entries), or a second walk of the fragments.
    ///
    /// - Throws: what ``wholeSamples(of:)`` throws.
    public func cut(of track: MediaTrack, after count: Int) throws -> ReadOrder.Cut? {
        if movie.isFragmented {
            return try movie.fragmentedTrack(track.track, in: source).cut
        }
        let boxes = try track.track.sampleTable()
        let whole = try SampleTable(boxes: boxes, fileLength: .max, excluding: [movie.movieBoxRange])
        guard count >= 0, count < whole.sampleCount else { return nil }
        var start: UInt64?
        whole.forEachChunk { chunk in
            guard count < chunk.firstSample + chunk.sampleCount else { return true }
            var offset = chunk.offset
            // Inside the validated chunk: no overflow.
            for i in chunk.firstSample..<count { offset += UInt64(boxes.sampleSizes.size(ofSample: i)) }
            start = offset
            return false
        }
        guard let start else { return nil }
        guard start < movie.fileLength else { return .atNextSample }
        var before = UInt64(count)
        var duration: UInt32 = 0
        for entry in boxes.timeToSample.entries {
            if before < UInt64(entry.sampleCount) {
                duration = entry.sampleDelta
                break
            }
            before -= UInt64(entry.sampleCount)
        }
        return .inside(offset: start, duration: duration)
    }
}
