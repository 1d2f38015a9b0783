/// Nero's chapter list, `moov/udta/chpl`: a full box (version 1 adds 4 reserved bytes), an
/// 8-bit count, then per chapter a 64-bit start in 100-nanosecond units and a title as a
/// Pascal string (at most 255 bytes of UTF-8). FFmpeg (`mov_read_chpl`) and mutagen read it;
/// the 8-bit count limits it to 255 chapters. The one reader and writer of `chpl`.
public struct NeroChapters: Sendable, Equatable {
    /// The most chapters the 8-bit count can hold.
    public static let maximumCount = 255

    /// The chapters, in order; their starts are stored in units of 100 ns.
    public var entries: [Chapter]

    /// A list of chapters (at most ``maximumCount``; more are not written).
    public init(entries: [Chapter]) {
        self.entries = entries
    }

    /// The list for `entries` when its 8-bit count can hold them, else nil: past
    /// ``maximumCount`` only the QuickTime chapter track is written (``ChapterTrack``).
    public init?(fitting entries: [Chapter]) {
        guard entries.count <= Self.maximumCount else { return nil }
        self.init(entries: entries)
    }

    /// Parses the payload of a `chpl` box; a chapter cut short ends the list.
    public init(parsing payload: ByteReader) throws {
        var reader = payload
        let (version, _) = try reader.readVersionAndFlags()
        if version == 1 { try reader.skip(4) }
        let count = try reader.readUInt8()
        entries = []
        for _ in 0..<count {
            guard let start = try? reader.readUInt64(), let length = try? reader.readUInt8(),
                  let title = try? reader.readBytes(Int(length)) else { break }
            entries.append(Chapter(title: String(decoding: title, as: UTF8.self), start: Double(start) / 1e7))
        }
    }

    /// The `chpl` box (version 1, as Nero and FFmpeg write it), header included.
    public var bytes: [UInt8] {
        var w = BoxWriter()
        w.fullBox("chpl", version: 1, flags: 0) { chpl in
            chpl.write(UInt32(0))
            let kept = entries.prefix(Self.maximumCount)
            chpl.write(UInt8(kept.count))  // At most 255.
            for entry in kept {
                let title = ChapterTrack.utf8(entry.title, atMost: 255)
                // 100 ns units; a start that is not a finite non-negative number of them is 0.
                let units = MediaTime(seconds: entry.start, timescale: 10_000_000).map(\.ticks) ?? 0
                chpl.write(UInt64(max(0, units)))
                chpl.write(UInt8(title.count))
                chpl.write(bytes: title)
            }
        }
        return w.bytes
    }

    /// The first `chpl` of a `udta` box (header included) that parses; nil without one.
    public init?(userData: [UInt8]) {
        guard let parsed = UserDataBox(parsing: userData)?.neroChapters else { return nil }
        self = parsed
    }

    /// `userData` (or a new `udta`) with its `chpl` boxes replaced by `chapters` (removed for
    /// nil); the other children kept byte for byte, in order. Nil when nothing is left to hold.
    public static func userData(_ userData: [UInt8]?, replacingWith chapters: NeroChapters?) -> [UInt8]? {
        if userData == nil && chapters == nil { return nil }
        let udta = userData.flatMap(UserDataBox.init(parsing:)) ?? UserDataBox()
        var written = false
        return udta.bytes({ child in
            guard child.type == "chpl" else { return child.bytes }
            defer { written = true }
            return written ? nil : chapters?.bytes
        }, appending: { !written && chapters != nil ? [chapters?.bytes ?? []] : [] })
    }
}
