import ISOBMFF

/// What writing tags did.
public struct TagWriteResult: Sendable {
    /// How the file was written.
    public enum Method: String, Sendable {
        /// The whole file rewritten beside the original and published atomically.
        case rewrite
        /// The new `moov` written into the padding after the old one (see docs/cli.md).
        case inPlace = "in_place"
        /// A file with hard links: the whole file rewritten beside it, synced, then copied
        /// back over it, so that it keeps its inode and every name (see docs/cli.md).
        case copiedBack = "copied_back"
        /// Nothing written: the tags were already these, or it was a dry run.
        case none
    }

    /// The tags the file holds afterwards (or would hold, on a dry run). A large cover the
    /// file held and keeps is a `TagImage.Streamed` image with `keptAt` set (its bytes were
    /// left in the file); ``TagFile/read(_:)`` reads it whole.
    public var tags: ItemList
    /// How it was written.
    public var method: Method
    /// Damaged items skipped while reading, and the like.
    public var warnings: [String]
    /// The chapters the file holds afterwards: its QuickTime chapter track's, else its Nero
    /// `chpl`'s.
    public var chapters: [Chapter] = []

    init(tags: ItemList, method: Method, warnings: [String]) {
        self.tags = tags
        self.method = method
        self.warnings = warnings
    }
}

/// Reading and writing a file's iTunes-style tags (`moov/udta/meta/ilst`).
///
/// ```swift
/// try TagFile.edit("song.m4a") { tags in
///     tags.set(.text(["New title"]), for: try TagKey.parse("title"))
/// }
/// ```
///
/// Writing follows the project's rule: the new file is written beside the original and
/// moved over it atomically; every top-level box but `moov` is copied byte for byte, the
/// sample bytes never change, absolute offsets are moved, and a `free` box of at least the
/// new `moov`'s size plus 4 KiB follows `moov` for the next edit.
public enum TagFile {
    /// The tags of the file at `path`, with warnings for damaged items.
    public static func read(_ path: String) throws -> ItemList {
        try naming(path) { ItemList(userData: try Layout(InputFile(path: path)).userData ?? []) }
    }

    /// The chapters of the file at `path`, by start, as ``edit(_:applying:dryRun:rewritingLinkedFiles:)`` reads
    /// them (the QuickTime chapter track, else Nero's `chpl`); empty when it has none.
    public static func chapters(of path: String) throws -> [Chapter] {
        try edit(path, applying: TagChanges(), dryRun: true).chapters
    }

    /// Changes the tags of the file at `path` with `change` and writes them (unless
    /// `dryRun`, or nothing changed).
    @discardableResult
    public static func edit(_ path: String, dryRun: Bool = false,
                            _ change: (inout ItemList) throws -> Void) throws -> TagWriteResult {
        try naming(path) { try edit(path, dryRun: dryRun, stoppingAfterWrite: nil, change) }
    }

    /// Thrown by ``edit(_:dryRun:stoppingAfterWrite:_:)`` when told to stop (tests only).
    struct InjectedStop: Error {}

    /// `edit`, optionally stopping after the given write (and its sync) of an in-place edit,
    /// as a crash would: tests check that the file then opens with the old or the new tags.
    static func edit(_ path: String, dryRun: Bool, stoppingAfterWrite stop: Int?,
                     _ change: (inout ItemList) throws -> Void) throws -> TagWriteResult {
        try edit(path, dryRun: dryRun, stoppingAfterWrite: stop, chapters: nil, change)
    }

    /// Makes `changes` (tags, covers and chapters) to the file at `path`, as
    /// ``edit(_:dryRun:_:)`` does.
    ///
    /// Chapters are written in both forms: a QuickTime chapter track (ISOBMFF's
    /// `ChapterTrack`, which FFmpeg and QuickTime read; GStreamer only plays the file),
    /// replacing any the file has, and Nero's `udta/chpl` (which mutagen reads) for at most 255 chapters; past that,
    /// the chapter track only, with a warning in ``TagWriteResult/warnings``. Starts are
    /// rounded to milliseconds. More than `Limits.maximumChapterCount` chapters, or one that
    /// starts after the movie's end, is refused with `.invalidArgument`.
    ///
    /// A file with more than one name (hard links) that the edit cannot make in place is
    /// rewritten beside it and copied back over it (``TagWriteResult/Method/copiedBack``),
    /// keeping its names one file; with `rewritingLinkedFiles` false it is refused instead
    /// (``RemuxError/Code/cannotCreateOutput``).
    @discardableResult
    public static func edit(_ path: String, applying changes: TagChanges, dryRun: Bool = false,
                            rewritingLinkedFiles: Bool = true) throws -> TagWriteResult {
        var chapters: [Chapter]??
        if changes.removingChapters { chapters = .some(nil) }
        if let list = changes.chapters { chapters = .some(list) }
        return try naming(path) {
            try edit(path, dryRun: dryRun, stoppingAfterWrite: nil, chapters: chapters,
                     rewritingLinkedFiles: rewritingLinkedFiles) { changes.apply(to: &$0) }
        }
    }

