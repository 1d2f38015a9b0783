/// ``MovieWriter``'s fragmented layout (`moov` with `mvex`, then `moof` + `mdat` per
/// fragment): the init segment, streamed fragments and the fragment boxes.
extension MovieWriter {
    // MARK: Fragmented

    /// The sample flags of § 8.8.3.1: a sync sample depends on no other
    /// (`sample_depends_on` 2); any other depends on others (1) and is non-sync.
    static let syncSampleFlags: UInt32 = 0x0200_0000
    static let nonSyncSampleFlags: UInt32 = 0x0101_0000

    /// `ftyp` and the `moov` of a fragmented file (the init segment); `mehd` only when the
    /// duration is known.
    func fragmentedHead(duration: UInt64?) -> [UInt8] {
        var head = BoxWriter()
        (fileType ?? FileTypeBox(majorBrand: "iso6", minorVersion: 0,
                                 compatibleBrands: ["iso6", .isom, "iso2", "avc1", "mp41"])).write(to: &head)
        head.box(.moov) { w in
            movieHeader(duration: 0).write(to: &w)
            for track in tracks {
                writeTrack(track, fragmented: true, into: &w) { w in
                    TimeToSampleBox(entries: []).write(to: &w)
                    SampleToChunkBox(entries: []).write(to: &w)
                    SampleSizeBox(constantSize: 0, sampleCount: 0).write(to: &w)
                    ChunkOffsetBox(offsets: []).write(to: &w)
                }
            }
            w.box(.mvex) { w in
                if let duration { MovieExtendsHeaderBox(fragmentDuration: duration).write(to: &w) }
                for track in tracks { TrackExtendsBox(trackID: track.trackID).write(to: &w) }
            }
            writeMovieTail(into: &w)
        }
        return head.bytes
    }

    /// Live streaming: the decode time (`tfdt`) where the first fragment of `track` starts, 0
    /// unless set: a packager copying a track whose media starts later (a fragmented input's
    /// first `tfdt`) keeps its decode times, so that its edit list still names the same media.
    /// Only before the first ``writeFragment(into:)``.
    public mutating func setFirstDecodeTime(_ time: UInt64, for track: UInt32) throws {
        let index = try checkedIndex(track)
        guard !isStreaming else {
            throw ISOBMFFError(.invalidValue, "the first decode time is set before fragments are streamed", path: "",
                               offset: nil)
        }
        streamedDecodeTimes[index] = time
    }

    /// Live streaming: continues a stream whose init segment and first `count` fragments were
    /// written elsewhere (an on-demand server building fragment `count + 1` alone): the next
    /// ``writeFragment(into:)`` writes no init segment and numbers its fragment `count + 1`.
    /// Set the decode time where it starts with ``setFirstDecodeTime(_:for:)`` first. Only
    /// before the first ``writeFragment(into:)``.
    public mutating func resumeStream(afterFragments count: UInt32) throws {
        guard !isStreaming else {
            throw ISOBMFFError(.invalidValue, "a stream is resumed before fragments are streamed", path: "",
                               offset: nil)
        }
        isStreaming = true
        streamedFragments = count
    }

