/// The samples of one track gathered from a fragmented file (ISO/IEC 14496-12 § 8.8):
/// the samples in `moov` if any, then those of every `moof` in file order, as the tables
/// of a regular movie.
public struct FragmentedTrack: Sendable {
    /// The samples as the tables of a regular movie, to check with
    /// ``SampleTable/init(boxes:fileLength:excluding:)``.
    public var boxes: SampleTableBoxes
    /// How many `moof` boxes held samples of the track.
    public var fragmentCount: Int
    /// When the file ends inside a fragment (its `moof` or its samples), where that
    /// fragment starts; the tables then hold the complete fragments before it and the
    /// samples of the cut fragment that lie wholly inside the file.
    public var incompleteFragmentOffset: UInt64?
    /// The decode time of the first sample: the first fragment's `tfdt` when the track has
    /// no samples in `moov`, else 0. The tables' durations count from it.
    public var firstDecodeTime: UInt64 = 0
    /// When the cut fragment's `moof` lists samples of the track that the end of the file
    /// cuts off: how its whole samples end (``ReadOrder/Cut``). Nil when the track has no
    /// sample there (a demuxer never learns of its later fragments: the track just ends).
    public var cut: ReadOrder.Cut?
}

extension Movie {
    /// Builds the sample tables of `track` from the movie fragments of `source`.
    ///
    /// Timing comes from the `trun` durations; where a `tfdt` says a fragment starts later
    /// than the previous one ended, the previous sample is lengthened to close the gap.
    public func fragmentedTrack(_ track: Track, in source: some ByteSource) throws -> FragmentedTrack {
        var builder = SampleTableBuilder()
        let defaults = trackExtends.first { $0.trackID == track.trackID }
            ?? TrackExtendsBox(trackID: track.trackID)
        // Samples in moov come first.
        let initial = try SampleTable(boxes: track.sampleTable(), fileLength: fileLength, excluding: [movieBoxRange])
        if initial.sampleCount > 0 {
            try append(initial, to: &builder)
        }
        // A hostile file may claim billions of samples with no per-sample fields; every real
        // sample takes at least a byte of the file, so cap what is built at the file's size.
        let sampleLimit = min(UInt64(Limits.maximumSampleCount), fileLength + Limits.fragmentSampleSlack)
        // moov may list more samples than that (a 4-bit stz2 packs two in a byte, and they
        // may be empty): refuse before the subtraction below could wrap.
        guard UInt64(builder.sampleCount) <= sampleLimit else {
            throw ISOBMFFError(.limitExceeded, "moov lists \(builder.sampleCount) samples of the fragmented track, "
                               + "more than the file's \(fileLength) bytes can hold",
                               path: initial.boxes.locations[.stsz]?.path ?? track.path,
                               offset: initial.boxes.locations[.stsz]?.offset)
        }
        var fragmentCount = 0
        var emptySamples: UInt64 = 0
        var incomplete: UInt64?
        var firstDecodeTime: UInt64?
        var cut: ReadOrder.Cut?
        for range in fragmentRanges {
            let size = range.upperBound - range.lowerBound  // A Range's bounds are ordered.
            guard size <= Limits.maximumFragmentBoxSize else {
                throw ISOBMFFError(.limitExceeded, "moof of \(size) bytes", path: "moof", offset: range.lowerBound)
            }
            let bytes = try source.bytes(at: range.lowerBound, count: Int(size))  // At most 64 MiB.
            var moofReader = ByteReader(bytes, fileOffset: range.lowerBound, path: "")
            guard let (_, payload) = try moofReader.readBox(depth: 0) else { continue }
            let chunks = try Self.chunks(in: payload, moofOffset: range.lowerBound, trackID: track.trackID,
                                         defaults: defaults,
                                         // No underflow: sampleCount <= sampleLimit, checked above for
                                         // moov's samples and below for each chunk appended.
                                         sampleLimit: sampleLimit - UInt64(builder.sampleCount))
            guard !chunks.isEmpty else { continue }
            // A fragment whose samples run past the end of the file is incomplete: keep the
            // samples that lie wholly inside the file, in order, and stop there.
            let isComplete = !chunks.contains(where: { $0.end > fileLength })
            for chunk in chunks {
                if let decodeTime = chunk.decodeTime {
                    // Decode times count from the first sample's: a tfdt before any sample
                    // sets it (and opens no gap); later ones are measured from it.
                    let first = firstDecodeTime ?? (builder.sampleCount == 0 ? decodeTime : 0)
                    firstDecodeTime = first
                    if decodeTime >= first { builder.extendLastSample(toReach: decodeTime - first) }
                }
                if builder.sampleCount == 0 && firstDecodeTime == nil { firstDecodeTime = 0 }
                guard UInt64(builder.sampleCount) + UInt64(chunk.count) <= sampleLimit else {
                    throw ISOBMFFError(.limitExceeded, "the fragments hold more samples than the file can",
                                       path: "moof/traf/trun", offset: range.lowerBound)
                }
                // Empty samples take no bytes, so the file's length does not bound them: a few
                // bytes of trun could claim a sample per byte of padding elsewhere, each costing
                // four bytes of stsz. Real tracks have none or a handful.
                emptySamples += chunk.run.sizes.isEmpty ? (chunk.defaultSize == 0 ? UInt64(chunk.count) : 0)
                    : UInt64(chunk.run.sizes.lazy.filter { $0 == 0 }.count)  // At most sampleLimit in all.
                guard emptySamples <= Limits.maximumEmptyFragmentSamples else {
                    throw ISOBMFFError(.limitExceeded, "the fragments hold \(emptySamples) empty samples (size 0), "
                                       + "more than the \(Limits.maximumEmptyFragmentSamples) accepted",
                                       path: "moof/traf/trun", offset: range.lowerBound)
                }
                var count = chunk.count
                if chunk.end > fileLength {
                    var end = chunk.offset
                    count = 0
                    while count < chunk.count {
                        end += UInt64(chunk.size(count))  // Below chunk.end, which did not overflow.
                        guard end <= fileLength else { break }
                        count += 1
                    }
                    // The first sample not wholly inside (end - its size: no underflow).
                    let start = end - UInt64(chunk.size(count))
                    cut = start < fileLength ? .inside(offset: start, duration: chunk.sample(count).duration)
                        : .atNextSample
                }
                try builder.appendChunk(offset: chunk.offset, sampleDescriptionIndex: chunk.sampleDescriptionIndex,
                                    count: count, sample: chunk.sample)
                if chunk.end > fileLength { break }
            }
            if !isComplete {
                incomplete = range.lowerBound
                break
            }
            fragmentCount += 1
        }
        // A box cut by the end of the file: whatever followed it is lost, fragments of this
        // track among them (a styp, sidx, emsg or prft cut before its moof as well as the
        // moof or mdat itself), except after an `mfra`, which the format places last.
        if incomplete == nil, let cut = truncatedBox, cut.type != "mfra" {
            incomplete = cut.offset
        }
        let boxes = builder.boxes(descriptions: track.sampleDescriptions,
                                  groups: initial.boxes.sampleGroupDescriptions.filter { _ in initial.sampleCount > 0 },
                                  sampleToGroups: initial.boxes.sampleToGroups.filter { _ in initial.sampleCount > 0 })
        return FragmentedTrack(boxes: boxes, fragmentCount: fragmentCount, incompleteFragmentOffset: incomplete,
                               firstDecodeTime: firstDecodeTime ?? 0, cut: cut)
    }