    /// The chapters a tag edit writes: the chapter track and its change of `moov`, the new
    /// `udta` (with `chpl` replaced or removed), and a warning when `chpl` could not hold them.
    struct ChapterEdit {
        var change: ChapterTrack.Change?
        var userData: [UInt8]?
        var chapters: [Chapter]
        var warning: String?

        /// `chapters` (nil to remove them) for the movie in `input`, whose `udta` is `userData`.
        init(_ chapters: [Chapter]?, input: some ByteSource, userData: [UInt8]?, name: String) throws {
            let movie = try parse { try Movie(reading: input) }
            // The chapter tracks: text tracks another track names in tref/chap.
            var removed = Set<UInt32>()
            for track in movie.tracks {
                for id in track.references["chap"] ?? [] where id != track.trackID {
                    if let named = movie.tracks.first(where: { $0.trackID == id }), Chapters.isTextTrack(named) {
                        removed.insert(id)
                    }
                }
            }
            guard let chapters else {
                change = removed.isEmpty ? nil : ChapterTrack.Change(removedTracks: removed, track: nil, trackID: 0)
                self.userData = NeroChapters.userData(userData, replacingWith: nil)
                self.chapters = []
                return
            }
            let track: ChapterTrack
            do {
                track = try ChapterTrack(chapters: chapters, endingAt: try Self.end(of: movie, without: removed,
                                                                                    source: input, name: name))
            } catch let error as ISOBMFFError {
                throw RemuxError(.invalidArgument, "\(name): \(error.message)")
            }
            // Past every track's ID and every trex's (a chapter track dropped before keeps its
            // trex for its trafs, which must not become the new track's), and at mvhd's
            // next_track_ID when that is further (all ones there means "search").
            let last = (movie.tracks.map(\.trackID) + movie.trackExtends.map(\.trackID)).max() ?? 0
            guard last < UInt32.max - 1 else {
                throw RemuxError(.unsupportedInput, "\(name): no track ID is left for a chapter track")
            }
            let claimed = movie.header.nextTrackID
            let id = claimed > last + 1 && claimed < UInt32.max - 1 ? claimed : last + 1
            change = ChapterTrack.Change(removedTracks: removed, track: track, trackID: id)
            self.chapters = track.chapters
            let nero = NeroChapters(fitting: track.chapters)
            self.userData = NeroChapters.userData(userData, replacingWith: nero)
            warning = ChapterTrack.neroLimitWarning(count: track.chapters.count)
        }

        /// Where the movie ends in seconds: its longest track but the chapter tracks, as
        /// probe measures it (mvhd's duration when a little longer, as probe allows).
        static func end(of movie: Movie, without removed: Set<UInt32>, source: some ByteSource, name: String) throws
            -> Double {
            var longest = 0.0
            for track in movie.tracks where !removed.contains(track.trackID) {
                longest = max(longest, try AudioExtractor.trackReport(track, movie: movie, source: source,
                                                                      name: name, describingCutTracks: false).duration)
            }
            let claimed = movie.header.timescale == 0 ? 0
                : Double(movie.header.duration) / Double(movie.header.timescale)
            return claimed > longest && claimed - longest <= 1 ? claimed : longest
        }
    }

    /// The tags and chapters of `source` as ``edit(_:applying:dryRun:rewritingLinkedFiles:)``
    /// would leave them, without writing (a dry run over any byte source, nothing touching a
    /// file system): with no changes, what `tag FILE` lists. Covers that `changes` adds are
    /// checked as an edit checks them; ones streamed from a file (`TagImage.streamed`) are
    /// not read.
    ///
    /// - Throws: ``RemuxError``, as a dry run of an edit throws (not an MP4, a `moov` too
    ///   large, chapters that do not fit the movie).
    public static func list(_ source: some ByteSource, applying changes: TagChanges = TagChanges()) throws
        -> TagWriteResult {
        var chapters: [Chapter]??
        if changes.removingChapters { chapters = .some(nil) }
        if let list = changes.chapters { chapters = .some(list) }
        return try naming(source.name) {
            try Planned(source, shown: source.name, chapters: chapters) { changes.apply(to: &$0) }.result
        }
    }

    /// An edit planned, nothing written: the file's layout, its tags before and after the
    /// change, the new `udta` and chapter track, and the result a dry run reports.
    struct Planned {
        var layout: Layout
        var before: ItemList
        var tags: ItemList
        var newUserData: [UInt8]?
        var trackChange: ChapterTrack.Change?
        var result: TagWriteResult

