/// `dref`: where a track's samples live (ISO/IEC 14496-12 § 8.7.2). An entry with flag 1
/// means "in this file"; anything else points at another file or resource.
public struct DataReferenceBox: Box {
    public static let type = FourCC.dref

    /// One data entry (`url `, `urn `, or QuickTime's `alis`): where the samples of the sample
    /// entries that point to it are stored.
    public struct Entry: Sendable, Equatable {
        /// The entry's box type: `url `, `urn `, `alis`, …
        public var type: FourCC
        /// The entry's full-box version, kept so it is written back unchanged.
        public var version: UInt8
        /// The entry's full-box flags; flag 1 means the samples are in this file (see
        /// ``isSelfContained``).
        public var flags: UInt32
        /// The entry's payload after version and flags (a URL, a QuickTime alias, …).
        public var data: [UInt8]

        /// Whether the samples are in the same file as this box.
        public var isSelfContained: Bool { flags & 1 != 0 }

        /// An entry of `type`; `flags: 1` with no data means "in this file".
        public init(type: FourCC, version: UInt8 = 0, flags: UInt32, data: [UInt8] = []) {
            self.type = type
            self.version = version
            self.flags = flags
            self.data = data
        }
    }

    /// The full-box version as read (only 0 is defined), kept so the box is written back unchanged.
    public var version: UInt8 = 0
    /// The full-box flags as read (none are defined), kept so the box is written back unchanged.
    public var flags: UInt32 = 0
    /// The entries; a sample entry's `data_reference_index` counts into them from 1.
    public var entries: [Entry]

    /// A single "same file" `url ` entry.
    public static let selfContained = DataReferenceBox(entries: [Entry(type: .url, flags: 1)])

    /// A `dref` with `entries`; ``selfContained`` is the one every self-contained file needs.
    public init(entries: [Entry]) {
        self.entries = entries
    }

    public init(parsing payload: inout ByteReader) throws {
        (version, flags) = try payload.readVersionAndFlags()
        let count = try payload.readEntryCount(entrySize: 12)
        entries = []
        entries.reserveCapacity(count)
        for _ in 0..<count {
            guard let (header, body) = try payload.readBox(depth: 0) else { break }
            var entryBody = body
            let (version, flags) = try entryBody.readVersionAndFlags()
            entries.append(Entry(type: header.type, version: version, flags: flags,
                                 data: entryBody.readRemainingBytes()))
        }
    }

    public func write(to writer: inout BoxWriter) {
        writer.fullBox(Self.type, version: version, flags: flags) { w in
            w.write(UInt32(truncatingIfNeeded: entries.count))
            for entry in entries {
                w.fullBox(entry.type, version: entry.version, flags: entry.flags) { e in
                    e.write(bytes: entry.data)
                }
            }
        }
    }
}