    /// Appends the samples `moov` lists, walking `stts` and `ctts` alongside rather than
    /// expanding them (a few entries may claim millions of samples).
    private func append(_ table: SampleTable, to builder: inout SampleTableBuilder) throws {
        var timing = RunLengthCursor(table.boxes.timeToSample.entries.map { ($0.sampleCount, $0.sampleDelta) })
        let ctts = table.boxes.compositionOffsets
        var offsets = RunLengthCursor(ctts?.entries.map { ($0.sampleCount, $0.sampleOffset) } ?? [])
        let sync = table.boxes.syncSamples.map { Set($0.sampleNumbers) }
        let sizes = table.boxes.sampleSizes
        try table.forEachChunk { chunk in
            try builder.appendChunk(offset: chunk.offset, sampleDescriptionIndex: chunk.sampleDescriptionIndex,
                                    count: chunk.sampleCount) { j in
                let i = chunk.firstSample + j
                let raw = offsets.next() ?? 0
                let offset = CompositionOffsetBox.offset(coded: raw)
                // SampleTable checked that stts covers every sample; sample numbers fit in 32 bits
                // (at most maximumSampleCount).
                return SampleTableBuilder.Sample(size: sizes.size(ofSample: i), duration: timing.next() ?? 0,
                                                 compositionOffset: offset,
                                                 isSync: sync?.contains(UInt32(truncatingIfNeeded: i + 1)) ?? true)
            }
            return true
        }
    }

    /// Walks a run-length coded table (`stts`, `ctts`) one sample at a time.
    struct RunLengthCursor {
        let entries: [(count: UInt32, value: UInt32)]
        var index = 0
        var left: UInt32 = 0

        init(_ entries: [(UInt32, UInt32)]) {
            self.entries = entries.map { (count: $0.0, value: $0.1) }
        }

        mutating func next() -> UInt32? {
            while left == 0 {
                guard index < entries.count else { return nil }
                left = entries[index].count
                index += 1
            }
            left -= 1  // left > 0 here.
            return entries[index - 1].value
        }
    }

    /// One `trun` of the track: its samples are computed from the run and the defaults on
    /// demand, never expanded into an array (a run without per-sample fields may claim
    /// millions of samples in 20 bytes).
    struct FragmentChunk {
        var offset: UInt64
        var end: UInt64
        var sampleDescriptionIndex: UInt32
        var decodeTime: UInt64?
        var run: TrackRunBox
        var defaultSize: UInt32
        var defaultDuration: UInt32
        var defaultFlags: UInt32