    /// Live streaming: writes the samples appended since the last call as one fragment
    /// (`moof` + `mdat`), preceded on the first call by the init segment (`ftyp` and a
    /// `moov` without `mehd`), then forgets them — their tables and any bytes appended in
    /// memory — so memory stays bounded by one fragment however long the stream runs.
    ///
    /// Cut where a fragment should start (before a video sync sample). Tracks cannot be
    /// added after the first call. Do not mix with ``finish(_:into:progress:isCancelled:)``.
    public mutating func writeFragment(into sink: inout some MovieSink) throws {
        if !isStreaming {
            isStreaming = true  // First: a stream keeps its offsets as appended (compositionShift).
            try sink.perform(.write(fragmentedHead(duration: nil)[...]))
        }
        guard tracks.contains(where: { $0.table.count > 0 }) else { return }
        guard streamedFragments < UInt32.max else {
            throw ISOBMFFError(.limitExceeded, "more than 2^32 - 1 fragments", path: "moof", offset: nil)
        }
        streamedFragments += 1
        var runs = Array(repeating: FragmentRun(), count: tracks.count)
        for index in tracks.indices {
            var cursor = tracks[index].table.makeCursor()
            while let entry = cursor.peek() {
                // Decode times continue from the fragments already written (< 2^64: the sum of
                // every appended duration, each track's checked when appended).
                runs[index].add(entry, decodeTime: streamedDecodeTimes[index] &+ cursor.decodeTime)
                _ = cursor.next()
            }
        }
        let (moof, payload) = try fragmentBox(streamedFragments, runs)
        try withoutActuallyEscaping({ (operation: MuxOperation, _: Bool) in try sink.perform(operation) }) { body in
            var emitter = Emitter(memory: memory, body: body)
            try emitter.write(moof)
            try emitter.write(MediaDataHeader.bytes(payloadSize: payload))
            for (index, run) in runs.enumerated() where !run.sizes.isEmpty {
                var locations = SampleTableWriter.LocationCursor(tracks[index].table)
                try locations.take(run.byteCount) { try emitter.samples($0) }
            }
            try emitter.flush()
        }
        for index in tracks.indices {
            let (sum, overflow) = streamedDecodeTimes[index].addingReportingOverflow(tracks[index].table.duration)
            streamedDecodeTimes[index] = overflow ? UInt64.max : sum
            tracks[index].table = SampleTableWriter()
        }
        memory = []
    }

    func writeFragmented(seconds: Double, segmentIndex: Bool, _ emitter: inout Emitter) throws {
        try emitter.write(fragmentedHead(duration: tracks.map { presentedDuration($0, fragmented: true) }.max() ?? 0))

        let leader = tracks.firstIndex { $0.description.handler.handlerType == .vide } ?? 0
        if segmentIndex, tracks.indices.contains(leader) {
            // A first pass sizes every fragment (one reference, 12 bytes, each) for the sidx.
            var references: [(size: UInt32, duration: UInt32, startsWithSync: Bool)] = []
            var earliest: Int64?
            try forEachFragment(seconds: seconds, leader: leader) { sequence, runs in
                let (moof, _) = try fragmentBox(sequence, runs)
                let payload = runs.reduce(UInt64(0)) { $0 + $1.byteCount }
                let size = UInt64(moof.count + MediaDataHeader.bytes(payloadSize: payload).count) + payload
                let run = runs[leader]
                let duration = run.durations.reduce(UInt64(0)) { $0 + UInt64($1) }
                guard let size32 = UInt32(exactly: size), size32 < 1 << 31,
                      let duration32 = UInt32(exactly: duration) else {
                    throw ISOBMFFError(.limitExceeded, "fragment \(sequence) is too large for a sidx reference "
                                       + "(2 GiB, 2^32 ticks): use shorter fragments", path: "sidx", offset: nil)
                }
                if earliest == nil {
                    earliest = zip(run.compositionOffsets, run.durations.indices).map { offset, index in
                        Int64(clamping: run.baseDecodeTime) + Int64(run.durations[..<index].reduce(0) { $0 + Int($1) })
                            + offset
                    }.min()
                }
                references.append((size32, duration32, run.flags.first == Self.syncSampleFlags))
            }
            var w = BoxWriter()
            w.fullBox("sidx", version: 1, flags: 0) { w in
                w.write(tracks[leader].trackID)  // reference_ID
                w.write(tracks[leader].description.timescale)
                w.write(UInt64(max(0, earliest ?? 0)))  // earliest_presentation_time
                w.write(UInt64(0))  // first_offset: the first moof follows the sidx
                w.write(UInt16(0))  // reserved
                w.write(UInt16(truncatingIfNeeded: references.count))
                for reference in references {
                    w.write(reference.size)  // reference_type 0 (media), referenced_size
                    w.write(reference.duration)  // subsegment_duration
                    // starts_with_SAP, SAP_type 1 when the fragment starts with a sync sample.
                    w.write(reference.startsWithSync ? UInt32(0x9000_0000) : 0)
                }
            }
            guard references.count <= Int(UInt16.max) else {
                throw ISOBMFFError(.limitExceeded, "\(references.count) fragments exceed the 65535 references of "
                                   + "one sidx: use longer fragments", path: "sidx", offset: nil)
            }
            try emitter.write(w.bytes)
        }
        var locations = tracks.map { SampleTableWriter.LocationCursor($0.table) }
        try forEachFragment(seconds: seconds, leader: leader) { sequence, runs in
            let (moof, payload) = try fragmentBox(sequence, runs)
            try emitter.write(moof)
            try emitter.write(MediaDataHeader.bytes(payloadSize: payload))
            for (index, run) in runs.enumerated() where !run.sizes.isEmpty {
                try locations[index].take(run.byteCount) { try emitter.samples($0) }
            }
        }
    }

