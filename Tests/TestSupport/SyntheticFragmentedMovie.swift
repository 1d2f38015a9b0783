import ISOBMFF

/// Builds fragmented MP4 files in memory: an init segment (`moov` with empty tables and
/// `mvex/trex`) followed by `moof`+`mdat` pairs described sample by sample, so tests know
/// every expected packet.
public struct SyntheticFragmentedMovie {
    public struct Sample {
        public var size: UInt32
        public var duration: UInt32
        public var compositionOffset: Int32 = 0

        public init(size: UInt32, duration: UInt32, compositionOffset: Int32 = 0) {
            self.size = size
            self.duration = duration
            self.compositionOffset = compositionOffset
        }
    }

    /// How one track fragment locates its data (ISO/IEC 14496-12 § 8.8.7.1).
    public enum Base {
        case moof  // default-base-is-moof, with data offsets
        case explicit  // base-data-offset in tfhd (absolute)
        case implicit  // neither: the moof for the first traf, then the end of the previous traf's data
    }

    public struct Run {
        public var samples: [Sample]
        /// Whether the trun states its data offset (otherwise it continues the previous run).
        public var hasDataOffset = true
        /// Whether durations and sizes are per sample (otherwise tfhd defaults, from the first sample).
        public var perSampleFields = true

        public init(samples: [Sample], hasDataOffset: Bool = true, perSampleFields: Bool = true) {
            self.samples = samples
            self.hasDataOffset = hasDataOffset
            self.perSampleFields = perSampleFields
        }
    }

    public struct Fragment {
        public var runs: [Run]
        public var decodeTime: UInt64?
        /// A video track fragment written before the audio one, in the same moof and mdat.
        public var videoSamples: [UInt32] = []

        public init(runs: [Run], decodeTime: UInt64? = nil, videoSamples: [UInt32] = []) {
            self.runs = runs
            self.decodeTime = decodeTime
            self.videoSamples = videoSamples
        }
    }

    public var fragments: [Fragment]
    public var base: Base = .moof
    public var editList: EditListBox?
    /// Defaults in trex, used when a trun has no per-sample fields and tfhd none either.
    public var trexDefaults: (duration: UInt32, size: UInt32)?

    public init(fragments: [Fragment]) {
        self.fragments = fragments
    }

    /// Audio sample `n` (counting all fragments) is filled with the byte `n & 0xFF`;
    /// video samples with 0xEE.
    public var audioSamples: [Sample] { fragments.flatMap { $0.runs.flatMap(\.samples) } }

    public func build() -> [UInt8] {
        var file = FileTypeBox(majorBrand: .isom, minorVersion: 512, compatibleBrands: [.isom, "iso6"]).serialized
        file += initSegment()
        var sampleNumber = 0
        for fragment in fragments {
            // The moof's size does not depend on the offsets' values: build twice.
            let first = movieFragment(fragment, moofOffset: UInt64(file.count), payloadStart: 0)
            let payloadStart = UInt64(file.count + first.count + 8)
            let moof = movieFragment(fragment, moofOffset: UInt64(file.count), payloadStart: payloadStart)
            var payload: [UInt8] = []
            for size in fragment.videoSamples { payload += [UInt8](repeating: 0xEE, count: Int(size)) }
            for run in fragment.runs {
                for sample in run.samples {
                    payload += [UInt8](repeating: UInt8(sampleNumber & 0xFF), count: Int(sample.size))
                    sampleNumber += 1
                }
            }
            var mdat = BoxWriter()
            mdat.box(.mdat) { $0.write(bytes: payload) }
            file += moof + mdat.bytes
        }
        return file
    }

