
/// The QuickTime chapter track, as FFmpeg and Apple write it (QuickTime File Format,
/// "Chapter Lists"; "Text Sample Data"): a `text` track that every other track names in its
/// `tref/chap`, disabled in `tkhd` so that players do not show it as subtitles, one sample
/// per chapter (a 16-bit length, the UTF-8 title and an `encd` box), each lasting until the
/// next chapter and the last until the movie's end. A first chapter that starts late is
/// placed by an empty edit, which FFmpeg and QuickTime honour.
///
/// The one writer of chapter tracks: extraction, remux and mux give it to ``MovieWriter``
/// (``description``, ``samples``, ``durations``, ``edits(movieTimescale:)``); `tag` splices
/// it into an existing `moov`
/// (``movieBox(_:removingTracks:chapterLists:adding:trackID:chunkOffset:largeOffsets:)``).
public struct ChapterTrack: Sendable, Equatable {
    /// The media timescale: milliseconds, the resolution of chapter lists (mp4chaps,
    /// FFmpeg's default). Starts are rounded to it, in both forms alike.
    public static let timescale: UInt32 = 1000

    /// The chapters, sorted, their starts rounded to milliseconds.
    public private(set) var chapters: [Chapter]
    /// One text sample per chapter (``textSample(_:)``).
    public private(set) var samples: [[UInt8]]
    /// Each sample's duration in milliseconds: to the next start, the last to the end.
    public private(set) var durations: [UInt32]
    /// The first chapter's start in milliseconds: an empty edit before the samples.
    public private(set) var leadingEmpty: UInt64
    /// Where the chapters end (the movie's end), in milliseconds.
    public private(set) var end: UInt64

    /// The chapter track for `chapters` in a movie `end` seconds long.
    ///
    /// Throws `.limitExceeded` for more than ``Limits/maximumChapterCount`` chapters, and
    /// `.invalidValue` for a chapter that starts after `end` (which no reader could show).
    public init(chapters list: [Chapter], endingAt endSeconds: Double) throws {
        guard list.count <= Limits.maximumChapterCount else {
            throw ISOBMFFError(.limitExceeded, "\(list.count) chapters: at most \(Limits.maximumChapterCount) are "
                               + "written", path: "", offset: nil)
        }
        // 2^40 ms (35 years) keeps every sum below exact in Double and in 64 bits.
        let limit: Int64 = 1 << 40
        let endMilliseconds = endSeconds.isFinite
            ? min(MediaTime(clampingSeconds: endSeconds, timescale: 1000)?.ticks ?? 0, limit) : 0
        var starts: [(UInt64, Chapter)] = []
        for (n, chapter) in list.enumerated() {
            let ms = chapter.start.isFinite
                ? MediaTime(clampingSeconds: chapter.start, timescale: 1000)?.ticks ?? 0 : limit + 1
            guard ms <= endMilliseconds, let value = UInt64(exactly: ms) else {
                throw ISOBMFFError(.invalidValue, "chapter \(n + 1) ('\(chapter.title)') starts at \(chapter.start) s, "
                                   + "after the movie's end at \(endMilliseconds / 1000) s", path: "", offset: nil)
            }
            starts.append((value, Chapter(title: chapter.title, start: Double(value) / 1000)))
        }
        starts = starts.enumerated().sorted { ($0.element.0, $0.offset) < ($1.element.0, $1.offset) }.map(\.element)
        end = UInt64(endMilliseconds)  // Whole, in [0, 2^40].
        chapters = starts.map(\.1)
        samples = chapters.map { Self.textSample($0.title) }
        leadingEmpty = starts.first?.0 ?? 0
        durations = []
        for (i, (start, _)) in starts.enumerated() {
            let isLast = i + 1 == starts.count
            let next = isLast ? end : starts[i + 1].0
            // A sample lasts at most 2^32 − 1 ms (49.7 days; stts deltas are 32-bit). The last
            // chapter of a movie that claims to run longer (two empty edits of 4.2e17 ticks do)
            // keeps its start and the track ends there: a reader shows it to the movie's end.
            // A longer chapter before another cannot be written without moving the next one.
            if isLast && next - start > UInt64(UInt32.max) {  // start <= next <= end.
                end = start + UInt64(UInt32.max)
            }
            guard let duration = UInt32(exactly: (isLast ? end : next) - start) else {
                throw ISOBMFFError(.limitExceeded, "chapter \(i + 1) lasts more than 2^32 ms", path: "", offset: nil)
            }
            durations.append(duration)
        }
    }

