/// Checks a box that an output copies from its input (`udta`, `meta`, `elng`, the children
/// of a sample entry) and keeps only what a reader can read.
///
/// What is dropped, each with a warning naming the box:
/// - a box that ends up deeper than ``Limits/maximumCopiedDepth`` (FFmpeg refuses the whole
///   file past about 10 levels: "Atoms too deeply nested", `mov_read_default` in its
///   `libavformat/mov.c`);
/// - a box of track or movie shape (`trak`, `moov`, `mdia`, `mdat`, `moof`, …) anywhere
///   inside: readers take them for real tracks (FFmpeg stops reading the parent at a
///   `trak` or `mdat` that is not at the top level);
/// - a child whose size runs past its parent, and whatever follows it in that parent.
///
/// A box of size 0 ("to the end of its parent", ISO/IEC 14496-12 § 4.2) gets its real
/// size: copied into a new parent, it would otherwise swallow the boxes written after it.
///
/// A box that passes is returned byte for byte. Containers (`udta`, `meta`, `ilst` and its
/// items, …) are rebuilt only when one of their children changed. Work and recursion are
/// bounded by the depth limit: a 50,000-deep chain is looked at 10 levels deep, no more.
public enum CopiedBoxSanitizer {
    /// The outcome: the box to write (nil when all of it was dropped) and one warning per
    /// dropped or repaired box.
    public struct Result: Sendable, Equatable {
        /// The box to write, header included; nil when all of it was dropped.
        public var bytes: [UInt8]?
        /// One message per box dropped or repaired, naming its path.
        public var warnings: [String]
    }

    /// Checks `box` (one whole box, header included).
    ///
    /// - Parameters:
    ///   - box: the box to check, header included.
    ///   - depth: the depth the box will have in the output, `moov` counting as 1 (so
    ///     `moov/udta` is 2, `moov/trak/udta` 3; a sample entry is
    ///     ``Limits/sampleEntryDepth``).
    ///   - parentPath: the path of the box's parent, for warnings (`moov`, `moov/trak`).
    public static func sanitize(_ box: [UInt8], depth: Int, parentPath: String) -> Result {
        var warnings: [String] = []
        var reader = ByteReader(box, path: parentPath)
        let header: BoxHeader
        let payload: ByteReader
        do {
            guard let (found, body) = try reader.readBox(depth: 1) else { return Result(bytes: nil, warnings: []) }
            (header, payload) = (found, body)
        } catch {
            return Result(bytes: nil, warnings: ["dropped \(parentPath)/…: \(describe(error))"])
        }
        let bytes = clean(header, payload: payload, original: reader, depth: depth, parent: FourCC(rawValue: 0), warnings: &warnings)
        return Result(bytes: bytes, warnings: warnings)
    }

    /// Checks the children of a sample entry: `entry` is the whole entry, `fieldsSize` the
    /// bytes of fixed fields after its header (28 for an ISO `AudioSampleEntry`). The
    /// fields and a short tail (QuickTime's 4-byte terminator) are kept as they are.
    public static func sanitizeEntry(_ entry: [UInt8], fieldsSize: Int, depth: Int, path: String) -> Result {
        var reader = ByteReader(entry, path: path)
        guard let (header, payload) = try? reader.readBox(depth: 1) else {
            return Result(bytes: entry, warnings: [])
        }
        var body = payload
        guard let fields = try? body.readBytes(fieldsSize) else { return Result(bytes: entry, warnings: []) }
        var warnings: [String] = []
        let (children, tail, changed) = cleanChildren(body, of: header, path: path, depth: depth,
                                                      warnings: &warnings) { _ in "its size runs past the sample entry" }
        guard changed else { return Result(bytes: entry, warnings: warnings) }
        var w = BoxWriter(capacity: entry.count)
        w.box(header.type) { box in
            box.write(bytes: fields)
            for child in children { box.write(bytes: child) }
            box.write(bytes: tail)
        }
        return Result(bytes: w.bytes, warnings: warnings)
    }

