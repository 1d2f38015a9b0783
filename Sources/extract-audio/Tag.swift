// `tag FILE…`, and the tag options (--set, --cover, --chapters-from) extraction, remux and
// mux take too.
import AudioRemux
import ISOBMFF

/// The tag changes as given on the command line; `changes()` checks them.
struct TagOptions: Sendable {
    /// Applied in this order: --remove-all, --remove, --remove-cover, --set (in the order
    /// given), --cover (all of them replace the covers).
    var sets: [(key: String, value: String)]
    var removals: [String]
    var removeAll: Bool
    var covers: [String]
    var removeCover: Bool
    var chaptersFrom: String?
    var removeChapters: Bool

    init(_ line: ParsedLine) {
        sets = line.keyValues(.set)
        removals = line.texts(TagCommand.remove)
        removeAll = line.has(TagCommand.removeAll)
        covers = line.texts(.cover)
        removeCover = line.has(TagCommand.removeCover)
        chaptersFrom = line.text(.chaptersFrom)
        removeChapters = line.has(TagCommand.removeChapters)
    }

    /// The changes the options ask for, checked: keys and values (64), images (66, 69).
    /// With `streamingCovers` (the `tag` command) the covers stay in their files, checked
    /// through a buffer of a fixed size and copied as the file is written
    /// (`TagImage.Streamed`); otherwise they are read into memory.
    func changes(streamingCovers: Bool = false) throws -> TagChanges {
        var changes = TagChanges()
        changes.removingAll = removeAll
        changes.removingCovers = removeCover
        do {
            changes.removals = try removals.map { try TagKey.parse($0) }
            for (text, valueText) in sets {
                let key = try TagKey.parse(text)
                changes.settings.append(ItemList.Item(key: key, value: try TagValue(parsing: valueText, for: key)))
            }
        } catch let error as TagError {
            throw RemuxError(bridging: error)
        }
        changes.removingChapters = removeChapters
        if let path = chaptersFrom {
            let file = try InputFile(path: path)
            guard file.length <= 16 << 20 else {
                throw RemuxError(.invalidArgument, "\(path): a chapter file of \(file.length) bytes is too large")
            }
            let text = String(decoding: try file.bytes(at: 0, count: Int(file.length)), as: UTF8.self)
            let chapters: [Chapter]
            do {
                chapters = try ChapterFile.parse(text)
            } catch {
                throw RemuxError(.invalidArgument, "\(path): \(error.message)")
            }
            guard chapters.count <= Limits.maximumChapterCount else {
                throw RemuxError(.invalidArgument, "\(path): \(chapters.count) chapters, more than the "
                                 + "\(Limits.maximumChapterCount) written")
            }
            changes.chapters = chapters
        }
        for path in covers {
            changes.covers.append(try TagChanges.cover(at: path, streamed: streamingCovers))
        }
        return changes
    }

    /// The checked changes; when one is refused, the error reported (one line, or a JSON
    /// object) and its status thrown.
    func checkedChanges(json: Bool, streamingCovers: Bool = false) throws(ExitStatus) -> TagChanges {
        do {
            return try changes(streamingCovers: streamingCovers)
        } catch {
            throw report(error, input: nil, output: nil, json: json)
        }
    }
}

/// `extract-audio tag FILE…`: prints each file's tags, or changes them (`--set`, `--remove`,
/// `--remove-all`, `--cover`, `--remove-cover`) and prints them after the change. Keys,
/// values and images are checked once, before any file is touched; then each file is
/// judged alone, and the status is the first failure's.
struct TagCommand: CommandRunner {
    static let set = Option("--set", .keyValue("KEY=VALUE"), "set an item: a friendly key, a four-character code "
                            + "or ----:MEAN:NAME (repeatable)")
    static let remove = Option("--remove", .text("KEY"), "remove an item (repeatable)")
    static let removeAll = Option("--remove-all", "remove every item but the gapless information (iTunSMPB)")
    static let cover = Option("--cover", .text("IMAGE"), "replace the covers with this JPEG or PNG (repeatable)")
    static let removeCover = Option("--remove-cover", "remove the covers")
    static let chaptersFrom = Option("--chapters-from", .text("FILE"), "replace the chapters (mp4chaps lines or "
                                     + ";FFMETADATA1), in both forms")
    static let removeChapters = Option("--remove-chapters", "remove the chapters (the chapter track and chpl)")
    static let dryRun = Option("--dry-run", "print the tags the change would give; write nothing")
    static let noLinkRewrite = Option("--no-link-rewrite", "refuse (73) a file with hard links whose padding cannot "
                                      + "hold the edit, rather than rewrite it and copy it back over itself")
    static let jsonOption = Option("--json", "print one JSON object per file on stdout (tags, chapters, or the error)")
    static let quietOption = Option("--quiet", short: "-q", "with changes, print only errors and warnings")