    /// The media's duration in milliseconds: from the first chapter to the end.
    public var mediaDuration: UInt64 { end - leadingEmpty }  // leadingEmpty <= end (checked).

    // MARK: Samples

    /// A text sample holding `title`: its 16-bit length, the UTF-8 bytes (at most
    /// ``Limits/maximumChapterTitleBytes``, cut at a character boundary), and the `encd` box
    /// that says they are UTF-8 (0x100), as FFmpeg writes chapter samples.
    public static func textSample(_ title: String) -> [UInt8] {
        let text = utf8(title, atMost: Limits.maximumChapterTitleBytes)
        var w = BoxWriter(capacity: text.count + 14)
        w.write(UInt16(text.count))  // At most maximumChapterTitleBytes.
        w.write(bytes: text)
        w.box("encd") { $0.write(UInt32(0x100)) }
        return w.bytes
    }

    /// The title in a text sample (a 16-bit length and that many bytes of text), at most
    /// ``Limits/maximumChapterTitleBytes`` bytes of it.
    public static func title(ofSample bytes: [UInt8]) -> String {
        guard bytes.count >= 2 else { return "" }
        let length = min(Int(bytes[0]) << 8 | Int(bytes[1]), bytes.count - 2, Limits.maximumChapterTitleBytes)
        return String(decoding: bytes[2..<(2 + length)], as: UTF8.self)
    }

    /// `text`'s UTF-8 bytes, cut to at most `limit` at a character boundary.
    static func utf8(_ text: String, atMost limit: Int) -> [UInt8] {
        var bytes = Array(text.utf8)
        guard bytes.count > limit else { return bytes }
        var end = limit
        while end > 0 && bytes[end] & 0xC0 == 0x80 { end -= 1 }
        bytes.removeSubrange(end...)
        return bytes
    }

    // MARK: The track for MovieWriter

    /// FFmpeg's `text` sample entry for chapter tracks (`movenc.c`, a tx3g-shaped body with
    /// a one-font `ftab`): display flags 1, justification, colours, default text box and
    /// style all zero but font ID 1.
    public static let sampleEntry: [UInt8] = {
        var w = BoxWriter(capacity: 59)
        w.box("text") { entry in
            entry.writeZeros(6)
            entry.write(UInt16(1))  // data_reference_index
            entry.write(UInt32(1))  // displayFlags
            entry.writeZeros(2 + 4 + 8 + 4)  // justification, background colour, text box, start and end char
            entry.write(UInt16(1))  // font ID
            entry.writeZeros(1 + 1 + 4)  // face style, font size, text colour
            entry.box("ftab") { ftab in
                ftab.write(UInt16(1))  // entry count
                ftab.write(UInt16(1))  // font ID
                ftab.write(UInt8(0))  // empty font name
            }
        }
        return w.bytes
    }()

    /// The media information header QuickTime expects of a text track (`gmhd` with `gmin`
    /// and `text`), as FFmpeg writes it.
    public static let mediaInformationHeader: [UInt8] = {
        var w = BoxWriter(capacity: 76)
        w.box("gmhd") { gmhd in
            gmhd.fullBox("gmin", version: 0, flags: 0) { gmin in
                gmin.write(UInt16(0x40))  // graphics mode: copy
                gmin.write(UInt16(0x8000))
                gmin.write(UInt16(0x8000))
                gmin.write(UInt16(0x8000))  // opcolor
                gmin.write(UInt16(0))  // balance
                gmin.write(UInt16(0))  // reserved
            }
            gmhd.box("text") { text in
                // The 3×3 identity matrix of QuickTime's text media header.
                for value: UInt32 in [0x0001_0000, 0, 0, 0, 0x0001_0000, 0, 0, 0, 0x4000_0000] { text.write(value) }
            }
        }
        return w.bytes
    }()

    /// The handler of a chapter track.
    public static let handler = HandlerBox(handlerType: "text", name: "ChapterHandler")

    /// The track as ``MovieWriter`` takes it: a `text` handler and sample entry, in the
    /// movie but disabled. The tracks that show it name it in their `references["chap"]`.
    public var description: TrackDescription {
        var description = TrackDescription(handler: Self.handler, timescale: Self.timescale,
                                           sampleEntries: [Self.sampleEntry],
                                           mediaInformationHeader: Self.mediaInformationHeader)
        description.flags = TrackHeaderBox.inMovieFlag
        description.volume = 0
        description.mediaDuration = mediaDuration
        return description
    }