    /// Boxes whose payload is a list of boxes that readers walk (FFmpeg's parse table and
    /// GStreamer's qtdemux nodes), so nesting inside them counts.
    static let containers: Set<FourCC> = [
        "udta", "ilst", "wave", "dinf", "sinf", "schi", "gmhd", "tapt", "clip", "matt", "iprp", "ipco", "rinf",
        "strk", "strd", "meco", "tref", "edts",
    ]

    /// Boxes that make a track or a movie: never copied from metadata.
    static let trackShaped: Set<FourCC> = [
        .moov, .trak, .tkhd, .mdia, .mdhd, .minf, .stbl, .stsd, .stts, .ctts, .stsc, .stsz, .stz2, .stco, .co64,
        .stss, .mdat, .moof, "mfhd", "traf", "tfhd", "tfdt", "trun", .mvex, "trex", "mehd", "mfra", "tfra", "sidx",
        .mvhd, .ftyp, "styp", "cmov",
    ]

    /// The cleaned box, or nil when it is dropped.
    static func clean(_ header: BoxHeader, payload: ByteReader, original: ByteReader, depth: Int, parent: FourCC,
                      warnings: inout [String]) -> [UInt8]? {
        let bytes = original.bytes(of: header)
        if depth > Limits.maximumCopiedDepth {
            warnings.append("dropped \(header.path): it nests deeper than readers accept (FFmpeg refuses "
                            + "boxes past \(Limits.maximumCopiedDepth) levels below the file's root)")
            return nil
        }
        if trackShaped.contains(header.type) {
            warnings.append("dropped \(header.path): a '\(header.type)' box has no place in metadata (readers would "
                            + "take it for a track or a movie)")
            return nil
        }
        var children = payload
        var prefix: [UInt8] = []
        if header.type == "meta" {
            guard let inner = metaChildren(payload) else {
                warnings.append("dropped \(header.path): too short for a meta box")
                return nil
            }
            if inner.fileOffset != payload.fileOffset { prefix = Array(bytes[header.headerSize..<header.headerSize + 4]) }
            children = inner
        } else if !(containers.contains(header.type) || parent == "ilst") {
            // A leaf for readers, but it may hide boxes: look inside, bounded by the depth limit.
            if let problem = inspect(payload, depth: depth + 1) {
                warnings.append("dropped \(header.path): \(problem)")
                return nil
            }
            return header.extendsToEnd ? withRealSize(bytes, header) : bytes
        }
        let (kept, tail, changed) = cleanChildren(children, of: header, path: header.path, depth: depth,
                                                  warnings: &warnings, damage: describe)
        guard changed else { return bytes }
        var w = BoxWriter(capacity: bytes.count)
        if header.type == .uuid, let userType = header.userType {
            w.box(header.type) { box in
                box.write(bytes: userType)
                for child in kept { box.write(bytes: child) }
            }
        } else {
            w.box(header.type) { box in
                box.write(bytes: prefix)
                for child in kept { box.write(bytes: child) }
                box.write(bytes: tail)
            }
        }
        return w.bytes
    }

    /// The children of `parent` (read from `list`), each cleaned (``clean(_:payload:original:depth:parent:warnings:)``):
    /// those kept, a tail too short for a box (QuickTime's 32-bit zero that ends a list,
    /// which readers skip), and whether anything changed (a child dropped or repaired, or
    /// the parent's size of 0). A child whose size runs past the list ends it, with a
    /// warning naming `path` and `damage`'s reason.
    static func cleanChildren(_ list: ByteReader, of parent: BoxHeader, path: String, depth: Int,
                              warnings: inout [String], damage: (any Error) -> String)
        -> (kept: [[UInt8]], tail: [UInt8], changed: Bool) {
        var children = list
        var kept: [[UInt8]] = []
        var changed = parent.extendsToEnd
        while children.remaining > 0 {
            if children.remaining < 8 { return (kept, children.readRemainingBytes(), changed) }
            let before = children
            let child: BoxHeader
            let childPayload: ByteReader
            do {
                guard let (found, body) = try children.readBox(depth: 1) else { break }
                (child, childPayload) = (found, body)
            } catch {
                warnings.append("dropped \(path)/\(peekType(before)) at byte \(before.fileOffset) and what "
                                + "follows it in \(path): \(damage(error))")
                return (kept, [], true)
            }
            let cleaned = clean(child, payload: childPayload, original: before, depth: depth + 1, parent: parent.type,
                                warnings: &warnings)
            if cleaned != before.bytes(of: child) { changed = true }
            if let cleaned { kept.append(cleaned) }
        }
        return (kept, [], changed)
    }

