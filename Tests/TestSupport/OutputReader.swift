import ISOBMFF

/// The packets of the first audio track of a file, as a demuxer sees them: bytes and
/// timestamps, with the edit list applied the way FFmpeg's mov demuxer and ffprobe do (the
/// first edit's media time shifts every timestamp, so priming gets negative pts).
public struct DemuxedTrack {
    public struct Packet: Equatable, CustomStringConvertible {
        public var pts: Int64
        public var dts: Int64
        public var duration: Int64
        public var size: Int
        public var crc: UInt32
        public var description: String { "pts \(pts) dts \(dts) dur \(duration) size \(size) crc \(crc)" }

        public init(pts: Int64, dts: Int64, duration: Int64, size: Int, crc: UInt32) {
            self.pts = pts
            self.dts = dts
            self.duration = duration
            self.size = size
            self.crc = crc
        }
    }

    public var movie: Movie
    public var track: Track
    public var table: SampleTable
    public var packets: [Packet]

    /// The `index`-th track with handler `handler` (the first audio track by default).
    public init(path: String, bytes: [UInt8], handler: FourCC = .soun, index: Int = 0) throws {
        let source = MemoryByteSource(bytes)
        movie = try Movie(reading: source)
        let matching = movie.tracks.filter { $0.handlerType == handler }
        guard index < matching.count else {
            throw ISOBMFFError(.missingBox, "no \(handler) track \(index)", path: path, offset: nil)
        }
        let audio = matching[index]
        track = audio
        table = try SampleTable(boxes: audio.sampleTable(), fileLength: source.length, excluding: [movie.movieBoxRange])
        var shift: Int64 = 0
        if let edit = audio.editList?.entries.first(where: { !$0.isEmpty }) { shift = edit.mediaTime }
        var durations: [Int64] = []
        for entry in table.boxes.timeToSample.entries {
            durations += repeatElement(Int64(entry.sampleDelta), count: Int(entry.sampleCount))
        }
        var offsets = [Int64](repeating: 0, count: table.sampleCount)
        if let ctts = table.boxes.compositionOffsets {
            var i = 0
            for entry in ctts.entries {
                for _ in 0..<entry.sampleCount {
                    offsets[i] = entry.offset
                    i += 1
                }
            }
        }
        var result: [Packet] = []
        var dts: Int64 = 0
        let sizes = table.boxes.sampleSizes
        table.forEachChunk { chunk in
            var position = Int(chunk.offset)
            for sample in chunk.firstSample..<(chunk.firstSample + chunk.sampleCount) {
                let size = Int(sizes.size(ofSample: sample))
                let data = bytes[position..<(position + size)]
                result.append(Packet(pts: dts + offsets[sample] - shift, dts: dts - shift,
                                     duration: durations[sample], size: size, crc: crc32(data)))
                dts += durations[sample]
                position += size
            }
            return true
        }
        packets = result
    }
}
