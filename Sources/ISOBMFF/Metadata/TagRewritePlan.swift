/// How a file is rewritten with new tags: every top-level box copied byte for byte except
/// `moov` (its `udta` replaced), a `free` box of padding after `moov`, and the absolute
/// offsets that point past the old `moov` moved by what it grew or shrank. The `free`/`skip`
/// boxes right before and right after the old `moov` are the old padding: the new `moov`
/// and its padding take their place.
///
/// Absolute offsets (ISO/IEC 14496-12): chunk offsets in `stco`/`co64` (§ 8.7.5), the
/// offsets of a `saio` in `stbl` (§ 8.7.9), a `tfhd`'s base_data_offset when its flag
/// 0x000001 says it is present (§ 8.8.7), and the moof_offset of each `tfra` entry
/// (§ 8.8.10). Everything else (`trun` data offsets, a `saio` in a `traf`, `sidx`
/// references) is relative to boxes that move together. Sample bytes never change.
///
/// The padding is at least the new `moov`'s size plus 4 KiB, so that a later edit can be
/// written in place (``inPlaceEdit(boxes:movieBox:userData:chapters:streamedImages:)``).
public struct TagRewritePlan: Sendable {
    /// One piece of the output, in order.
    public enum Piece: Sendable, Equatable {
        /// Bytes of the input copied as they are.
        case copy(offset: UInt64, count: UInt64)
        /// Bytes built here (the new `moov`, the padding, a `moof` or `mfra` whose offsets moved).
        case write([UInt8])
        /// A top-level box of the input read into memory to have its offsets moved
        /// (``shiftedFragmentBox(_:by:threshold:)``) and then written.
        case shift(offset: UInt64, count: UInt64, type: FourCC)
        /// Zero bytes (padding, cleared bytes), written from a fixed buffer.
        case zeros(UInt64)
        /// The bytes of the streamed image numbered `index` in the `streamedImages` given,
        /// copied from its file by the writer.
        case image(index: Int, count: UInt64)

        /// The bytes the piece puts in the file.
        public var byteCount: UInt64 {
            switch self {
            case .copy(_, let count), .shift(_, let count, _), .zeros(let count), .image(_, let count): count
            case .write(let bytes): UInt64(bytes.count)
            }
        }
    }

    /// An image of the `covr` item that the writer streams from its file rather than
    /// holding it (`TagImage.Streamed`): the new `moov` is built with that `data` box
    /// holding no image bytes, and ``pieces`` put them back.
    public struct StreamedImage: Sendable, Equatable {
        /// Which `data` box of the first `udta/meta/ilst/covr` it goes in, from 0.
        public var dataBox: Int
        /// Its length.
        public var count: UInt64

        /// The image for the `dataBox`-th `data` box of `covr`, of `count` bytes.
        public init(dataBox: Int, count: UInt64) {
            self.dataBox = dataBox
            self.count = count
        }
    }

    /// The output, piece by piece.
    public var pieces: [Piece]
    /// How far everything after the old `moov` (and its padding) moves.
    public var delta: Int64
    /// Where the old `moov` and its padding ended: offsets at or past it move by ``delta``.
    public var threshold: UInt64
    /// The new `moov`, header included, without the bytes of streamed images (its box
    /// sizes do not count them either; ``pieces`` has them spliced in).
    public var movieBox: [UInt8]

    /// The minimum padding beyond the new `moov`'s size.
    public static let extraPadding = 4096