    /// Looks for boxes hidden in a leaf's payload: when the payload reads as a list of boxes
    /// (sizes of at least 8 that tile it exactly, printable types), each of them is a box
    /// at `depth`. Returns what is wrong, or nil. Stops at the depth limit.
    static func inspect(_ payload: ByteReader, depth: Int) -> String? {
        guard let boxes = plausibleChildren(payload) else { return nil }
        for (header, body) in boxes {
            if depth > Limits.maximumCopiedDepth {
                return "boxes inside it nest deeper than readers accept (past \(Limits.maximumCopiedDepth) levels "
                    + "below the file's root)"
            }
            if trackShaped.contains(header.type) {
                return "it holds a '\(header.type)' box (readers would take it for a track or a movie)"
            }
            if let problem = inspect(body, depth: depth + 1) { return problem }
        }
        return nil
    }

    /// The boxes `payload` consists of, if it reads as nothing but boxes; nil otherwise.
    /// Size 0 and 1 are not taken: a full box's zero version and flags would read as one.
    static func plausibleChildren(_ payload: ByteReader) -> [(BoxHeader, ByteReader)]? {
        var reader = payload
        var boxes: [(BoxHeader, ByteReader)] = []
        guard reader.remaining >= 8 else { return nil }
        while reader.remaining > 0 {
            var peek = reader
            guard reader.remaining >= 8, let size = try? peek.readUInt32(), size >= 8,
                  let type = try? peek.readFourCC(), isPrintable(type),
                  let (header, body) = try? reader.readBox(depth: 1) else { return nil }
            boxes.append((header, body))
        }
        return boxes
    }

    static func isPrintable(_ type: FourCC) -> Bool {
        type.bytes.allSatisfy { ($0 >= 0x20 && $0 < 0x7F) || $0 == 0xA9 }
    }

    /// The children of a `meta` box: ISO's is a full box (4 bytes of version and flags
    /// first, § 8.11.1), QuickTime's is not; told apart by where `hdlr` is.
    public static func metaChildren(_ payload: ByteReader) -> ByteReader? {
        var probe = payload
        if let first = try? probe.readBox(depth: 1), first.header.type == .hdlr { return payload }
        var fullBox = payload
        return (try? fullBox.skip(4)) == nil ? nil : fullBox
    }

    /// `bytes` (a box whose header says size 0) with its real size in the header.
    static func withRealSize(_ bytes: [UInt8], _ header: BoxHeader) -> [UInt8] {
        if let size = UInt32(exactly: header.size) {
            var copy = bytes
            copy[0] = UInt8(truncatingIfNeeded: size >> 24)
            copy[1] = UInt8(truncatingIfNeeded: size >> 16)
            copy[2] = UInt8(truncatingIfNeeded: size >> 8)
            copy[3] = UInt8(truncatingIfNeeded: size)
            return copy
        }
        var w = BoxWriter(capacity: bytes.count + 8)
        w.write(UInt32(1))
        w.write(header.type)
        w.write(header.size + 8)  // header.size < 2^63: it is the length of bytes in memory.
        w.write(bytes: bytes[8...])
        return w.bytes
    }

    static func peekType(_ reader: ByteReader) -> String {
        var peek = reader
        _ = try? peek.readUInt32()
        return (try? peek.readFourCC())?.description ?? "box"
    }

    static func describe(_ error: Error) -> String {
        if let error = error as? ISOBMFFError { return error.message }
        return "\(error)"
    }
}
