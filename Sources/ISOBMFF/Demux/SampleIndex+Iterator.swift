/// Sequential access to a ``SampleIndex``: its iterator, O(1) per sample.
extension SampleIndex {
    /// Walks the samples in decode order at O(1) per sample, carrying the running byte
    /// offset and decode time.
    public struct Iterator: IteratorProtocol, Sendable {
        let index: SampleIndex
        var position: Int
        var timeRun: Int
        var timeLeft: Int
        var decodeTime: UInt64
        var offsetRun: Int
        var offsetLeft: Int
        var chunkRun: Int
        var chunk: Int
        var chunkLeft: Int
        var byteOffset: UInt64
        var syncPosition: Int

        /// The next sample, or nil after the last.
        public mutating func next() -> Sample? {
            guard position < index.count else { return nil }
            // Runs are non-empty and cover every sample (SampleTable checked), so each
            // advance below finds a run.
            while timeLeft == 0 {
                timeRun += 1
                timeLeft = index.runLength(index.timeRuns, timeRun, \.firstSample)
            }
            let time = index.timeRuns[timeRun]
            var offset: Int64 = 0
            if !index.offsetRuns.isEmpty {
                while offsetLeft == 0 {
                    offsetRun += 1
                    offsetLeft = index.runLength(index.offsetRuns, offsetRun, \.firstSample)
                }
                offset = index.offsetRuns[offsetRun].offset
                offsetLeft -= 1
            }
            if chunkLeft == 0 {
                chunk += 1
                if chunk >= index.chunkRuns[chunkRun].endChunk && chunkRun + 1 < index.chunkRuns.count {
                    chunkRun += 1
                    chunk = index.chunkRuns[chunkRun].firstChunk
                }
                chunkLeft = index.chunkRuns[chunkRun].samplesPerChunk
                byteOffset = index.chunkOffsets[chunk]
            }
            let size = index.sizes.size(ofSample: position)
            var isSync = true
            if let sync = index.syncSamples {
                isSync = syncPosition < sync.count && Int(sync[syncPosition]) == position + 1
                if isSync { syncPosition += 1 }
            }
            let sample = Sample(offset: byteOffset, size: size, decodeTime: decodeTime, compositionOffset: offset,
                                duration: time.delta, isSync: isSync,
                                descriptionIndex: index.chunkRuns[chunkRun].descriptionIndex)
            // Below the file's length and endDecodeTime: checked when the index was built.
            byteOffset += UInt64(size)
            decodeTime += UInt64(time.delta)
            timeLeft -= 1
            chunkLeft -= 1
            position += 1
            return sample
        }
    }

    /// The number of samples in run `i` of `runs`, each run starting where `key` says.
    func runLength<Run>(_ runs: [Run], _ i: Int, _ key: KeyPath<Run, Int>) -> Int {
        guard i < runs.count else { return count }  // Unreachable on a checked table; ends the loop.
        return (i + 1 < runs.count ? runs[i + 1][keyPath: key] : count) - runs[i][keyPath: key]
    }

    /// An iterator from the first sample.
    public func makeIterator() -> Iterator {
        var steps = 0
        return makeIterator(from: 0, steps: &steps)
    }

    /// An iterator that starts at sample `position`, found in O(log runs).
    public func makeIterator(from position: Int) -> Iterator {
        var steps = 0
        return makeIterator(from: position, steps: &steps)
    }

    func makeIterator(from position: Int, steps: inout Int) -> Iterator {
        guard position > 0, position < count else {
            // From the start: the runs' "left" counters start at their first run's length;
            // chunk = -1 so that the first sample opens chunk 0 of run 0.
            return Iterator(index: self, position: position >= count ? count : 0, timeRun: 0,
                            timeLeft: timeRuns.isEmpty ? 0 : runLength(timeRuns, 0, \.firstSample),
                            decodeTime: firstDecodeTime, offsetRun: 0,
                            offsetLeft: offsetRuns.isEmpty ? 0 : runLength(offsetRuns, 0, \.firstSample),
                            chunkRun: 0, chunk: (chunkRuns.first?.firstChunk ?? 0) - 1, chunkLeft: 0, byteOffset: 0,
                            syncPosition: 0)
        }
        let t = Self.partition(timeRuns.count, steps: &steps) { timeRuns[$0].firstSample <= position } - 1
        let time = timeRuns[t]
        var o = 0
        var offsetLeft = 0
        if !offsetRuns.isEmpty {
            o = Self.partition(offsetRuns.count, steps: &steps) { offsetRuns[$0].firstSample <= position } - 1
            offsetLeft = runLength(offsetRuns, o, \.firstSample) - (position - offsetRuns[o].firstSample)
        }
        let c = Self.partition(chunkRuns.count, steps: &steps) { chunkRuns[$0].firstSample <= position } - 1
        let run = chunkRuns[c]
        let inRun = position - run.firstSample
        let sample = self[position]
        var syncPosition = 0
        if let syncSamples {
            let number = UInt32(truncatingIfNeeded: position + 1)
            syncPosition = Self.partition(syncSamples.count, steps: &steps) { syncSamples[$0] < number }
        }
        return Iterator(index: self, position: position, timeRun: t,
                        timeLeft: runLength(timeRuns, t, \.firstSample) - (position - time.firstSample),
                        decodeTime: sample.decodeTime, offsetRun: o, offsetLeft: offsetLeft, chunkRun: c,
                        chunk: run.firstChunk + inRun / run.samplesPerChunk,
                        chunkLeft: run.samplesPerChunk - inRun % run.samplesPerChunk, byteOffset: sample.offset,
                        syncPosition: syncPosition)
    }
}