        init(_ input: any ByteSource, shown path: String, chapters: [Chapter]??,
             _ change: (inout ItemList) throws -> Void) throws {
            // Large covers the edit keeps stay in the file: copied by the writers, never held.
            var layout = try Layout(input, leavingCovers: true)
            var before = ItemList(userData: layout.userData ?? [])
            if !layout.keptCovers.isEmpty {
                if let marked = layout.markingKeptCovers(before) {
                    before = marked
                } else {
                    layout = try Layout(input)
                    before = ItemList(userData: layout.userData ?? [])
                }
            }
            let movieSource = layout.movieSource(input)
            var tags = before
            try change(&tags)
            tags.warnings = []
            try checkNewImages(tags, before: before, shown: path)
            var newUserData = tags.userData(replacingIn: layout.userData)
            var chapterEdit: ChapterEdit?
            if let chapters {
                let edit = try ChapterEdit(chapters, input: movieSource, userData: newUserData, name: path)
                newUserData = edit.userData
                chapterEdit = edit
            }
            var result = TagWriteResult(tags: tags, method: .none, warnings: before.warnings)
            if let chapterEdit {
                result.chapters = chapterEdit.chapters
                if let warning = chapterEdit.warning { result.warnings.append(warning) }
            } else if let movie = try? Movie(reading: movieSource) {
                result.chapters = Chapters.read(movie, source: input)
            }
            var trackChange = chapterEdit?.change
            // The same chapters again: both forms already hold them (chpl through the udta
            // compared below, the chapter track here), so nothing is written.
            if let chapterEdit, trackChange != nil, newUserData == layout.userData,
               let movie = try? Movie(reading: movieSource),
               Chapters.fromChapterTrack(movie, source: movieSource) == chapterEdit.chapters {
                trackChange = nil
            }
            self.layout = layout
            self.before = before
            self.tags = tags
            self.newUserData = newUserData
            self.trackChange = trackChange
            self.result = result
        }
    }

    static func edit(_ path: String, dryRun: Bool, stoppingAfterWrite stop: Int?, chapters: [Chapter]??,
                     rewritingLinkedFiles: Bool = true,
                     _ change: (inout ItemList) throws -> Void) throws -> TagWriteResult {
        let target = resolvedPath(path)
        // An earlier edit of a linked file stopped while copying its new version back: the
        // file is part old, part new until that copy is finished, whatever this run is for.
        let finished = try finishInterruptedCopy(of: target, shown: path)
        let input = try InputFile(path: target, name: path)
        // Held until `input` closes, after the write: a second edit of the file waits for none
        // and fails at once (fileBusy) rather than interleave its writes with this one's.
        let file = dryRun ? nil : try lockForEditing(input, at: target, shown: path)
        let leftovers = dryRun ? [] : removeStaleTemporaries(of: target)
        let planned = try Planned(input, shown: path, chapters: chapters, change)
        let layout = planned.layout
        let newUserData = planned.newUserData
        let before = planned.before
        let tags = planned.tags
        let trackChange = planned.trackChange
        var result = planned.result
        result.warnings = finished + leftovers + result.warnings
        if dryRun || (newUserData == layout.userData && trackChange == nil) { return result }
        if let at = before.unreadableFrom {
            throw RemuxError(.invalidInput, "\(path): the tags are damaged at byte \(at) of its udta (a box there does "
                             + "not fit its parent), where what follows cannot be told apart; tags are not written "
                             + "(the file is left as it was)")
        }
        try checkWritable(target, shown: path)
        guard let file else { return result }
        let images = try StreamedImages(tags, input: input, shown: path)
        do {
            if let writes = try TagRewritePlan.inPlaceEdit(boxes: layout.boxes, movieBox: layout.movieBox,
                                                           userData: newUserData, chapters: trackChange,
                                                           streamedImages: images.plan) {
                // The write that makes the new moov the only one: the old moov's type turned free.
                let moovType = (layout.boxes.first { $0.type == "moov" }?.offset ?? 0) + 4
                let commit = writes.firstIndex { $0.offset == moovType } ?? writes.count - 1
                let cleared = try writeInPlace(writes, commit: commit, to: target, shown: path, file: file,
                                               images: images.files, stop: stop)
                var written = result
                written.warnings += cleared
                written.method = .inPlace
                return written
            }
        } catch let error as ISOBMFFError {
            throw RemuxError(.invalidInput, "\(path): \(error.message)")
        }
        let plan: TagRewritePlan
        do {
            plan = try TagRewritePlan(boxes: layout.boxes, movieBox: layout.movieBox, userData: newUserData,
                                      chapters: trackChange, trailingBytes: layout.trailingBytes,
                                      streamedImages: images.plan)
        } catch let error as ISOBMFFError {
            // An offset that no longer fits its field is a file we cannot write (69); a box
            // that does not fit its parent, damage (65).
            throw RemuxError(error.code == .limitExceeded ? .unsupportedInput : .invalidInput,
                             "\(path): \(error.message)" + (error.code == .limitExceeded ? "" : " (the file is damaged; "
                                                           + "tags are not written into a damaged file)"),
                             parseError: error)
        }
        var written = result
        if file.links > 1 {
            guard rewritingLinkedFiles else {
                throw RemuxError(.cannotCreateOutput, "\(path) has \(file.links) names (hard links) and its padding "
                                 + "cannot hold the new tags: it was left as it was, as asked (otherwise the "
                                 + "file is rewritten beside itself and copied back, keeping its names)")
            }
            try rewriteKeepingLinks(input, plan: plan, to: target, shown: path, keeping: file, images: images.files)
            written.method = .copiedBack
        } else {
            try rewrite(input, plan: plan, to: target, shown: path, keeping: file, images: images.files)
            written.method = .rewrite
        }
        return written
    }