    func initSegment() -> [UInt8] {
        var synthetic = SyntheticMovie(sampleCount: 0)
        synthetic.editList = editList
        synthetic.chunkOffsets = []
        synthetic.sampleToChunk = SampleToChunkBox(entries: [])
        synthetic.timeToSample = TimeToSampleBox(entries: [])
        var bytes = synthetic.movieBox(base: 0)
        // Append mvex (trex for tracks 1 and 2) inside moov and fix moov's size.
        var mvex = BoxWriter()
        mvex.box("mvex") { m in
            for id in [UInt32(1), 2] {
                TrackExtendsBox(trackID: id, defaultSampleDuration: trexDefaults?.duration ?? 0,
                                defaultSampleSize: trexDefaults?.size ?? 0).write(to: &m)
            }
        }
        bytes += mvex.bytes
        let size = UInt32(bytes.count)
        bytes.replaceSubrange(0..<4, with: [UInt8(size >> 24), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF),
                                            UInt8(size & 0xFF)])
        return bytes
    }

    func movieFragment(_ fragment: Fragment, moofOffset: UInt64, payloadStart: UInt64) -> [UInt8] {
        var w = BoxWriter()
        w.box(.moof) { moof in
            moof.fullBox("mfhd", version: 0, flags: 0) { $0.write(UInt32(1)) }
            var dataStart = payloadStart
            if !fragment.videoSamples.isEmpty {
                moof.box("traf") { traf in
                    var header = TrackFragmentHeaderBox(trackID: 2, flags: base == .moof ? TrackFragmentHeaderBox.defaultBaseIsMoof : 0)
                    if base == .explicit { header.baseDataOffset = dataStart }
                    header.write(to: &traf)
                    let offset = base == .explicit ? 0 : relative(dataStart, moofOffset)
                    TrackRunBox(sampleCount: UInt32(fragment.videoSamples.count), dataOffset: offset,
                                durations: fragment.videoSamples.map { _ in 512 }, sizes: fragment.videoSamples)
                        .write(to: &traf)
                }
                dataStart += fragment.videoSamples.reduce(0) { $0 + UInt64($1) }
            }
            moof.box("traf") { traf in
                var header = TrackFragmentHeaderBox(trackID: 1, flags: base == .moof ? TrackFragmentHeaderBox.defaultBaseIsMoof : 0)
                if base == .explicit { header.baseDataOffset = dataStart }
                if let first = fragment.runs.first, !first.perSampleFields, trexDefaults == nil {
                    header.defaultSampleDuration = first.samples.first?.duration
                    header.defaultSampleSize = first.samples.first?.size
                }
                header.write(to: &traf)
                if let decodeTime = fragment.decodeTime {
                    TrackFragmentDecodeTimeBox(baseMediaDecodeTime: decodeTime).write(to: &traf)
                }
                var position = dataStart
                for run in fragment.runs {
                    var offset: Int32?
                    if run.hasDataOffset {
                        switch base {
                        case .moof: offset = relative(position, moofOffset)
                        case .explicit: offset = relative(position, dataStart)
                        case .implicit: offset = nil  // continues from the previous traf's data
                        }
                    }
                    let hasNegative = run.samples.contains { $0.compositionOffset < 0 }
                    let hasOffsets = run.samples.contains { $0.compositionOffset != 0 }
                    TrackRunBox(version: hasNegative ? 1 : 0, sampleCount: UInt32(run.samples.count), dataOffset: offset,
                                durations: run.perSampleFields ? run.samples.map(\.duration) : [],
                                sizes: run.perSampleFields ? run.samples.map(\.size) : [],
                                compositionTimeOffsets: hasOffsets ? run.samples.map { UInt32(bitPattern: $0.compositionOffset) } : [])
                        .write(to: &traf)
                    position += run.samples.reduce(0) { $0 + UInt64($1.size) }
                }
            }
        }
        return w.bytes
    }
}

/// `a - b` as a trun data offset (the first, sizing pass passes placeholder offsets).
private func relative(_ a: UInt64, _ b: UInt64) -> Int32 {
    Int32(truncatingIfNeeded: Int64(bitPattern: a &- b))
}