    /// Plans the rewrite.
    ///
    /// - Parameters:
    ///   - boxes: the file's top-level box headers, in order (as read from the file).
    ///   - movieBox: the old `moov`, header included.
    ///   - userData: the new `moov/udta` (whole box), nil for none.
    ///   - chapters: a change of the chapter tracks; a new chapter track's samples go in an
    ///     `mdat` right after the padding (before the old boxes, so that `moov` stays ahead
    ///     of the media it describes).
    ///   - trailingBytes: how many bytes follow the last box (fewer than a box header: trailing
    ///     garbage), copied last as they are.
    ///   - streamedImages: the cover images `userData` holds as empty `data` boxes, whose
    ///     bytes ``pieces`` has the writer copy from their files.
    public init(boxes: [BoxHeader], movieBox: [UInt8], userData: [UInt8]?,
                chapters: ChapterTrack.Change? = nil, trailingBytes: UInt64 = 0,
                streamedImages: [StreamedImage] = []) throws {
        guard let index = boxes.firstIndex(where: { $0.type == "moov" }) else {
            throw ISOBMFFError(.missingBox, "no moov box", path: "", offset: 0)
        }
        let moov = boxes[index]
        var after = index + 1
        while after < boxes.count, boxes[after].type == "free" || boxes[after].type == "skip" { after += 1 }
        let oldEnd = after < boxes.count ? boxes[after].offset : boxes[boxes.count - 1].end
        // The padding right before moov too (what in-place edits leave: each new moov is
        // written after the old one, which becomes free), so that a rewrite gives it back
        // and repeated edits do not grow the file; kept where a damaged file's chunk
        // offsets point into it.
        var first = index
        while first > 0, boxes[first - 1].type == "free" || boxes[first - 1].type == "skip" { first -= 1 }
        if first < index, try Self.hasChunkOffset(in: movieBox, within: boxes[first].offset..<moov.offset) {
            first = index
        }
        let start = boxes[first].offset
        var withNewUserData = try Self.movieBox(movieBox, replacingUserData: userData)
        let streamed = try Self.total(of: streamedImages)
        var chapterChunk: (position: Int, large: Bool)?
        var chapterData: [UInt8] = []
        if let chapters {
            // co64 when the chapter chunk (after moov, its padding of moov + 4 KiB and an
            // mdat header) may start past 4 GiB.
            var large = false
            var edited = try chapters.movieBox(withNewUserData, largeOffsets: false)
            if start + 2 * (UInt64(edited.bytes.count) + streamed) + UInt64(Self.extraPadding) + 16
                > UInt64(UInt32.max) {
                large = true
                edited = try chapters.movieBox(withNewUserData, largeOffsets: true)
            }
            withNewUserData = edited.bytes
            chapterChunk = edited.position.map { ($0, large) }
            chapterData = chapters.mediaDataBox
        }
        // Sizes in UInt64 (streamed images are bounded by what splicing lets a 32-bit moov
        // size hold, so all of these fit Int64).
        let movieSize = UInt64(withNewUserData.count) + streamed
        let paddingSize = movieSize + UInt64(Self.extraPadding)
        let oldSize = Int64(oldEnd - start)  // A file's length fits Int64.
        delta = Int64(movieSize + paddingSize + UInt64(chapterData.count)) - oldSize
        threshold = oldEnd
        self.movieBox = try Self.shiftingChunkOffsets(withNewUserData, by: delta, threshold: oldEnd)
        if let chapterChunk {
            // Left 0 by the shift (below the threshold); the samples follow the mdat header.
            ChapterTrack.Change.setChunkOffset(&self.movieBox, at: chapterChunk.position,
                                               to: start + movieSize + paddingSize + 8,
                                               large: chapterChunk.large)
        }
        pieces = []
        for box in boxes[..<first] { pieces.append(.copy(offset: box.offset, count: box.size)) }
        pieces += try Self.splicing(self.movieBox, images: streamedImages)
        pieces.append(.write(Self.freeHeader(size: paddingSize)))
        pieces.append(.zeros(paddingSize - UInt64(Self.freeHeader(size: paddingSize).count)))
        if !chapterData.isEmpty { pieces.append(.write(chapterData)) }
        for box in boxes[after...] {
            if box.type == "moov" && box.headerSize == 8 {
                // A second moov (left by an in-place edit that stopped between its flips):
                // readers take the first; it becomes padding, its offsets being stale.
                var header = BoxWriter(capacity: 8)
                header.write(UInt32(box.size))  // headerSize 8: a 32-bit size.
                header.write(FourCC("free"))
                pieces.append(.write(header.bytes))
                pieces.append(.copy(offset: box.offset + 8, count: box.size - 8))
            } else if delta != 0 && (box.type == "moof" || box.type == "mfra") {
                pieces.append(.shift(offset: box.offset, count: box.size, type: box.type))
            } else {
                pieces.append(.copy(offset: box.offset, count: box.size))
            }
        }
        if trailingBytes > 0 { pieces.append(.copy(offset: boxes[boxes.count - 1].end, count: trailingBytes)) }
        // Coalesce neighbouring copies: fewer, larger reads and writes.
        var merged: [Piece] = []
        for piece in pieces {
            if case .copy(let offset, let count) = piece, case .copy(let start, let length)? = merged.last,
               start + length == offset {
                merged[merged.count - 1] = .copy(offset: start, count: length + count)
            } else {
                merged.append(piece)
            }
        }
        pieces = merged
    }