    /// Refuses (`.unsupportedInput`) a cover the edit adds that is not a whole image of its
    /// format (``TagImage/structuralProblem``): bytes that only start like one make a file
    /// players fail on. Covers already in the file are kept as they are.
    static func checkNewImages(_ tags: ItemList, before: ItemList, shown: String) throws {
        func images(_ list: ItemList) -> [TagImage] {
            list.items.flatMap { item -> [TagImage] in
                if case .images(let images) = item.value { return images }
                return []
            }
        }
        let old = images(before)
        for image in images(tags) where !old.contains(image) && image.streamed == nil {
            if let problem = image.structuralProblem {
                throw RemuxError(.unsupportedInput, "\(shown): a new cover is not a whole \(image.format.rawValue) "
                                 + "image (\(problem)); the file is left as it was")
            }
        }
    }

    /// Writes the plan beside `target` and publishes it over `target`, with its permissions.
    static func rewrite(_ input: InputFile, plan: TagRewritePlan, to target: String, shown: String,
                        keeping file: EditedFile, images: [ImageSource] = []) throws {
        let sink = try MovieFileSink(destination: target, overwrite: true, sources: [input] + images.map(\.file),
                                     keeping: file)
        try write(plan, from: input, to: sink, images: images, shown: shown)
        // Another program may have written or replaced the file meanwhile (a cooperating
        // edit is kept out by the lock): then this copy of the old file must not replace it,
        // up to the instant of the swap.
        try checkUnchanged(file, at: target, shown: shown)
        try sink.publish(replacing: file)
    }

    /// Writes the pieces of `plan` into `sink`: covers through the copy loop, padding from
    /// a fixed buffer of zeros.
    static func write(_ plan: TagRewritePlan, from input: InputFile, to sink: MovieFileSink, images: [ImageSource],
                      shown: String) throws {
        for piece in plan.pieces {
            switch piece {
            case .copy(let offset, let count):
                try sink.perform(.copy(source: 0, offset: offset, count: count))
            case .write(let bytes):
                try sink.perform(.write(bytes[...]))
            case .zeros(var count):
                while count > 0 {
                    let part = Int(min(count, UInt64(zeros.count)))
                    try sink.perform(.write(zeros[..<part]))
                    count -= UInt64(part)
                }
            case .image(let index, let count):
                // The copy loop's buffer (or the kernel's copy_file_range): never the whole image.
                guard index < images.count else { throw RemuxError(.invalidArgument, "\(shown): no image \(index)") }
                try sink.perform(.copy(source: 1 + index, offset: images[index].offset, count: count))
            case .shift(let offset, let count, let type):
                guard count <= Limits.maximumFragmentBoxSize else {
                    throw RemuxError(.unsupportedInput,
                                     "\(shown): a \(type) box of \(count) bytes is too large to edit")
                }
                let bytes = try input.bytes(at: offset, count: Int(count))
                let shifted: [UInt8]
                do {
                    shifted = try TagRewritePlan.shiftedFragmentBox(bytes, by: plan.delta, threshold: plan.threshold)
                } catch let error as ISOBMFFError {
                    throw RemuxError(.invalidInput, "\(shown): \(error.message)")
                }
                try sink.perform(.write(shifted[...]))
            }
        }
    }

    /// Zeros written in pieces of this size (padding, cleared bytes).
    static let zeros = [UInt8](repeating: 0, count: 1 << 16)

    /// Where the bytes of a streamed image are: a file and where in it they start.
    struct ImageSource {
        var file: InputFile
        var offset: UInt64
    }

    /// The covers the edit streams from their files (`TagImage.Streamed`): opened, each
    /// checked to be a whole image as it is read through a buffer of a fixed size
    /// (`ImageCheck`), and where each goes in the new `covr`. Held open until written, so
    /// that what is copied is the file that was checked (its length checked again). The
    /// covers the edited file holds and keeps (`keptAt`) are copied from `input`, unchecked.
    struct StreamedImages {
        var plan: [TagRewritePlan.StreamedImage] = []
        var files: [ImageSource] = []