    /// Cuts the samples into fragments: the leader's samples up to its first sync sample
    /// past `seconds`, and every other track's samples decoded before that cut.
    func forEachFragment(seconds: Double, leader: Int,
                                 _ body: (UInt32, [FragmentRun]) throws -> Void) throws {
        var cursors = tracks.map { $0.table.makeCursor() }
        let shifts = tracks.map(compositionShift)
        var sequence: UInt32 = 0
        while cursors.contains(where: { $0.peek() != nil }) {
            guard sequence < UInt32.max else {
                throw ISOBMFFError(.limitExceeded, "more than 2^32 - 1 fragments", path: "moof", offset: nil)
            }
            sequence += 1
            var fragments = Array(repeating: FragmentRun(), count: tracks.count)
            // At most maximumFragmentPayload + one sample (< 2^32) bytes: below 2^31 - moof.
            var fragmentBytes: UInt64 = 0
            var end: (time: UInt64, timescale: UInt32)?
            if tracks.indices.contains(leader) {
                let timescale = tracks[leader].description.timescale
                let target = ticks(seconds, timescale: timescale)
                let start = cursors[leader].decodeTime
                while let entry = cursors[leader].peek() {
                    if !fragments[leader].sizes.isEmpty {
                        if entry.descriptionIndex != fragments[leader].descriptionIndex { break }
                        if fragmentBytes + UInt64(entry.size) > Limits.maximumFragmentPayload { break }
                        if entry.isSync && cursors[leader].decodeTime - start >= target { break }
                    }
                    fragmentBytes += UInt64(entry.size)
                    fragments[leader].add(entry, decodeTime: cursors[leader].decodeTime, shift: shifts[leader])
                    _ = cursors[leader].next()
                }
                if cursors[leader].peek() != nil { end = (cursors[leader].decodeTime, timescale) }
            }
            for track in tracks.indices where track != leader {
                let timescale = tracks[track].description.timescale
                while let entry = cursors[track].peek() {
                    if let end {
                        let here = cursors[track].decodeTime.multipliedFullWidth(by: UInt64(end.timescale))
                        let limit = end.time.multipliedFullWidth(by: UInt64(timescale))
                        guard here.high < limit.high || (here.high == limit.high && here.low < limit.low) else { break }
                    }
                    if !fragments[track].sizes.isEmpty, entry.descriptionIndex != fragments[track].descriptionIndex {
                        break
                    }
                    if fragmentBytes > 0, fragmentBytes + UInt64(entry.size) > Limits.maximumFragmentPayload { break }
                    fragmentBytes += UInt64(entry.size)
                    fragments[track].add(entry, decodeTime: cursors[track].decodeTime, shift: shifts[track])
                    _ = cursors[track].next()
                }
            }
            try body(sequence, fragments)
        }
    }