    /// An edit written into the padding after `moov`, as a list of writes to make in order,
    /// each followed by a sync (the file is whole after each one, with the old tags or the
    /// new):
    /// 1. the new `moov`'s payload inside the `free` box after the old `moov`, and the header
    ///    of a `free` box for what remains of the padding — all still inside that `free`;
    ///    with a new chapter track, its `mdat` at the end of the padding (still inside it);
    /// 2. the `free` box's size cut to the new `moov`'s (4 bytes; skipped when equal): it
    ///    now holds exactly the new `moov`, still typed `free`;
    /// 3. that box's type flipped to `moov` (4 bytes): readers take the first `moov`, the old;
    /// 4. the old `moov`'s type flipped to `free` (4 bytes): the new one is the only `moov`;
    /// 5. the old `moov`'s payload zeroed (removed values are gone from the file).
    ///
    /// Nothing else moves, so no offset changes, and the new `moov` stays ahead of the media
    /// (it takes the place of padding that already was). Nil when the padding cannot hold the
    /// new `moov` and the chapter `mdat` (they must fill it exactly, or leave at least 8
    /// bytes for the remaining `free`).
    ///
    /// Each write is a list of pieces: `.write`, `.zeros` and `.image` (a streamed image,
    /// numbered in `streamedImages`), so that neither covers nor padding are held whole.
    public static func inPlaceEdit(boxes: [BoxHeader], movieBox: [UInt8], userData: [UInt8]?,
                                   chapters: ChapterTrack.Change? = nil, streamedImages: [StreamedImage] = [])
        throws -> [(offset: UInt64, pieces: [Piece])]? {
        guard let index = boxes.firstIndex(where: { $0.type == "moov" }), index + 1 < boxes.count else { return nil }
        let moov = boxes[index]
        let padding = boxes[index + 1]
        guard padding.type == "free", padding.headerSize == 8, !padding.extendsToEnd else { return nil }
        var new = try Self.movieBox(movieBox, replacingUserData: userData)
        let room = padding.size
        var chapterData: [UInt8] = []
        if let chapters {
            let large = padding.end > UInt64(UInt32.max)
            let edited = try chapters.movieBox(new, largeOffsets: large)
            new = edited.bytes
            chapterData = chapters.mediaDataBox
            if let position = edited.position {
                // The mdat ends the padding; its samples follow its 8-byte header.
                guard UInt64(chapterData.count) <= room else { return nil }
                ChapterTrack.Change.setChunkOffset(&new, at: position, to: padding.end - UInt64(chapterData.count) + 8,
                                                   large: large)
            }
        }
        guard new.count >= 8, new[0..<4] != [0, 0, 0, 1] else { return nil }  // A 32-bit header only.
        var spliced = try splicing(new, images: streamedImages)
        // The header, its size counting the images, is written apart (steps 2 and 3).
        guard case .write(let head)? = spliced.first, head.count >= 8 else { return nil }
        spliced[0] = .write(Array(head[8...]))
        let size = try total(of: streamedImages) + UInt64(new.count)
        let used = size + UInt64(chapterData.count)
        guard used == room || used + 8 <= room else { return nil }
        // A damaged file may keep media in the old moov or its padding (a chunk offset
        // there): then neither is zeroed (steps 1 and 5), those bytes stay as they are.
        let mediaInside = try hasChunkOffset(in: movieBox, within: moov.offset..<padding.end)
        var inside = spliced
        if used < room {
            var rest = BoxWriter(capacity: 8)
            rest.write(UInt32(room - used))  // room fits 32 bits: the padding's header is 8 bytes.
            rest.write(FourCC("free"))
            inside.append(.write(rest.bytes))
            // What the padding held before (an older moov's tags) is zeroed, not left behind.
            if !mediaInside { inside.append(.zeros(room - used - 8)) }
        }
        var writes: [(offset: UInt64, pieces: [Piece])] = [(padding.offset + 8, inside)]
        if !chapterData.isEmpty { writes.append((padding.end - UInt64(chapterData.count), [.write(chapterData)])) }
        if size < room { writes.append((padding.offset, [.write(Array(head[0..<4]))])) }
        writes.append((padding.offset + 4, [.write(FourCC("moov").bytes)]))
        writes.append((moov.offset + 4, [.write(FourCC("free").bytes)]))
        // 5. The old moov's payload zeroed: removed tags and replaced covers are gone from
        //    the file, not only from its index (it is padding by now, read by no one).
        if moov.size > UInt64(moov.headerSize), !mediaInside {
            writes.append((moov.offset + UInt64(moov.headerSize), [.zeros(moov.size - UInt64(moov.headerSize))]))
        }
        return writes
    }