        init(_ tags: ItemList, input: InputFile, shown: String) throws {
            var first = true
            for item in tags.items {
                guard case .images(let images) = item.value else { continue }
                for (n, image) in images.enumerated() {
                    guard let streamed = image.streamed else { continue }
                    // The new covers are one covr item (TagChanges sets them so).
                    guard first, item.key == .code("covr") else {
                        throw RemuxError(.invalidArgument, "\(shown): a streamed image outside the first covr item")
                    }
                    if let offset = streamed.keptAt {
                        guard offset <= input.length, streamed.count <= input.length - offset else {
                            throw RemuxError(.invalidArgument, "\(shown): a kept cover lies past the file's end")
                        }
                        plan.append(TagRewritePlan.StreamedImage(dataBox: n, count: streamed.count))
                        files.append(ImageSource(file: input, offset: offset))
                        continue
                    }
                    let file = try InputFile(path: streamed.path)
                    guard file.length == streamed.count else {
                        throw RemuxError(.ioError, "\(streamed.path) changed since it was checked (it has "
                                         + "\(file.length) bytes, not \(streamed.count)); \(shown) was left as it was")
                    }
                    if let problem = try TagFile.imageProblem(in: file, format: image.format) {
                        throw RemuxError(.unsupportedInput, "\(shown): a new cover is not a whole "
                                         + "\(image.format.rawValue) image (\(problem)); the file is left as it was")
                    }
                    plan.append(TagRewritePlan.StreamedImage(dataBox: n, count: streamed.count))
                    files.append(ImageSource(file: file, offset: 0))
                }
                if item.key == .code("covr") { first = false }
            }
        }
    }

    /// What is wrong with the image in `file` as a `format` image (`ImageCheck`); nil when it
    /// is a whole one. Read through a buffer of 1 MiB, whatever the image's size.
    public static func imageProblem(in file: InputFile, format: TagImage.Format) throws -> String? {
        var check = ImageCheck(format)
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var offset: UInt64 = 0
        while offset < file.length {
            let count = Int(min(UInt64(buffer.count), file.length - offset))
            try buffer.withUnsafeMutableBytes { raw in
                try file.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[..<count]), at: offset)
            }
            check.consume(buffer[..<count])
            offset += UInt64(count)
        }
        return check.finish()
    }

    /// The top-level boxes of a file and its `moov`.
    struct Layout {
        var boxes: [BoxHeader]
        var movieBox: [UInt8]
        var userData: [UInt8]?
        /// Bytes after the last box, too few for a box header.
        var trailingBytes: UInt64 = 0
        /// The old `moov`'s header.
        var moov: BoxHeader
        /// The covers left in the file (``movieBoxLeavingCovers(_:_:)``): which `data` box
        /// of the first `udta/meta/ilst/covr` each fills, where its bytes are and how many.
        var keptCovers: [(dataBox: Int, offset: UInt64, count: UInt64)] = []

        /// The payloads of cover `data` boxes at least this large are left in the file.
        static let keptCoverSize: UInt64 = 64 << 10

        /// Reads the file's boxes and its `moov`; with `leavingCovers`, the large covers of
        /// the first `covr` item are left in the file (``keptCovers``, see
        /// ``movieBoxLeavingCovers(_:_:)``).
        init(_ input: any ByteSource, leavingCovers: Bool = false) throws {
            boxes = []
            var offset: UInt64 = 0
            var moov: BoxHeader?
            while offset < input.length {
                let available = input.length - offset
                // Fewer than 8 bytes after the last box cannot be a box: trailing garbage,
                // which players ignore (an iPhone left 2), kept byte for byte.
                if available < 8 && !boxes.isEmpty {
                    trailingBytes = available
                    break
                }
                let headerBytes = try input.bytes(at: offset, count: Int(min(available, 32)))
                var reader = ByteReader(headerBytes, fileOffset: offset)
                let header: BoxHeader
                do {
                    header = try BoxHeader(parsing: &reader, available: available, parentPath: "")
                } catch let error as ISOBMFFError {
                    // A file that is no MP4 at all (text, an image) says what it looks like.
                    throw FileSignature.explain(RemuxError(.invalidInput, "\(input.name): the box at byte \(offset) is "
                                                           + "damaged or cut short (\(error.message)); tags are not "
                                                           + "written into a damaged file", parseError: error),
                                                source: input)
                }
                if header.type == "moov" && moov == nil { moov = header }
                boxes.append(header)
                offset = header.end
                guard boxes.count <= Limits.maximumTopLevelBoxes else {
                    throw RemuxError(.unsupportedInput, "\(input.name): more than \(Limits.maximumTopLevelBoxes) "
                                     + "top-level boxes")
                }
            }
            guard let moov else { throw RemuxError(.invalidInput, "\(input.name) has no moov box: not an MP4 file") }
            guard moov.size <= Limits.maximumMovieBoxSize else {
                throw RemuxError(.unsupportedInput, "\(input.name): its moov of \(moov.size) bytes is too large")
            }
            if leavingCovers, let hollow = try Self.movieBoxLeavingCovers(input, moov) {
                movieBox = hollow.bytes
                keptCovers = hollow.covers
            } else {
                movieBox = try input.bytes(at: moov.offset, count: Int(moov.size))
            }
            self.moov = moov
            var reader = ByteReader(movieBox)
            userData = nil
            if let (_, payload) = try? reader.readBox(depth: 1) {
                var children = payload
                while userData == nil, let (child, _) = try? children.readBox(depth: 2) {
                    if child.type == "udta" { userData = children.bytes(of: child) }
                }
            }
        }
    }
}

