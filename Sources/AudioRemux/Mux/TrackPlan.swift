import ISOBMFF

/// One track of a muxed output: its header boxes and tables, and where each of its samples
/// comes from (which input, which byte offset). Chunks are decided later, when the tracks
/// are interleaved.
struct TrackPlan {
    var header: TrackHeaderBox
    var editList: EditListBox?
    var mediaHeader: MediaHeaderBox
    var handler: HandlerBox
    var mediaInformationHeader: [UInt8]
    var sampleDescriptions: SampleDescriptionBox
    var timeToSample: TimeToSampleBox
    var compositionOffsets: CompositionOffsetBox?
    var syncSamples: SyncSampleBox?
    var groups: [SampleGroupDescriptionBox] = []
    var sampleToGroups: [SampleToGroupBox] = []
    /// Per sample: size, input index, input offset, 1-based sample description.
    var sizes: [UInt32] = []
    var sources: [Int] = []
    var offsets: [UInt64] = []
    var descriptionIndexes: [UInt32] = []

    var sampleCount: Int { sizes.count }

    /// A track copied as it is from input `source`: entries, timing, sync samples, edits.
    init(copying track: Track, table: SampleTable, source: Int) {
        header = track.header
        editList = track.editList
        mediaHeader = track.mediaHeader
        mediaHeader.duration = max(mediaHeader.duration, table.totalDuration)
        handler = track.handler
        mediaInformationHeader = track.mediaInformationHeader ?? SoundMediaHeaderBox().serialized
        sampleDescriptions = table.boxes.sampleDescriptions
        timeToSample = table.boxes.timeToSample
        compositionOffsets = table.boxes.compositionOffsets
        syncSamples = table.boxes.syncSamples
        groups = table.boxes.sampleGroupDescriptions
        sampleToGroups = table.boxes.sampleToGroups
        append(table, count: table.sampleCount, source: source, descriptionIndex: nil)
    }

    /// An audio track assembled from clips by the caller.
    init(audioHeader: TrackHeaderBox, mediaHeader: MediaHeaderBox, entry: [UInt8]) {
        header = audioHeader
        editList = nil
        self.mediaHeader = mediaHeader
        handler = HandlerBox(handlerType: .soun, name: "SoundHandler")
        mediaInformationHeader = SoundMediaHeaderBox().serialized
        sampleDescriptions = SampleDescriptionBox(entries: [.init(format: .mp4a, bytes: entry)])
        timeToSample = TimeToSampleBox(entries: [])
    }

    /// Appends the first `count` samples of `table` (their locations only).
    mutating func append(_ table: SampleTable, count: Int, source: Int, descriptionIndex: UInt32?) {
        let sizeTable = table.boxes.sampleSizes
        table.forEachChunk { chunk in
            var offset = chunk.offset
            for sample in chunk.firstSample..<(chunk.firstSample + chunk.sampleCount) {
                guard sample < count else { return false }
                let size = sizeTable.size(ofSample: sample)
                sizes.append(size)
                sources.append(source)
                offsets.append(offset)
                descriptionIndexes.append(descriptionIndex ?? chunk.sampleDescriptionIndex)
                offset += UInt64(size)  // Inside the validated chunk.
            }
            return true
        }
    }

    /// Writes the `trak` box with its tables as they are and the given chunking.
    func write(runs: [SampleToChunkBox.Entry], chunkOffsets: [UInt64], to moov: inout BoxWriter) {
        moov.box(.trak) { trak in
            header.write(to: &trak)
            if let editList { trak.box(.edts) { editList.write(to: &$0) } }
            trak.box(.mdia) { mdia in
                mediaHeader.write(to: &mdia)
                handler.write(to: &mdia)
                mdia.box(.minf) { minf in
                    minf.write(bytes: mediaInformationHeader)
                    minf.box(.dinf) { DataReferenceBox.selfContained.write(to: &$0) }
                    minf.box(.stbl) { stbl in
                        sampleDescriptions.write(to: &stbl)
                        timeToSample.write(to: &stbl)
                        compositionOffsets?.write(to: &stbl)
                        syncSamples?.write(to: &stbl)
                        SampleToChunkBox(entries: runs).write(to: &stbl)
                        SampleSizeBox(sizes: sizes).write(to: &stbl)
                        ChunkOffsetBox(offsets: chunkOffsets).write(to: &stbl)
                        for box in groups { box.write(to: &stbl) }
                        for box in sampleToGroups { box.write(to: &stbl) }
                    }
                }
            }
        }
    }

    /// Rescales the edit list and header duration to a new movie timescale. An edit list
    /// whose durations do not fit 64 bits, in all or once rescaled, is dropped and the track
    /// presented whole, as extraction does with an edit that overflows; an edit list of no
    /// duration leaves the media's.
    mutating func retime(from old: UInt32, to new: UInt32) {
        if var edits = editList {
            var total: UInt64? = 0
            for i in edits.entries.indices {
                guard let duration = rescale(edits.entries[i].segmentDuration, from: old, to: new),
                      let sum = total?.addingReportingOverflow(duration), !sum.overflow else {
                    total = nil
                    break
                }
                edits.entries[i].segmentDuration = duration
                total = sum.partialValue
            }
            if let total, total > 0 {
                editList = edits
                header.duration = total
                return
            }
            if total == nil { editList = nil }
        }
        header.duration = rescale(mediaHeader.duration, from: mediaHeader.timescale, to: new) ?? 0
    }

    /// The decode time of each sample, in the media timescale. O(samples).
    var decodeTimes: [UInt64] {
        var times: [UInt64] = []
        times.reserveCapacity(sampleCount)
        var time: UInt64 = 0
        for entry in timeToSample.entries {
            for _ in 0..<entry.sampleCount {
                times.append(time)
                time += UInt64(entry.sampleDelta)  // Checked by SampleTable: the total fits 64 bits.
            }
        }
        return times
    }
}

extension Sequence<UInt64> {
    /// The sum, or `UInt64.max` when it does not fit: for durations that a file only claims,
    /// where wrapping would turn days into seconds.
    var saturatingSum: UInt64 {
        reduce(0) { total, value in
            let (sum, overflow) = total.addingReportingOverflow(value)
            return overflow ? .max : sum
        }
    }
}