    /// The edit list in `movieTimescale`: an empty edit for a first chapter that starts
    /// late, then the samples to the end. Nil when a duration does not fit 64 bits.
    public func edits(movieTimescale: UInt32) -> [EditListBox.Entry]? {
        guard let media = rescale(mediaDuration, from: Self.timescale, to: movieTimescale),
              let empty = rescale(leadingEmpty, from: Self.timescale, to: movieTimescale) else { return nil }
        var entries: [EditListBox.Entry] = []
        if empty > 0 { entries.append(.init(segmentDuration: empty, mediaTime: -1)) }
        entries.append(.init(segmentDuration: media, mediaTime: 0))
        return entries
    }

    // MARK: Splicing into an existing moov

    /// The whole `trak`, its samples in one chunk at `chunkOffset` (`co64` when
    /// `largeOffsets`), written by ``MovieWriter``'s own `trak` code, as a movie's chapter
    /// track is (``MovieWriter/addChapters(_:)``).
    public func trackBox(trackID: UInt32, movieTimescale: UInt32, chunkOffset: UInt64,
                         largeOffsets: Bool) throws -> [UInt8] {
        guard let edits = edits(movieTimescale: movieTimescale) else {
            throw ISOBMFFError(.limitExceeded, "the chapter track's duration does not fit 64 bits", path: "moov/trak",
                               offset: nil)
        }
        var writer = MovieWriter(movieTimescale: movieTimescale)
        let id = try writer.addTrack(description)
        for (sample, duration) in zip(samples, durations) {
            try writer.append(sample, duration: duration, to: id)
        }
        try writer.setEdits(edits, for: id)
        return writer.trackBox(of: id, numbered: trackID, inOneChunkAt: chunkOffset, largeOffsets: largeOffsets) ?? []
    }

    /// The samples' bytes, back to back, as the chunk at the track's chunk offset holds them.
    public var sampleData: [UInt8] { samples.flatMap { $0 } }

    /// The `mdat` box that holds ``sampleData``, header included.
    public var mediaDataBox: [UInt8] {
        let data = sampleData
        return MediaDataHeader.bytes(payloadSize: UInt64(data.count)) + data
    }

    /// `moov` with the tracks whose IDs are in `removed` dropped (their `tref` entries with
    /// them; their `trex` stays, for their `traf`s in the fragments), and, when `track` is
    /// given, that chapter track added as track `trackID` at the end of `moov`, named first
    /// in every other track's `tref/chap` but those in `chapterLists` (the tracks another
    /// names in its `tref/chap`, ``Track/chapterReferences``: chapter lists, such as chapter
    /// images, name none), with a `trex` when the movie is fragmented and `mvhd`'s
    /// next_track_ID moved past it.
    ///
    /// At the end, after `udta`: FFmpeg (`mov_read_custom`, 5.1) gives an `iTunSMPB` item's
    /// priming to the last stream created so far, so a chapter `trak` between the audio and
    /// `udta` took the audio's priming (its "skip samples") away.
    ///
    /// Returns the bytes and the position in them of the new track's chunk offset (of its
    /// `stco`, or `co64` when `largeOffsets`), for the caller to fill in once the layout is
    /// known; nil without a new track.
    public static func movieBox(_ moov: [UInt8], removingTracks removed: Set<UInt32>, chapterLists: Set<UInt32>,
                                adding track: ChapterTrack?, trackID: UInt32, chunkOffset: UInt64,
                                largeOffsets: Bool) throws -> (bytes: [UInt8], position: Int?) {
        var reader = ByteReader(moov)
        guard let (header, payload) = try reader.readBox(depth: 1), header.type == "moov" else {
            throw ISOBMFFError(.missingBox, "not a moov box", path: "", offset: 0)
        }
        let added = try track.map {
            try $0.trackBox(trackID: trackID, movieTimescale: movieTimescaleOf(moov), chunkOffset: chunkOffset,
                            largeOffsets: largeOffsets)
        }
        var children = payload
        var w = BoxWriter(capacity: moov.count + (added?.count ?? 0) + 64)
        var position: Int?
        try w.box("moov") { box in
            while let (child, body) = try children.readBox(depth: 2) {
                switch child.type {
                case "mvhd" where track != nil:
                    var mvhd = body
                    var parsed = try MovieHeaderBox(parsing: &mvhd)
                    parsed.nextTrackID = max(parsed.nextTrackID, trackID &+ 1)  // trackID < UInt32.max (caller).
                    parsed.write(to: &box)
                case "trak":
                    let id = try Self.trackID(of: body)
                    if !removed.contains(id) {
                        // A chapter track (chapter images) names none: FFmpeg takes the last
                        // tref/chap it reads, so one there would hide the others'.
                        let naming = track == nil || chapterLists.contains(id) ? nil : trackID
                        box.write(bytes: try trackBox(body, removing: removed, naming: naming))
                    }
                case "mvex":
                    try box.box("mvex") { mvex in
                        var grandchildren = body
                        // A removed track keeps its trex: its trafs stay in the moofs, and
                        // FFmpeg refuses a traf without a trex (and then the whole file), where
                        // it skips one whose track has no trak.
                        while let (entry, _) = try grandchildren.readBox(depth: 3) {
                            mvex.write(bytes: grandchildren.bytesWithSize(of: entry))
                        }
                        if track != nil {
                            mvex.fullBox("trex", version: 0, flags: 0) { trex in
                                trex.write(trackID)
                                trex.write(UInt32(1))  // default sample description index
                                trex.writeZeros(12)
                            }
                        }
                    }
                default:
                    // With its size: the new trak goes after it.
                    box.write(bytes: children.bytesWithSize(of: child))
                }
            }
            if let added {
                position = box.count + Self.chunkOffsetPosition(in: added, large: largeOffsets)
                box.write(bytes: added)
            }
        }
        guard children.remaining == 0 else {
            throw ISOBMFFError(.invalidBoxSize, "a child of moov runs past its end", path: "moov",
                               offset: children.fileOffset)
        }
        return (w.bytes, position)
    }