extension TagFile.Layout {
    /// The `moov` at `moov` with the image bytes of the large JPEG and PNG covers (`data`
    /// types 13 and 14, at least ``keptCoverSize`` bytes) of its first
    /// `udta/meta/ilst/covr` left in the file, the sizes of `moov`, `udta`, `meta`, `ilst`,
    /// `covr` and those `data` boxes made smaller by what they lost, and where those bytes
    /// are: what `TagRewritePlan.splicing` puts back as `.image` pieces, so that an edit
    /// keeping the covers holds none of them (issue 28). Reads headers, then the `moov`
    /// but for those bytes. Nil (the `moov` is then read whole) for anything else: no such
    /// cover, a 64-bit or size-0 header on the way, a box that does not fit its parent, or
    /// a result that splicing would not turn back into the file's bytes (checked here, by
    /// reading them again), so that what is written is the file's `moov` byte for byte.
    static func movieBoxLeavingCovers(_ input: any ByteSource, _ moov: BoxHeader) throws
        -> (bytes: [UInt8], covers: [(dataBox: Int, offset: UInt64, count: UInt64)])? {
        /// The boxes filling `start..<end` of the file, from their headers; nil when one does
        /// not fit or has a 64-bit or size-0 header.
        func children(_ start: UInt64, _ end: UInt64) throws -> [BoxHeader]? {
            var boxes: [BoxHeader] = []
            var offset = start
            while offset < end {
                let available = end - offset
                guard available >= 8, boxes.count < Limits.maximumMetadataItems else { return nil }
                let bytes = try input.bytes(at: offset, count: Int(min(available, 16)))
                var reader = ByteReader(bytes, fileOffset: offset)
                guard let header = try? BoxHeader(parsing: &reader, available: available, parentPath: ""),
                      header.headerSize == 8, !header.extendsToEnd, header.size >= 8, header.end <= end else {
                    return nil
                }
                boxes.append(header)
                offset = header.end
            }
            return boxes
        }
        guard moov.headerSize == 8, !moov.extendsToEnd,
              let inMoov = try children(moov.offset + 8, moov.end),
              let udta = inMoov.first(where: { $0.type == "udta" }),
              let inUdta = try children(udta.offset + 8, udta.end),
              let meta = inUdta.first(where: { $0.type == "meta" }), meta.size >= 16 else { return nil }
        // As CopiedBoxSanitizer.metaChildren: a meta whose payload starts with hdlr is a plain
        // box (QuickTime's), else a full box (version and flags first). A wrong guess fails
        // the check at the end.
        let start = try input.bytes(at: meta.offset + 8, count: 8)
        let metaStart = meta.offset + (start[4...].elementsEqual("hdlr".utf8) ? 8 : 12)
        guard let inMeta = try children(metaStart, meta.end),
              let ilst = inMeta.first(where: { $0.type == "ilst" }),
              let items = try children(ilst.offset + 8, ilst.end),
              let covr = items.first(where: { $0.type == "covr" }),
              let inCovr = try children(covr.offset + 8, covr.end) else { return nil }
        var covers: [(dataBox: Int, offset: UInt64, count: UInt64)] = []
        for (n, data) in inCovr.filter({ $0.type == "data" }).enumerated() where data.size >= 16 + keptCoverSize {
            let type = try input.bytes(at: data.offset + 8, count: 4)
            guard type[1] == 0, type[2] == 0, type[3] == 13 || type[3] == 14 else { continue }
            covers.append((n, data.offset + 16, data.size - 16))
        }
        guard !covers.isEmpty else { return nil }
        let removed = covers.reduce(UInt64(0)) { $0 + $1.count }  // Inside moov: no overflow.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(moov.size - removed))
        var at = moov.offset
        for cover in covers {
            bytes += try input.bytes(at: at, count: Int(cover.offset - at))
            at = cover.offset + cover.count
        }
        bytes += try input.bytes(at: at, count: Int(moov.end - at))
        func setSize(_ size: UInt64, at position: UInt64) {
            let at = Int(position)  // Inside `bytes`, a header the walk above read.
            for i in 0..<4 { bytes[at + i] = UInt8(truncatingIfNeeded: size >> (24 - 8 * UInt64(i))) }
        }
        for box in [moov, udta, meta, ilst, covr] { setSize(box.size - removed, at: box.offset - moov.offset) }
        var before: UInt64 = 0
        for cover in covers {
            setSize(16, at: cover.offset - 16 - moov.offset - before)
            before += cover.count
        }
        // The check: splicing the covers back gives the file's moov, byte for byte.
        let pieces: [TagRewritePlan.Piece]
        do {
            pieces = try TagRewritePlan.splicing(bytes, images: covers.map {
                TagRewritePlan.StreamedImage(dataBox: $0.dataBox, count: $0.count)
            })
        } catch {
            return nil
        }
        var position = moov.offset
        for piece in pieces {
            switch piece {
            case .write(let part):
                guard position + UInt64(part.count) <= moov.end,
                      try input.bytes(at: position, count: part.count) == part else { return nil }
            case .image(let index, let count):
                guard covers[index].offset == position, covers[index].count == count else { return nil }
            default:
                return nil
            }
            position += piece.byteCount
        }
        return position == moov.end ? (bytes, covers) : nil
    }