    static let options: [Option] = [
        set, remove, removeAll, cover, removeCover, chaptersFrom, removeChapters, dryRun, noLinkRewrite, jsonOption,
        quietOption,
    ]
    static let synopsis = [
        "tag [--set KEY=VALUE]… [--remove KEY]… [--remove-all] [--cover IMAGE]…",
        "    [--remove-cover] [--chapters-from FILE | --remove-chapters] [--dry-run]",
        "    [--no-link-rewrite] [--json] [--quiet] FILE…",
    ]
    static let summary = "print or change the tags, cover art and chapters of files, in place"
    static let details = """
        tag FILE… prints each file's tags (iTunes-style items in moov/udta/meta/ilst): friendly
        keys in text; with --json one object per file, each item with its friendly key (or
        null), raw code, type and typed value. --set KEY=VALUE (repeatable) sets an item, KEY
        being a friendly key (title, artist, album, album_artist, date, genre, track, disc,
        comment, composer, lyrics, grouping, bpm, compilation, sort_title, copyright, encoder,
        description, media_kind, … see docs/cli.md), a four-character code (©nam) or
        ----:MEAN:NAME; track and disc take N or N/TOTAL (0-65535), compilation true or false.
        --remove KEY, --remove-all (all but the gapless information, iTunSMPB, which --remove
        ----:com.apple.iTunes:iTunSMPB removes); --cover IMAGE (JPEG or PNG, repeatable)
        replaces the covers, --remove-cover drops them. --chapters-from FILE replaces the
        chapters (mp4chaps lines "HH:MM:SS.mmm Title" or an ;FFMETADATA1 file; at most 4096) in
        both forms: a QuickTime chapter track (replacing any) and Nero's chpl (at most 255: past
        that, the track only, with a warning); --remove-chapters removes both. --dry-run prints
        the tags the change would give and writes nothing. Unknown items are kept byte for byte.
        The file is rewritten beside itself and moved into place atomically (samples and every
        other box copied unchanged), leaving padding after moov; the next edit that fits that
        padding is written in place, in steps that each leave the old or the new tags (see
        docs/cli.md). A file with hard links that needs a rewrite is rewritten beside itself,
        synced, then copied back over itself, keeping its names; if that copy is interrupted,
        the next tag run on the file finishes it first. --no-link-rewrite refuses such a file instead
        (73). Covers (at most 64 MiB each) are copied from their files, never held in memory
        whole. Each file is judged alone.
        """

    var files: [String]
    var tags: TagOptions
    var dryRun: Bool
    var noLinkRewrite: Bool
    var json: Bool
    var quiet: Bool

    init(_ line: ParsedLine) throws(UsageError) {
        files = line.operands
        tags = TagOptions(line)
        dryRun = line.has(Self.dryRun)
        noLinkRewrite = line.has(Self.noLinkRewrite)
        json = line.has(.json)
        quiet = line.has(.quiet)
        guard !files.isEmpty else {
            throw UsageError(message: "tag takes one or more files: extract-audio tag [--set KEY=VALUE]… FILE…")
        }
        try Operand.refuseStandardStreams(files, "tag edits files, not standard input ('-')")
        if tags.removeChapters && tags.chaptersFrom != nil {
            throw UsageError(message: "use --chapters-from (which replaces the chapters) or --remove-chapters, "
                             + "not both")
        }
        if tags.removeCover && !tags.covers.isEmpty {
            throw UsageError(message: "use --cover (which replaces the covers) or --remove-cover, not both")
        }
    }