    /// A `free` box of `size` bytes (at least 8), zeros inside.
    public static func freeBox(size: Int) -> [UInt8] {
        var w = BoxWriter(capacity: size)
        w.box("free") { $0.writeZeros(size - 8) }
        return w.bytes
    }

    /// The header of a `free` box of `size` bytes (at least 16): 8 bytes, or 16 with a
    /// 64-bit largesize past 32 bits (§ 4.2).
    static func freeHeader(size: UInt64) -> [UInt8] {
        var w = BoxWriter(capacity: 16)
        if let small = UInt32(exactly: size) {
            w.write(small)
            w.write(FourCC("free"))
        } else {
            w.write(UInt32(1))
            w.write(FourCC("free"))
            w.write(size)
        }
        return w.bytes
    }

    /// The streamed images' bytes in all; `.limitExceeded` past what a 32-bit `moov` size holds.
    static func total(of images: [StreamedImage]) throws -> UInt64 {
        var total: UInt64 = 0
        for image in images {
            total += image.count
            guard total <= UInt64(UInt32.max) else {
                throw ISOBMFFError(.limitExceeded, "covers of \(total) bytes or more do not fit a moov box",
                                   path: "moov/udta/meta/ilst/covr", offset: 0)
            }
        }
        return total
    }

    /// `moov` as pieces with the streamed `images` spliced in: each one's bytes follow the
    /// (empty) `data` box it names in the first `udta/meta/ilst/covr`, and the sizes of
    /// `moov`, `udta`, `meta`, `ilst`, `covr` and that `data` box grow by what goes inside
    /// them (32-bit sizes past 4 GiB are refused, `.limitExceeded`). The boxes are found by
    /// the rule that left the covers out of the file's `moov` (``UserDataBox/CoverBoxes``).
    public static func splicing(_ moov: [UInt8], images: [StreamedImage]) throws -> [Piece] {
        guard !images.isEmpty else { return [.write(moov)] }
        let path = "moov/udta/meta/ilst/covr"
        func missing(_ what: String) -> ISOBMFFError {
            ISOBMFFError(.missingBox, "no \(what) for the streamed covers", path: path, offset: 0)
        }
        var reader = ByteReader(moov)
        guard let (moovBox, _) = try reader.readBox(depth: 1),
              let covers = try UserDataBox.CoverBoxes(movie: moovBox, in: MemoryByteSource(moov)) else {
            throw missing(path)
        }
        let dataBoxes = covers.dataBoxes
        var bytes = moov
        func grow(_ box: BoxHeader, by count: UInt64) throws {
            let at = Int(box.offset)  // Inside `bytes`: CoverBoxes read it there.
            let size = box.size + count
            // CoverBoxes finds only 32-bit headers.
            if let small = UInt32(exactly: size) {
                for i in 0..<4 { bytes[at + i] = UInt8(truncatingIfNeeded: small >> (24 - 8 * UInt32(i))) }
            } else {
                throw ISOBMFFError(.limitExceeded, "\(box.path) of \(size) bytes does not fit its size field",
                                   path: box.path, offset: box.offset)
            }
        }
        let sum = try total(of: images)
        for box in covers.path { try grow(box, by: sum) }
        var order = Array(images.indices)
        order.sort { images[$0].dataBox < images[$1].dataBox }
        var pieces: [Piece] = []
        var last = 0
        for index in order {
            let image = images[index]
            guard image.dataBox >= 0, image.dataBox < dataBoxes.count,
                  pieces.isEmpty || Int(dataBoxes[image.dataBox].end) > last else {
                throw missing("data box \(image.dataBox)")
            }
            let box = dataBoxes[image.dataBox]
            try grow(box, by: image.count)
            let end = Int(box.end)
            pieces.append(.write(Array(bytes[last..<end])))
            pieces.append(.image(index: index, count: image.count))
            last = end
        }
        pieces.append(.write(Array(bytes[last...])))
        return pieces
    }