    /// The position of the one chunk offset in a `trak` built by ``trackBox(trackID:movieTimescale:chunkOffset:largeOffsets:)``:
    /// the last bytes of the box.
    static func chunkOffsetPosition(in trak: [UInt8], large: Bool) -> Int { trak.count - (large ? 8 : 4) }

    /// `moov`'s timescale (its `mvhd`'s).
    static func movieTimescaleOf(_ moov: [UInt8]) throws -> UInt32 {
        var reader = ByteReader(moov)
        guard let (_, payload) = try reader.readBox(depth: 1) else { return 1000 }
        if var (_, mvhd) = try BoxWalker.first("mvhd", in: payload, depth: 2) {
            let parsed = try MovieHeaderBox(parsing: &mvhd)
            if parsed.timescale > 0 { return parsed.timescale }
        }
        throw ISOBMFFError(.missingBox, "moov has no mvhd with a timescale", path: "moov", offset: 0)
    }

    /// The track ID in a `trak`'s `tkhd`.
    static func trackID(of trak: ByteReader) throws -> UInt32 {
        if var (_, tkhd) = try BoxWalker.first("tkhd", in: trak, depth: 3) {
            return try TrackHeaderBox(parsing: &tkhd).trackID
        }
        throw ISOBMFFError(.missingBox, "a trak has no tkhd first", path: "moov/trak", offset: trak.fileOffset)
    }