    func run() -> ExitStatus {
        let changes: TagChanges
        do {
            changes = try tags.checkedChanges(json: json, streamingCovers: true)
        } catch {
            return error
        }
        var firstFailure: ExitStatus?
        for (n, file) in files.enumerated() {
            do {
                // Without changes, a dry run that changes nothing: the tags as they are.
                let result = try TagFile.edit(file, applying: changes, dryRun: dryRun || changes.isEmpty,
                                              rewritingLinkedFiles: !noLinkRewrite)
                for warning in result.warnings { Terminal.warning("\(file): \(warning)") }
                if json {
                    Terminal.line(Self.json(result, file: file, changed: !changes.isEmpty, dryRun: dryRun)
                        .compactText)
                } else if !quiet || changes.isEmpty {
                    if files.count > 1 { Terminal.line((n > 0 ? "\n" : "") + "file: \(file)") }
                    Terminal.line(Self.text(result.tags))
                    for chapter in result.chapters {
                        Terminal.line("chapter \(Self.clock(chapter.start)) \(chapter.title)")
                    }
                    if !changes.isEmpty && !quiet {
                        Terminal.write(dryRun ? "dry run: \(file) is unchanged\n"
                                       : result.method == .none ? "\(file): the tags were already these\n"
                                       : "wrote \(file) (\(Self.describe(result.method)))\n", to: 2)
                    }
                }
            } catch {
                let status = report(error, input: file, output: nil, json: json)
                firstFailure = firstFailure ?? status
            }
        }
        return firstFailure ?? .success
    }

    static func describe(_ method: TagWriteResult.Method) -> String {
        switch method {
        case .rewrite: return "rewritten beside and moved into place"
        case .inPlace: return "edited in place, in the padding after moov"
        case .copiedBack: return "rewritten beside and copied back over it, keeping its hard links"
        case .none: return "unchanged"
        }
    }

    /// `HH:MM:SS.mmm`, as mp4chaps writes chapter starts.
    static func clock(_ seconds: Double) -> String {
        MediaTime.clock(seconds: seconds)
    }

    /// One line per item: the friendly key where there is one, else the raw code.
    static func text(_ tags: ItemList) -> String {
        guard !tags.items.isEmpty else { return "(no tags)" }
        return tags.items.map { item in
            "\(item.key.friendlyName ?? item.key.description): \(item.value.displayText)"
        }.joined(separator: "\n")
    }

    static func json(_ result: TagWriteResult, file: String, changed: Bool, dryRun: Bool) -> JSON {
        JSON.object([
            ("input", .string(file)), ("status", .string("ok")),
            ("written", .string(dryRun && changed ? "dry_run" : result.method.rawValue)),
            ("tags", .array(result.tags.items.map(json))),
            ("chapters", .array(result.chapters.map { chapter in
                .object([("start", .double(chapter.start)), ("title", .string(chapter.title))])
            })),
            ("warnings", .array(result.warnings.map(JSON.string))),
        ])
    }

    /// An item: its friendly key (or null), its raw code, its type and typed value.
    static func json(_ item: ItemList.Item) -> JSON {
        let (type, value): (String, JSON)
        switch item.value {
        case .text(let strings):
            (type, value) = ("text", strings.count == 1 ? .string(strings[0]) : .array(strings.map(JSON.string)))
        case .integer(let number):
            (type, value) = ("integer", .int(Int(clamping: number)))
        case .flag(let on):
            (type, value) = ("flag", .bool(on))
        case .pair(let number, let total):
            (type, value) = ("pair", .object([("number", .int(Int(number))), ("total", .int(Int(total)))]))
        case .genreNumber(let number):
            (type, value) = ("genre_number", .object([("number", .int(Int(number))),
                                                      ("name", .optional(TagValue.genreName(number)))]))
        case .images(let images):
            (type, value) = ("images", .array(images.map { image in
                .object([("format", .string(image.format.rawValue)), ("bytes", .int(Int(clamping: image.byteCount)))])
            }))
        case .data(let values):
            (type, value) = ("data", .array(values.map { data in
                .object([("data_type", .int(Int(data.dataType))), ("bytes", .int(data.bytes.count)),
                         ("text", .optional(data.text))])
            }))
        }
        return .object([("key", .optional(item.key.friendlyName)), ("code", .string(item.key.description)),
                        ("type", .string(type)), ("value", value)])
    }
}
