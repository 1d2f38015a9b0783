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
}

/// The largest `moof` read into memory. Real fragments are a few kilobytes.
let maximumFragmentBoxSize: UInt64 = 64 << 20

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
        let sampleLimit = min(UInt64(SampleTable.maximumSampleCount), fileLength + 65536)
        var fragmentCount = 0
        var incomplete: UInt64?
        for range in fragmentRanges {
            let size = range.upperBound - range.lowerBound
            guard size <= maximumFragmentBoxSize else {
                throw ISOBMFFError(.limitExceeded, "moof of \(size) bytes", path: "moof", offset: range.lowerBound)
            }
            let bytes = try source.bytes(at: range.lowerBound, count: Int(size))
            var moofReader = ByteReader(bytes, fileOffset: range.lowerBound, path: "")
            guard let (_, payload) = try moofReader.readBox(depth: 0) else { continue }
            let chunks = try Self.chunks(in: payload, moofOffset: range.lowerBound, trackID: track.trackID,
                                         defaults: defaults,
                                         // No underflow: moov's samples are at most fileLength (their
                                         // bytes are, SampleTable checks), later ones are checked below.
                                         sampleLimit: sampleLimit - UInt64(builder.sampleCount))
            guard !chunks.isEmpty else { continue }
            // A fragment whose samples run past the end of the file is incomplete: keep the
            // samples that lie wholly inside the file, in order, and stop there.
            let isComplete = !chunks.contains(where: { $0.end > fileLength })
            for chunk in chunks {
                if let decodeTime = chunk.decodeTime { builder.extendLastSample(toReach: decodeTime) }
                guard UInt64(builder.sampleCount + chunk.samples.count) <= sampleLimit else {
                    throw ISOBMFFError(.limitExceeded, "the fragments hold more samples than the file can",
                                       path: "moof/traf/trun", offset: range.lowerBound)
                }
                var samples = chunk.samples
                if chunk.end > fileLength {
                    var end = chunk.offset
                    samples = Array(samples.prefix { sample in
                        end += UInt64(sample.size)  // Below chunk.end, which did not overflow.
                        return end <= fileLength
                    })
                }
                builder.appendChunk(offset: chunk.offset, sampleDescriptionIndex: chunk.sampleDescriptionIndex,
                                    samples: samples)
                if chunk.end > fileLength { break }
            }
            if !isComplete {
                incomplete = range.lowerBound
                break
            }
            fragmentCount += 1
        }
        if incomplete == nil, let cut = truncatedBox, cut.type == .moof || cut.type == .mdat {
            incomplete = cut.offset
        }
        let boxes = builder.boxes(descriptions: track.sampleDescriptions,
                                  groups: initial.boxes.sampleGroupDescriptions.filter { _ in initial.sampleCount > 0 },
                                  sampleToGroups: initial.boxes.sampleToGroups.filter { _ in initial.sampleCount > 0 })
        return FragmentedTrack(boxes: boxes, fragmentCount: fragmentCount, incompleteFragmentOffset: incomplete)
    }

    private func append(_ table: SampleTable, to builder: inout SampleTableBuilder) throws {
        var durations: [UInt32] = []
        durations.reserveCapacity(table.sampleCount)
        for entry in table.boxes.timeToSample.entries {
            durations.append(contentsOf: repeatElement(entry.sampleDelta, count: Int(entry.sampleCount)))
        }
        var offsets = [Int64](repeating: 0, count: table.sampleCount)
        if let ctts = table.boxes.compositionOffsets {
            var i = 0
            for entry in ctts.entries {
                let value = ctts.version == 1 ? Int64(Int32(bitPattern: entry.sampleOffset)) : Int64(entry.sampleOffset)
                for _ in 0..<entry.sampleCount where i < offsets.count {
                    offsets[i] = value
                    i += 1
                }
            }
        }
        let sync = table.boxes.syncSamples.map { Set($0.sampleNumbers) }
        let sizes = table.boxes.sampleSizes
        table.forEachChunk { chunk in
            let samples = (chunk.firstSample..<(chunk.firstSample + chunk.sampleCount)).map { i in
                SampleTableBuilder.Sample(size: sizes.size(ofSample: i), duration: durations[i],
                                          compositionOffset: offsets[i],
                                          isSync: sync?.contains(UInt32(i + 1)) ?? true)
            }
            builder.appendChunk(offset: chunk.offset, sampleDescriptionIndex: chunk.sampleDescriptionIndex,
                                samples: samples)
            return true
        }
    }

    struct FragmentChunk {
        var offset: UInt64
        var end: UInt64
        var sampleDescriptionIndex: UInt32
        var decodeTime: UInt64?
        var samples: [SampleTableBuilder.Sample]
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
                var samples: [SampleTableBuilder.Sample] = []
                if isOurs {
                    built += UInt64(run.sampleCount)  // At most sampleLimit + 2^32: no overflow.
                    guard built <= sampleLimit else {
                        throw ISOBMFFError(.limitExceeded, "trun claims \(run.sampleCount) samples, more than the "
                                           + "file can hold", path: runHeader.path, offset: runHeader.offset)
                    }
                    samples.reserveCapacity(Int(run.sampleCount))
                }
                for i in 0..<(isOurs ? Int(run.sampleCount) : 0) {
                    let size = i < run.sizes.count ? run.sizes[i] : defaultSize
                    let flags = i == 0 && run.firstSampleFlags != nil ? run.firstSampleFlags ?? 0
                        : i < run.sampleFlags.count ? run.sampleFlags[i]
                        : header.defaultSampleFlags ?? defaults.defaultSampleFlags
                    let duration = i < run.durations.count ? run.durations[i]
                        : header.defaultSampleDuration ?? defaults.defaultSampleDuration
                    var offset: Int64 = 0
                    if i < run.compositionTimeOffsets.count {
                        let raw = run.compositionTimeOffsets[i]
                        offset = run.version == 1 ? Int64(Int32(bitPattern: raw)) : Int64(raw)
                    }
                    // sample_is_non_sync_sample is bit 16 of the sample flags (§ 8.8.3.1).
                    samples.append(.init(size: size, duration: duration, compositionOffset: offset,
                                         isSync: flags & 0x0001_0000 == 0))
                }
                let (end, overflow) = position.addingReportingOverflow(bytes)
                guard !overflow else {
                    throw ISOBMFFError(.invalidValue, "the run's samples end past 2^64", path: runHeader.path,
                                       offset: runHeader.offset)
                }
                if isOurs && !samples.isEmpty {
                    result.append(FragmentChunk(offset: position, end: end, sampleDescriptionIndex: descriptionIndex,
                                                decodeTime: firstRun ? decodeTime : nil, samples: samples))
                    firstRun = false
                }
                position = end
            }
            previousFragmentEnd = position
        }
        return result
    }
}