    /// The samples of one track in one fragment.
    ///
    /// A sample of 0 bytes is not written into a `trun`: FFmpeg 5.1 refuses a fragmented file
    /// whose run lists one ("Invalid data found when processing input"), though it reads
    /// the same sample in a regular file. Its time goes to the sample before it in the run
    /// (as FFmpeg's own muxer, which drops an empty packet, leaves it), or, first in the
    /// run, to the one after it, presented at the same time as before. It holds no bytes,
    /// so the fragment's data is unchanged. ``RunShape/droppedEmptySamples`` counts them.
    struct FragmentRun {
        /// What decides the run's boxes and their sizes; the arrays below hold its values.
        var shape = RunShape()
        var sizes: [UInt32] = []
        var durations: [UInt32] = []
        var flags: [UInt32] = []
        var compositionOffsets: [Int64] = []
        var baseDecodeTime: UInt64 { shape.baseDecodeTime }
        var descriptionIndex: UInt32 { shape.descriptionIndex }
        var byteCount: UInt64 { shape.byteCount }

        /// Adds `entry`, its composition offset moved by `shift` (``compositionShift(_:)``).
        mutating func add(_ entry: SampleTableWriter.Entry, decodeTime: UInt64, shift: Int64 = 0) {
            switch shape.add(entry, decodeTime: decodeTime, shift: shift) {
            case .dropped:
                break
            case .merged(let duration):
                durations[durations.count - 1] = duration
            case .appended(let entry, let sampleFlags):
                sizes.append(entry.size)
                durations.append(entry.duration)
                flags.append(sampleFlags)
                compositionOffsets.append(entry.compositionOffset)
            }
        }
    }

    /// One track's run in a fragment reduced to what its `traf` carries besides the
    /// per-sample values: whether every sample has the same duration, size and flags (then
    /// `tfhd` gives the value once, ISO/IEC 14496-12 § 8.8.7, else `trun` gives each, § 8.8.8),
    /// whether any composition offset is not 0, its description index, base decode time and
    /// bytes. O(1) memory, updated per sample: ``FragmentRun`` records its samples through it,
    /// and ``FragmentSizer`` sizes a fragment with it without building one.
    struct RunShape: Equatable {
        var baseDecodeTime: UInt64 = 0
        var descriptionIndex: UInt32 = 1
        /// The samples written into the `trun` (empty ones are dropped).
        var sampleCount = 0
        var byteCount: UInt64 = 0
        /// Ticks of empty samples at the start of the run, given to its first written sample.
        var leadingEmptyTicks: UInt32 = 0
        var droppedEmptySamples = 0
        var firstDuration: UInt32 = 0
        /// The last written sample's duration, which a following empty sample still lengthens.
        var lastDuration: UInt32 = 0
        /// Whether every written sample between the first and the last lasts `firstDuration`.
        var innerDurationsSame = true
        var firstSize: UInt32 = 0
        var sameSize = true
        var firstFlags: UInt32 = 0
        var sameFlags = true
        var hasOffsets = false
        var hasNegativeOffsets = false

        /// What ``add(_:decodeTime:shift:)`` did with a sample.
        enum Step {
            /// An empty sample first in the run: its time waits for the first written one.
            case dropped
            /// An empty sample: the last written sample now lasts this long.
            case merged(UInt32)
            /// Written, with these values and sample flags.
            case appended(SampleTableWriter.Entry, UInt32)
        }

        var sameDuration: Bool { sampleCount <= 1 || (innerDurationsSame && lastDuration == firstDuration) }