    /// A `trak` (its payload in `body`) with the `tref` IDs naming `removed` tracks dropped
    /// and, when `chapters` is given, that track named first in its `tref/chap` (the other
    /// IDs there, such as a chapter-image track's, kept after it).
    /// Every other box is kept byte for byte.
    static func trackBox(_ body: ByteReader, removing removed: Set<UInt32>, naming chapters: UInt32?) throws -> [UInt8] {
        var children = body
        var w = BoxWriter()
        var wroteReferences = false
        // Each tref (a second one too) keeps its entries, less the removed IDs; bytes past a
        // damaged entry are kept as they are. The new chapter track is named first in every
        // chap entry, and in a chap entry of its own in the first tref when it has none.
        func references(_ tref: ByteReader?, first: Bool, into trak: inout BoxWriter) {
            var kept: [(FourCC, [UInt32])] = []
            var damaged: [UInt8] = []
            var namedChapters = false
            if var entries = tref {
                while true {
                    var next = entries
                    let read: (header: BoxHeader, payload: ByteReader)?
                    do { read = try next.readBox(depth: 4) } catch {
                        damaged = entries.readRemainingBytes()
                        break
                    }
                    guard let (entry, entryBody) = read else { break }
                    entries = next
                    var ids = entryBody
                    var list: [UInt32] = []
                    while let id = try? ids.readUInt32() {
                        if !removed.contains(id) && id != chapters { list.append(id) }
                    }
                    // The new chapter track first, then the ids not removed (chapter images, a
                    // video track of JPEGs, stay named); an entry left empty goes.
                    if entry.type == "chap", let chapters {
                        list.insert(chapters, at: 0)
                        namedChapters = true
                    }
                    if !list.isEmpty { kept.append((entry.type, list)) }
                }
            }
            if first, let chapters, !namedChapters { kept.append(("chap", [chapters])) }
            guard !kept.isEmpty || !damaged.isEmpty else { return }
            trak.box("tref") { tref in
                for (type, ids) in kept {
                    tref.box(type) { for id in ids { $0.write(id) } }
                }
                tref.write(bytes: damaged)
            }
        }
        // The moov was read whole before (Movie): a child that does not parse now is an error,
        // never a reason to drop the rest of the track.
        try w.box("trak") { trak in
            while let (child, childBody) = try children.readBox(depth: 3) {
                if child.type == "tref" {
                    references(childBody, first: !wroteReferences, into: &trak)
                    wroteReferences = true
                    continue
                }
                // With its size: a tref may go after it.
                trak.write(bytes: children.bytesWithSize(of: child))
                if child.type == "tkhd" && !wroteReferences {
                    // A tref of its own later in the trak is merged there; else it goes here.
                    // One before a damaged child counts (none past it).
                    if (try? BoxWalker.first("tref", in: children, depth: 3)) == nil {
                        references(nil, first: true, into: &trak)
                        wroteReferences = true
                    }
                }
            }
        }
        return w.bytes
    }
}

extension ChapterTrack {
    /// What a tag edit does to the chapter tracks of a `moov`: the tracks to drop, and the
    /// new chapter track with its ID (nil to only drop).
    public struct Change: Sendable, Equatable {
        /// The IDs of the chapter tracks to drop (and of the `tref` entries naming them).
        public var removedTracks: Set<UInt32>
        /// The IDs of the tracks that another track names in its `tref/chap`
        /// (``Track/chapterReferences``): chapter lists, which do not name the new track.
        public var chapterLists: Set<UInt32>
        /// The chapter track to add, nil for none.
        public var track: ChapterTrack?
        /// The new track's ID: past every track's and `mvhd`'s next_track_ID, below `UInt32.max`.
        public var trackID: UInt32

        /// A change of the movie whose tracks are `tracks`: it drops `removedTracks` and
        /// adds `track` as `trackID`; the chapter lists are read from `tracks`, by the one rule
        /// (``Track/chapterReferences``).
        public init(tracks: [Track], removedTracks: Set<UInt32>, track: ChapterTrack?, trackID: UInt32) {
            self.removedTracks = removedTracks
            chapterLists = Set(tracks.flatMap(\.chapterReferences))
            self.track = track
            self.trackID = trackID
        }

        /// The `mdat` holding the new track's samples; empty without one.
        public var mediaDataBox: [UInt8] { track?.mediaDataBox ?? [] }

        /// `moov` changed, the new track's chunk offset left 0 (below any threshold of
        /// ``TagRewritePlan/shiftingChunkOffsets(_:by:threshold:)``) and its position in the
        /// bytes, for ``setChunkOffset(_:at:to:large:)`` once the layout is known.
        public func movieBox(_ moov: [UInt8], largeOffsets: Bool) throws -> (bytes: [UInt8], position: Int?) {
            try ChapterTrack.movieBox(moov, removingTracks: removedTracks, chapterLists: chapterLists, adding: track,
                                      trackID: trackID, chunkOffset: 0, largeOffsets: largeOffsets)
        }

        /// Writes the chunk offset (big-endian, 4 or 8 bytes) at `position`.
        public static func setChunkOffset(_ bytes: inout [UInt8], at position: Int, to value: UInt64, large: Bool) {
            let width = large ? 8 : 4
            for i in 0..<width {
                bytes[position + i] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(width - 1 - i)))
            }
        }
    }
}

extension ChapterTrack {
    /// The warning for a list Nero's `chpl` cannot hold (more than
    /// ``NeroChapters/maximumCount``), nil for one it can.
    public static func neroLimitWarning(count: Int) -> String? {
        guard count > NeroChapters.maximumCount else { return nil }
        return "\(count) chapters: Nero's chpl holds at most \(NeroChapters.maximumCount), so only the QuickTime "
            + "chapter track holds them (mutagen and other chpl readers see none)"
    }
}