    /// `list` (read from this layout's `udta`) with the kept covers marked as theirs
    /// (`TagImage.Streamed(keptAt:count:)`); nil when its first `covr` item is not the
    /// images they are (read the `moov` whole then).
    func markingKeptCovers(_ list: ItemList) -> ItemList? {
        guard let index = list.items.firstIndex(where: { $0.key == .code("covr") }),
              !list.items[index].isDamaged, case .images(var images) = list.items[index].value else { return nil }
        for cover in keptCovers {
            guard cover.dataBox < images.count, images[cover.dataBox].bytes.isEmpty,
                  images[cover.dataBox].streamed == nil else { return nil }
            images[cover.dataBox].streamed = TagImage.Streamed(keptAt: cover.offset, count: cover.count)
        }
        var marked = list
        marked.items[index].value = .images(images)
        return marked
    }

    /// The file as `Movie` reads it, without the kept covers' bytes: the `moov` read here
    /// (smaller), then a `free` box where the covers' bytes are, so that every other box
    /// stays at its offset. Reads past the `moov` come from the file.
    struct Source: ByteSource {
        var input: any ByteSource
        var movieBox: [UInt8]
        var moov: BoxHeader

        var length: UInt64 { input.length }
        var name: String { input.name }

        func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws {
            let gapStart = moov.offset + UInt64(movieBox.count)
            var done = 0
            while done < buffer.count {
                let at = offset + UInt64(done)
                let part: UnsafeMutableRawBufferPointer
                if at < moov.offset || at >= moov.end || movieBox.count == Int(moov.size) {
                    let end = at < moov.offset ? moov.offset : input.length
                    part = UnsafeMutableRawBufferPointer(rebasing: buffer[done..<min(buffer.count, done + Int(end - at))])
                    try input.read(into: part, at: at)
                } else if at < gapStart {
                    let from = Int(at - moov.offset)
                    let count = min(buffer.count - done, movieBox.count - from)
                    part = UnsafeMutableRawBufferPointer(rebasing: buffer[done..<(done + count)])
                    movieBox.withUnsafeBytes { bytes in
                        part.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[from..<(from + count)]))
                    }
                } else {
                    var header = BoxWriter(capacity: 8)
                    header.write(UInt32(truncatingIfNeeded: moov.end - gapStart))  // Under the moov's 32-bit size.
                    header.write(FourCC("free"))
                    let count = min(buffer.count - done, Int(moov.end - at))
                    part = UnsafeMutableRawBufferPointer(rebasing: buffer[done..<(done + count)])
                    for i in 0..<count {
                        let inGap = Int(at - gapStart) + i
                        part[i] = inGap < 8 ? header.bytes[inGap] : 0
                    }
                }
                done += part.count
            }
        }
    }

    /// What `Movie` reads: the file, or ``Source`` when covers are kept.
    func movieSource(_ input: any ByteSource) -> any ByteSource {
        keptCovers.isEmpty ? input : Source(input: input, movieBox: movieBox, moov: moov)
    }
}

/// Tag changes to make, in this order: remove everything, remove keys, remove the covers,
/// set items (in order), set the covers. ``TagFile/edit(_:dryRun:_:)`` takes them through
/// ``apply(to:)``; extraction, remux and mux apply them to their output
/// (``ExtractionOptions/tags``, ``RemuxOptions/tags``, ``MuxOptions/tags``), after
/// `keepMetadata` has kept or dropped the input's tags.
public struct TagChanges: Sendable, Equatable {
    /// Remove every item first but `----:com.apple.iTunes:iTunSMPB`, the encoder delay and
    /// padding players need for gapless playback (not a tag the user sees; ``removals`` can
    /// still name it).
    public var removingAll = false
    /// The one item ``removingAll`` keeps.
    static let gaplessKey = TagKey.freeform(mean: "com.apple.iTunes", name: "iTunSMPB")
    /// Keys to remove.
    public var removals: [TagKey] = []
    /// Remove the cover images.
    public var removingCovers = false
    /// Items to set, in order: each replaces the items of its key.
    public var settings: [ItemList.Item] = []
    /// Cover images that replace any others, in order; none to leave the covers alone.
    public var covers: [TagImage] = []
    /// Chapters that replace the file's (both forms: the QuickTime chapter track and Nero's
    /// `chpl`, see ``TagFile/edit(_:applying:dryRun:rewritingLinkedFiles:)``); nil to leave them alone.
    public var chapters: [Chapter]?
    /// Remove the chapters (both forms).
    public var removingChapters = false