        var count: Int { Int(run.sampleCount) }  // A UInt32: fits in Int on 64-bit platforms.

        func size(_ i: Int) -> UInt32 { i < run.sizes.count ? run.sizes[i] : defaultSize }

        func sample(_ i: Int) -> SampleTableBuilder.Sample {
            let flags = i == 0 && run.firstSampleFlags != nil ? run.firstSampleFlags ?? 0
                : i < run.sampleFlags.count ? run.sampleFlags[i] : defaultFlags
            let duration = i < run.durations.count ? run.durations[i] : defaultDuration
            var offset: Int64 = 0
            if i < run.compositionTimeOffsets.count {
                offset = CompositionOffsetBox.offset(coded: run.compositionTimeOffsets[i])
            }
            // sample_is_non_sync_sample is bit 16 of the sample flags (§ 8.8.3.1).
            return .init(size: size(i), duration: duration, compositionOffset: offset, isSync: flags & 0x0001_0000 == 0)
        }
    }

    /// The runs of `trackID` in one `moof` payload, with their absolute data offsets.
    static func chunks(in moof: ByteReader, moofOffset: UInt64, trackID: UInt32, defaults: TrackExtendsBox,
                       sampleLimit: UInt64) throws -> [FragmentChunk] {
        var reader = moof
        var result: [FragmentChunk] = []
        var previousFragmentEnd: UInt64?
        // Samples built so far in this moof: the limit holds for all its runs together, or
        // thousands of 16-byte truns could each claim `sampleLimit` samples.
        var built: UInt64 = 0
        while let (box, payload) = try reader.readBox(depth: 1) {
            guard box.type == "traf" else { continue }
            var traf = payload
            var header: TrackFragmentHeaderBox?
            var decodeTime: UInt64?
            var runs: [(TrackRunBox, BoxHeader)] = []
            while let (child, childPayload) = try traf.readBox(depth: 2) {
                var body = childPayload
                switch child.type {
                case TrackFragmentHeaderBox.type:
                    guard header == nil else { throw duplicate(child) }
                    header = try TrackFragmentHeaderBox(parsing: &body)
                case TrackFragmentDecodeTimeBox.type:
                    decodeTime = try TrackFragmentDecodeTimeBox(parsing: &body).baseMediaDecodeTime
                case TrackRunBox.type:
                    runs.append((try TrackRunBox(parsing: &body), child))
                default:
                    break
                }
            }
            guard let header else { throw missing("tfhd", in: payload) }
            // The base data offset (§ 8.8.7.1): stated, or the moof's start, or where the
            // previous track fragment's data ended.
            var base = header.baseDataOffset ?? moofOffset
            if header.baseDataOffset == nil && header.flags & TrackFragmentHeaderBox.defaultBaseIsMoof == 0,
               let previousFragmentEnd
            {
                base = previousFragmentEnd
            }
            let isOurs = header.trackID == trackID
            let descriptionIndex = header.sampleDescriptionIndex ?? defaults.defaultSampleDescriptionIndex
            var position = base
            var firstRun = true
            for (run, runHeader) in runs {
                if let dataOffset = run.dataOffset {
                    let (start, overflow) = dataOffset < 0
                        ? base.subtractingReportingOverflow(UInt64(-Int64(dataOffset)))
                        : base.addingReportingOverflow(UInt64(dataOffset))
                    guard !overflow else {
                        throw ISOBMFFError(.invalidValue, "data offset \(dataOffset) points before the file",
                                           path: runHeader.path, offset: runHeader.offset)
                    }
                    position = start
                }
                let defaultSize = header.defaultSampleSize ?? defaults.defaultSampleSize
                // At most 2^32 samples of 2^32 bytes: neither the product nor the sum overflows.
                let bytes = run.sizes.isEmpty ? UInt64(run.sampleCount) * UInt64(defaultSize)
                    : run.sizes.reduce(UInt64(0)) { $0 + UInt64($1) }
                if isOurs {
                    built += UInt64(run.sampleCount)  // At most sampleLimit + 2^32: no overflow.
                    guard built <= sampleLimit else {
                        throw ISOBMFFError(.limitExceeded, "trun claims \(run.sampleCount) samples, more than the "
                                           + "file can hold", path: runHeader.path, offset: runHeader.offset)
                    }
                }
                let (end, overflow) = position.addingReportingOverflow(bytes)
                guard !overflow else {
                    throw ISOBMFFError(.invalidValue, "the run's samples end past 2^64", path: runHeader.path,
                                       offset: runHeader.offset)
                }
                if isOurs && run.sampleCount > 0 {
                    result.append(FragmentChunk(
                        offset: position, end: end, sampleDescriptionIndex: descriptionIndex,
                        decodeTime: firstRun ? decodeTime : nil, run: run, defaultSize: defaultSize,
                        defaultDuration: header.defaultSampleDuration ?? defaults.defaultSampleDuration,
                        defaultFlags: header.defaultSampleFlags ?? defaults.defaultSampleFlags))
                    firstRun = false
                }
                position = end
            }
            previousFragmentEnd = position
        }
        return result
    }
}