    /// `moov` with its first `udta` replaced by `userData` (removed for nil, added at the end
    /// when it had none). The other children are kept byte for byte, in order, but for a
    /// size of 0 ("to the end of moov"), written as the size it stands for.
    public static func movieBox(_ moov: [UInt8], replacingUserData userData: [UInt8]?) throws -> [UInt8] {
        var reader = ByteReader(moov)
        guard let (header, payload) = try reader.readBox(depth: 1), header.type == "moov" else {
            throw ISOBMFFError(.missingBox, "not a moov box", path: "", offset: 0)
        }
        var children = payload
        var w = BoxWriter(capacity: moov.count + (userData?.count ?? 0))
        var replaced = false
        w.box("moov") { box in
            while let (child, _) = try? children.readBox(depth: 2) {
                if child.type == "udta" && !replaced {
                    replaced = true
                    if let userData { box.write(bytes: userData) }
                } else {
                    // Size 0, "to the end of moov", is written with its size, or it would
                    // take in the udta added after it (readers would find no tags).
                    box.write(bytes: children.bytesWithSize(of: child))
                }
            }
            if !replaced, let userData { box.write(bytes: userData) }
        }
        guard children.remaining == 0 else {
            throw ISOBMFFError(.invalidBoxSize, "a child of moov runs past its end", path: "moov",
                               offset: children.fileOffset)
        }
        return w.bytes
    }

    /// `moov` with every `stco`/`co64` entry, and every offset of a `saio` in `stbl`
    /// (absolute there, § 8.7.9), at or past `threshold` moved by `delta`.
    /// Throws when a 32-bit entry would not fit 32 bits.
    public static func shiftingChunkOffsets(_ moov: [UInt8], by delta: Int64, threshold: UInt64) throws -> [UInt8] {
        var bytes = moov
        guard delta != 0 else { return bytes }
        try patch(&bytes, containers: ["moov", "trak", "mdia", "minf", "stbl"]) { header, payload, bytes in
            guard header.type == "stco" || header.type == "co64" || header.type == "saio" else { return }
            var reader = payload
            let (version, flags) = try reader.readVersionAndFlags()
            // A saio here (in stbl, not a traf) holds absolute offsets (§ 8.7.9), after
            // aux_info_type and its parameter when flag 1 is set; 64-bit in version 1.
            if header.type == "saio" && flags & 1 != 0 { try reader.skip(8) }
            let wide = header.type == "co64" || (header.type == "saio" && version == 1)
            let count = try reader.readEntryCount(entrySize: wide ? 8 : 4)
            var position = Int(reader.fileOffset)  // Inside `bytes`: the reader is over them.
            for _ in 0..<count {
                try shift(&bytes, at: position, width: wide ? 8 : 4, by: delta, threshold: threshold,
                          what: header.path)
                position += wide ? 8 : 4
            }
        }
        return bytes
    }