    /// No changes.
    public init() {}

    /// Sets `key` (a friendly key such as `title`, a four-character code such as `©nam`, or
    /// `----:MEAN:NAME`) to `value`, parsed for the key's type (`track` takes `3/12`,
    /// `compilation` takes `true`), after the settings before it.
    ///
    /// Throws `.invalidArgument` naming the key or value when either cannot be parsed:
    /// nothing is turned into a default.
    public mutating func set(_ key: String, to value: String) throws(RemuxError) {
        do throws(TagError) {
            let parsed = try TagKey.parse(key)
            settings.append(ItemList.Item(key: parsed, value: try TagValue(parsing: value, for: parsed)))
        } catch {
            throw RemuxError(.invalidArgument, error.message)
        }
    }

    /// Adds the JPEG or PNG image at `path` to the covers the edit writes (they replace the
    /// file's). The image is checked whole (JPEG markers to SOS and EOI, PNG chunks with
    /// their CRCs) through a fixed buffer, and stays in its file: ``TagFile`` copies it as it
    /// writes, so a cover costs no memory of its size.
    ///
    /// Throws `.unsupportedInput` for a file that is neither, or not whole, or larger than
    /// ``maximumCoverSize``; the errors of opening it otherwise.
    public mutating func addCover(contentsOf path: String) throws {
        covers.append(try Self.cover(at: path, streamed: true))
    }

    /// The largest cover accepted: 64 MiB. Not a limit of ours (a cover costs no memory of
    /// its size) but of the readers: mutagen, AtomicParsley and FFmpeg hold a whole `covr`
    /// item in memory, and iTunes-era readers cap artwork well below this; a larger image
    /// makes a file most players choke on.
    public static let maximumCoverSize: UInt64 = 64 << 20

    /// The checked cover at `path` (as ``addCover(contentsOf:)`` checks it): left in its file
    /// when `streamed` (only ``TagFile`` copies such an image as it writes), else read into
    /// memory (for extraction, remux and mux, whose writer takes bytes).
    public static func cover(at path: String, streamed: Bool) throws -> TagImage {
        let file = try InputFile(path: path)
        guard file.length <= maximumCoverSize else {
            throw RemuxError(.unsupportedInput, "\(path): a cover image of \(file.length) bytes is too large "
                             + "(at most 64 MiB)")
        }
        let head = try file.bytes(at: 0, count: Int(min(file.length, 8)))
        guard let format = TagImage(bytes: head)?.format else {
            let start = head.prefix(4).map(hex).joined(separator: " ")
            throw RemuxError(.unsupportedInput, "\(path) is neither a JPEG nor a PNG image (it starts with "
                             + "\(start)); covers must be one of those")
        }
        if let problem = try TagFile.imageProblem(in: file, format: format) {
            throw RemuxError(.unsupportedInput, "\(path) is not a whole \(format.rawValue) image "
                             + "(\(problem)); covers must be")
        }
        return streamed
            ? TagImage(format: format, streamed: TagImage.Streamed(path: path, count: file.length))
            : TagImage(format: format, bytes: try file.bytes(at: 0, count: Int(file.length)))
    }

    /// Whether there is nothing to change.
    public var isEmpty: Bool {
        !removingAll && removals.isEmpty && !removingCovers && settings.isEmpty && covers.isEmpty && chapters == nil
            && !removingChapters
    }

    /// Makes the changes to `tags`.
    public func apply(to tags: inout ItemList) {
        if removingAll { tags.items.removeAll { $0.key != Self.gaplessKey } }
        for key in removals { tags.remove(key) }
        if removingCovers { tags.remove(.code("covr")) }
        for item in settings { tags.set(item.value, for: item.key) }
        if !covers.isEmpty { tags.set(.images(covers), for: .code("covr")) }
    }

    /// `userData` (a whole `udta`, or nil) with the changes made; unchanged when there are none.
    /// Streamed covers (`TagImage.Streamed`) are read into memory here: only
    /// ``TagFile/edit(_:applying:dryRun:rewritingLinkedFiles:)`` copies them from their files as it writes.
    func userData(_ userData: [UInt8]?) throws -> [UInt8]? {
        guard !isEmpty else { return userData }
        var changes = self
        for (n, image) in covers.enumerated() {
            guard let streamed = image.streamed else { continue }
            let file = try InputFile(path: streamed.path)
            guard file.length == streamed.count, let count = Int(exactly: file.length) else {
                throw RemuxError(.ioError, "\(streamed.path) changed since it was checked")
            }
            changes.covers[n] = TagImage(format: image.format, bytes: try file.bytes(at: 0, count: count))
            if let problem = changes.covers[n].structuralProblem {
                throw RemuxError(.unsupportedInput, "\(streamed.path) is not a whole \(image.format.rawValue) image "
                                 + "(\(problem)); covers must be")
            }
        }
        var tags = ItemList(userData: userData ?? [])
        changes.apply(to: &tags)
        return tags.userData(replacingIn: userData)
    }
}
