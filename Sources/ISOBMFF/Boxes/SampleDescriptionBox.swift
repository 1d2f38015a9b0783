/// `stsd`: the sample entries that describe a track's coding (ISO/IEC 14496-12 § 8.5.2).
///
/// Entries are kept as their exact bytes so they can be copied through unchanged; typed
/// views such as ``AudioSampleEntry`` parse them on demand.
public struct SampleDescriptionBox: Box {
    public static let type = FourCC.stsd

    /// One sample entry, kept as its bytes with where it came from.
    public struct Entry: Sendable, Equatable {
        /// The coding name: `mp4a`, `avc1`, `alac`, …
        public var format: FourCC
        /// The whole entry box, header included.
        public var bytes: [UInt8]
        /// Absolute file offset of the entry (0 for entries built in memory).
        public var fileOffset: UInt64
        /// Box path for errors.
        public var path: String

        /// An entry from its bytes (header included); `fileOffset` and `path` only serve errors.
        public init(format: FourCC, bytes: [UInt8], fileOffset: UInt64 = 0, path: String = "") {
            self.format = format
            self.bytes = bytes
            self.fileOffset = fileOffset
            self.path = path
        }
    }

    /// The full-box version as read (only 0 is defined), kept so the box is written back unchanged.
    public var version: UInt8 = 0
    /// The full-box flags as read (none are defined), kept so the box is written back unchanged.
    public var flags: UInt32 = 0
    /// The entries; `stsc` refers to them by 1-based index.
    public var entries: [Entry]

    /// An `stsd` holding `entries`, written back byte for byte.
    public init(entries: [Entry]) {
        self.entries = entries
    }

    /// Parses the entries, each kept whole. Throws `.truncated` when the box holds fewer
    /// entries than it declares.
    public init(parsing payload: inout ByteReader) throws {
        (version, flags) = try payload.readVersionAndFlags()
        let count = try payload.readEntryCount(entrySize: 8)
        entries = []
        entries.reserveCapacity(count)
        for _ in 0..<count {
            let start = payload
            guard let (header, _) = try payload.readBox(depth: 0) else { break }
            var whole = start
            // header.size <= the bytes that were left: readBox checked it.
            let bytes = try whole.readBytes(Int(header.size))
            entries.append(Entry(format: header.type, bytes: bytes, fileOffset: header.offset, path: header.path))
        }
        if entries.count < count {
            throw payload.error(.truncated, "stsd declares \(count) entries but holds \(entries.count)")
        }
    }

    public func write(to writer: inout BoxWriter) {
        writer.fullBox(Self.type, version: version, flags: flags) { w in
            w.write(UInt32(truncatingIfNeeded: entries.count))
            for entry in entries { w.write(bytes: entry.bytes) }
        }
    }
}