    /// A `moof` (base_data_offset of each `tfhd` that has one) or `mfra` (moof_offset of
    /// each `tfra` entry) with its absolute offsets at or past `threshold` moved by `delta`.
    public static func shiftedFragmentBox(_ box: [UInt8], by delta: Int64, threshold: UInt64) throws -> [UInt8] {
        var bytes = box
        try patch(&bytes, containers: ["moof", "traf", "mfra"]) { header, payload, bytes in
            var reader = payload
            switch header.type {
            case "tfhd":
                let (_, flags) = try reader.readVersionAndFlags()
                guard flags & 0x000001 != 0 else { return }
                try reader.skip(4)  // track_ID
                guard reader.remaining >= 8 else { throw reader.error(.truncated, "tfhd ends in base_data_offset") }
                try shift(&bytes, at: Int(reader.fileOffset), width: 8, by: delta, threshold: threshold,
                          what: header.path)
            case "tfra":
                let (version, _) = try reader.readVersionAndFlags()
                try reader.skip(4)  // track_ID
                let sizes = try reader.readUInt32()
                let width = version == 1 ? 8 : 4
                // time, moof_offset, then traf, trun and sample numbers of 1 to 4 bytes each.
                let tail = Int((sizes >> 4) & 3) + Int((sizes >> 2) & 3) + Int(sizes & 3) + 3
                let count = try reader.readEntryCount(entrySize: 2 * width + tail)
                var position = Int(reader.fileOffset)
                for _ in 0..<count {
                    try shift(&bytes, at: position + width, width: width, by: delta, threshold: threshold,
                              what: header.path)
                    position += 2 * width + tail
                }
            default:
                return
            }
        }
        return bytes
    }

    /// Whether a `stco`/`co64` entry of `moov` points into `range` (media kept where tags
    /// are, in a damaged file).
    private static func hasChunkOffset(in moov: [UInt8], within range: Range<UInt64>) throws -> Bool {
        var bytes = moov
        var found = false
        try patch(&bytes, containers: ["moov", "trak", "mdia", "minf", "stbl"]) { header, payload, _ in
            guard !found, header.type == "stco" || header.type == "co64" else { return }
            var reader = payload
            _ = try reader.readVersionAndFlags()
            let wide = header.type == "co64"
            let count = try reader.readEntryCount(entrySize: wide ? 8 : 4)
            for _ in 0..<count where !found {
                found = range.contains(wide ? try reader.readUInt64() : UInt64(try reader.readUInt32()))
            }
        }
        return found
    }

    /// Calls `body` with every box under `containers` (the top box included), depth first.
    private static func patch(_ bytes: inout [UInt8], containers: Set<FourCC>,
                              _ body: (BoxHeader, ByteReader, inout [UInt8]) throws -> Void) throws {
        func walk(_ reader: ByteReader, depth: Int, bytes: inout [UInt8]) throws {
            var children = reader
            while let (child, payload) = try children.readBox(depth: depth) {
                if containers.contains(child.type) {
                    try walk(payload, depth: depth + 1, bytes: &bytes)
                } else {
                    try body(child, payload, &bytes)
                }
            }
        }
        try walk(ByteReader(bytes), depth: 1, bytes: &bytes)
    }

    /// Moves the big-endian offset of `width` bytes at `position` by `delta` when it is at
    /// or past `threshold`.
    private static func shift(_ bytes: inout [UInt8], at position: Int, width: Int, by delta: Int64,
                              threshold: UInt64, what: String) throws {
        let old = bytes[position..<(position + width)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        guard old >= threshold else { return }
        let (moved, overflow) = Int64(clamping: old).addingReportingOverflow(delta)
        guard !overflow, moved >= 0, width == 8 || moved <= Int64(UInt32.max) else {
            throw ISOBMFFError(.limitExceeded,
                               "\(what): the offset \(old) moved by \(delta) does not fit \(width * 8) bits",
                               path: what, offset: UInt64(position))
        }
        for i in 0..<width {
            bytes[position + i] = UInt8(truncatingIfNeeded: UInt64(moved) >> (8 * UInt64(width - 1 - i)))
        }
    }
}
