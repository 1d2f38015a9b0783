/// `ctts`: composition time minus decoding time per sample, run-length coded
/// (ISO/IEC 14496-12 § 8.6.1.3). The raw 32 bits are kept so the box is copied exactly;
/// ``offset(coded:)`` is the one place they are read as a time.
public struct CompositionOffsetBox: Box {
    public static let type = FourCC.ctts

    /// A run of consecutive samples that share one composition offset.
    public struct Entry: Sendable, Equatable {
        /// How many consecutive samples the run covers.
        public var sampleCount: UInt32
        /// Composition time minus decoding time, in the media timescale: the raw 32 bits
        /// (``offset`` reads them).
        public var sampleOffset: UInt32

        /// The offset in media ticks: ``CompositionOffsetBox/offset(coded:)`` of the raw bits.
        public var offset: Int64 { CompositionOffsetBox.offset(coded: sampleOffset) }

        /// A run of `sampleCount` samples with the raw offset `sampleOffset`.
        public init(sampleCount: UInt32, sampleOffset: UInt32) {
            self.sampleCount = sampleCount
            self.sampleOffset = sampleOffset
        }
    }

    /// 0: offsets are unsigned by the letter of the spec; 1: signed, which lets the first
    /// frames be presented at time 0 without an edit list. Readers ignore it (see
    /// ``offset(coded:)``); the writer sets 1 when an offset is negative.
    public var version: UInt8
    /// The full-box flags as read (none are defined), kept so the box is written back unchanged.
    public var flags: UInt32 = 0
    /// The runs, in decoding order.
    public var entries: [Entry]

    /// A table built in memory; use version 1 when any offset is negative.
    public init(version: UInt8, entries: [Entry]) {
        self.version = version
        self.entries = entries
    }

    public init(parsing payload: inout ByteReader) throws {
        (version, flags) = try payload.readVersionAndFlags()
        try payload.check(version: version, in: 0...1)
        let count = try payload.readEntryCount(entrySize: 8)
        entries = []
        entries.reserveCapacity(count)
        for _ in 0..<count {
            entries.append(Entry(sampleCount: try payload.readUInt32(), sampleOffset: try payload.readUInt32()))
        }
    }

    public func write(to writer: inout BoxWriter) {
        writer.fullBox(Self.type, version: version, flags: flags) { w in
            w.write(UInt32(truncatingIfNeeded: entries.count))
            for entry in entries {
                w.write(entry.sampleCount)
                w.write(entry.sampleOffset)
            }
        }
    }

    /// The composition offset coded by the 32 bits `raw` of a `ctts` entry or a `trun`
    /// sample, in media ticks: always read as **signed**, whatever the box's version.
    ///
    /// ISO/IEC 14496-12 makes version 0 unsigned, but Apple's encoders (iPhone, iPad,
    /// Core Media, macOS screen recordings) write negative offsets in a version-0 `ctts`
    /// (with a `cslg` box), and players read them as negative: FFmpeg's `mov_read_ctts` and
    /// `mov_read_trun` store every offset in a signed `int`, whatever the version. An
    /// unsigned offset of 2^31 ticks or more (6.6 hours at 90 kHz) is not a real file's, so
    /// nothing is lost. The one place these bits become a time: the index, the fragment
    /// reader, the writer and `probe --packets` all call it.
    @inlinable
    public static func offset(coded raw: UInt32) -> Int64 { Int64(Int32(bitPattern: raw)) }

    /// FFmpeg's view of the decode times, for comparing with `ffprobe`: FFmpeg 5.1 moves every
    /// decode time of a regular track earlier by this much, so that none follows its
    /// presentation time (libavformat/mov.c, `mov_read_ctts` and `mov_update_dts_shift`):
    /// the largest negation of a negative offset among all entries but the last two, as it
    /// computes it; 0 when none is negative. Presentation times are unchanged. O(entries).
    public var ffmpegDecodeTimeShift: Int64 {
        var shift: Int64 = 0
        for (i, entry) in entries.enumerated() where i + 2 < entries.count && entry.offset < 0 {
            shift = Swift.max(shift, -entry.offset)
        }
        return shift
    }

    /// The number of samples the table describes. O(entries).
    public var sampleCount: UInt64 {
        entries.reduce(0) { $0 + UInt64($1.sampleCount) }
    }
}
