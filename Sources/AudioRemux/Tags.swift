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
    public static func read(_ path: String) throws(RemuxError) -> ItemList {
        try naming(path) { ItemList(userData: try Layout(InputFile(path: path)).userData ?? []) }
    }

    /// The chapters of the file at `path`, by start, as ``edit(_:applying:dryRun:rewritingLinkedFiles:)-3tyg1`` reads
    /// them (the QuickTime chapter track, else Nero's `chpl`); empty when it has none.
    public static func chapters(of path: String) throws(RemuxError) -> [Chapter] {
        try edit(path, applying: TagChanges(), dryRun: true).chapters
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
    /// ``edit(_:dryRun:_:)-(_,_,(ItemList)->Void)`` does.
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
                            rewritingLinkedFiles: Bool = true) throws(RemuxError) -> TagWriteResult {
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
            let removed = Set(Track.chapterTracks(in: movie.tracks).map(\.trackID))
            guard let chapters else {
                change = removed.isEmpty ? nil : ChapterTrack.Change(tracks: movie.tracks, removedTracks: removed,
                                                                     track: nil, trackID: 0)
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
            change = ChapterTrack.Change(tracks: movie.tracks, removedTracks: removed, track: track, trackID: id)
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

    /// The tags and chapters of `source` as ``edit(_:applying:dryRun:rewritingLinkedFiles:)-3tyg1``
    /// would leave them, without writing (a dry run over any byte source, nothing touching a
    /// file system): with no changes, what `tag FILE` lists. Covers that `changes` adds are
    /// checked as an edit checks them; ones streamed from a file (`TagImage.streamed`) are
    /// not read.
    ///
    /// - Throws: ``RemuxError``, as a dry run of an edit throws (not an MP4, a `moov` too
    ///   large, chapters that do not fit the movie).
    public static func list(_ source: some ByteSource, applying changes: TagChanges = TagChanges()) throws(RemuxError)
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
    public static func imageProblem(in file: InputFile, format: TagImage.Format) throws(RemuxError) -> String? {
        var check = ImageCheck(format)
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var offset: UInt64 = 0
        while offset < file.length {
            let count = Int(min(UInt64(buffer.count), file.length - offset))
            try bridged {
                try buffer.withUnsafeMutableBytes { raw in
                    try file.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[..<count]), at: offset)
                }
            }
            check.consume(buffer[..<count])
            offset += UInt64(count)
        }
        return check.finish()
    }
}