        mutating func add(_ entry: SampleTableWriter.Entry, decodeTime: UInt64, shift: Int64 = 0) -> Step {
            if sampleCount == 0 && leadingEmptyTicks == 0 {
                baseDecodeTime = decodeTime
                descriptionIndex = entry.descriptionIndex
            }
            if entry.size == 0 {
                if sampleCount > 0 {
                    let (sum, overflow) = lastDuration.addingReportingOverflow(entry.duration)
                    if !overflow {
                        lastDuration = sum
                        droppedEmptySamples += 1
                        return .merged(sum)
                    }
                } else {
                    let (sum, overflow) = leadingEmptyTicks.addingReportingOverflow(entry.duration)
                    if !overflow {
                        leadingEmptyTicks = sum
                        droppedEmptySamples += 1
                        return .dropped
                    }
                }
            }
            var entry = entry
            entry.compositionOffset &+= shift  // Offsets are 32-bit, the shift one's negation.
            if sampleCount == 0 && leadingEmptyTicks > 0 {
                // Decoded where the empty samples were, presented where it was.
                let (sum, overflow) = entry.duration.addingReportingOverflow(leadingEmptyTicks)
                if !overflow {
                    entry.duration = sum
                    entry.compositionOffset += Int64(leadingEmptyTicks)  // |offset| < 2^33: no overflow.
                }
                leadingEmptyTicks = 0
            }
            let flags = entry.isSync ? MovieWriter.syncSampleFlags : MovieWriter.nonSyncSampleFlags
            if sampleCount == 0 {
                firstSize = entry.size
                firstFlags = flags
            } else {
                if sampleCount == 1 {
                    firstDuration = lastDuration  // The first sample's duration is final now.
                } else if lastDuration != firstDuration {
                    innerDurationsSame = false
                }
                if entry.size != firstSize { sameSize = false }
                if flags != firstFlags { sameFlags = false }
            }
            lastDuration = entry.duration
            if entry.compositionOffset != 0 { hasOffsets = true }
            if entry.compositionOffset < 0 { hasNegativeOffsets = true }
            sampleCount += 1
            byteCount += UInt64(entry.size)  // A fragment's bytes: far below 2^64.
            return .appended(entry, flags)
        }

        /// The size of its `traf` (`tfhd`, `tfdt`, `trun`), 0 for a run with no written sample:
        /// the one rule ``MovieWriter/fragmentBox(_:_:)`` checks what it builds against.
        var trackFragmentSize: UInt64 {
            guard sampleCount > 0 else { return 0 }
            let defaults = (descriptionIndex != 1 ? 1 : 0) + (sameDuration ? 1 : 0) + (sameSize ? 1 : 0)
                + (sameFlags ? 1 : 0)
            let header = UInt64(12 + 4 + 4 * defaults)  // tfhd: full box, track_ID, the defaults.
            let decodeTime: UInt64 = 12 + (baseDecodeTime > UInt64(UInt32.max) ? 8 : 4)  // tfdt
            let fields = (sameDuration ? 0 : 1) + (sameSize ? 0 : 1) + (sameFlags ? 0 : 1) + (hasOffsets ? 1 : 0)
            // trun: full box, sample_count, data_offset, the per-sample fields (< 2^32 samples).
            let run = 12 + 4 + 4 + UInt64(sampleCount) * UInt64(4 * fields)
            return 8 + header + decodeTime + run
        }
    }

    /// The size of the `moof` of `runs`: its header, `mfhd` and each run's `traf`.
    static func movieFragmentSize(_ runs: [RunShape]) -> UInt64 {
        runs.reduce(8 + 16) { $0 + $1.trackFragmentSize }
    }

    /// The sizes of the fragment ``MovieWriter/writeFragment(into:)`` writes for a writer of
    /// one track, found from its samples without building it: an on-demand server's plan
    /// learns each segment's size from the movie's tables at the cost of a few comparisons
    /// per sample. The writer decides which optional `tfhd` and `trun` fields it writes
    /// (ISO/IEC 14496-12 § 8.8.7, § 8.8.8) by the same rule, and checks in debug builds that
    /// each `moof` it built has the size computed by it.
    public struct FragmentSizer: Sendable {
        var shape = RunShape()
        var decodeTime: UInt64
        var appended = 0

        /// A fragment whose first sample is decoded at `decodeTime` (its `tfdt`).
        public init(decodeTime: UInt64) {
            self.decodeTime = decodeTime
        }

        /// Adds a sample as ``MovieWriter/append(_:from:to:)`` appends it (its bytes are not read).
        public mutating func add(_ sample: Sample) {
            let entry = SampleTableWriter.Entry(size: sample.size, duration: sample.duration,
                                                compositionOffset: sample.compositionOffset, isSync: sample.isSync,
                                                descriptionIndex: sample.descriptionIndex)
            _ = shape.add(entry, decodeTime: decodeTime)
            appended += 1
        }

        /// The sizes of the fragment's `moof`, `mdat` header and `mdat` payload; all 0 when
        /// no sample was added (``MovieWriter/writeFragment(into:)`` then writes nothing).
        public var sizes: (movieFragment: UInt64, mediaDataHeader: UInt64, payload: UInt64) {
            guard appended > 0 else { return (0, 0, 0) }
            let payload = shape.byteCount
            return (MovieWriter.movieFragmentSize([shape]), MediaDataHeader.size(payloadSize: payload), payload)
        }
    }

    /// The `moof` of one fragment, its data offsets final, and the size of its `mdat` payload.
    func fragmentBox(_ sequence: UInt32, _ runs: [FragmentRun]) throws -> ([UInt8], UInt64) {
        var w = BoxWriter()
        var dataOffsetPositions: [Int] = []
        w.box(.moof) { w in
            MovieFragmentHeaderBox(sequenceNumber: sequence).write(to: &w)
            for (index, run) in runs.enumerated() where !run.sizes.isEmpty {
                w.box("traf") { w in
                    var header = TrackFragmentHeaderBox(trackID: tracks[index].trackID)
                    if run.descriptionIndex != 1 { header.sampleDescriptionIndex = run.descriptionIndex }
                    let (sameDuration, sameSize, sameFlags) = (run.shape.sameDuration, run.shape.sameSize,
                                                               run.shape.sameFlags)
                    if sameDuration { header.defaultSampleDuration = run.durations[0] }
                    if sameSize { header.defaultSampleSize = run.sizes[0] }
                    if sameFlags { header.defaultSampleFlags = run.flags[0] }
                    header.write(to: &w)
                    TrackFragmentDecodeTimeBox(baseMediaDecodeTime: run.baseDecodeTime).write(to: &w)
                    let hasOffsets = run.shape.hasOffsets
                    var trun = TrackRunBox(version: run.shape.hasNegativeOffsets ? 1 : 0,
                                           sampleCount: UInt32(run.sizes.count), dataOffset: 0,
                                           durations: sameDuration ? [] : run.durations,
                                           sizes: sameSize ? [] : run.sizes,
                                           compositionTimeOffsets: hasOffsets ? run.compositionOffsets.map {
                                               UInt32(truncatingIfNeeded: $0)
                                           } : [])
                    if !sameFlags {
                        trun.sampleFlags = run.flags
                        trun.flags |= TrackRunBox.sampleFlagsPresent
                    }
                    // The data offset follows the trun's header, version and flags, and count.
                    dataOffsetPositions.append(w.count + 16)
                    trun.write(to: &w)
                }
            }
        }
        var moof = w.bytes
        assert(UInt64(moof.count) == Self.movieFragmentSize(runs.map(\.shape)), "moof size rule out of step")
        let payload = runs.reduce(UInt64(0)) { $0 + $1.byteCount }
        let mdatHeader = MediaDataHeader.bytes(payloadSize: payload)
        var dataOffset = UInt64(moof.count + mdatHeader.count)
        for (position, run) in zip(dataOffsetPositions, runs.filter { !$0.sizes.isEmpty }) {
            // Fragments hold at most Limits.maximumFragmentPayload bytes but for one sample: only
            // a sample of over a GiB gets here.
            guard let value = Int32(exactly: dataOffset) else {
                throw ISOBMFFError(.limitExceeded, "fragment \(sequence) holds a sample too large to address "
                                   + "(data offsets are signed 32-bit)", path: "moof", offset: nil)
            }
            let bits = UInt32(bitPattern: value)
            for byte in 0..<4 { moof[position + byte] = UInt8(truncatingIfNeeded: bits >> (24 - 8 * byte)) }
            dataOffset += run.byteCount
        }
        return (moof, payload)
    }
}
