import AudioRemux
import ISOBMFF

/// `extract-audio tag FILE…`: prints each file's tags, or changes them (`--set`, `--remove`,
/// `--remove-all`, `--cover`, `--remove-cover`) and prints them after the change. Keys,
/// values and images are checked once, before any file is touched; then each file is
/// judged alone, and the status is the first failure's.
enum TagCommand {
    /// The changes the options ask for, checked: keys and values (64), images (66, 69).
    static func changes(_ arguments: Arguments) throws -> TagChanges {
        var changes = TagChanges()
        changes.removingAll = arguments.removeAllTags
        changes.removingCovers = arguments.removeCover
        do {
            changes.removals = try arguments.tagRemovals.map { try TagKey.parse($0) }
            for (text, valueText) in arguments.tagSets {
                let key = try TagKey.parse(text)
                changes.settings.append(ItemList.Item(key: key, value: try TagValue(parsing: valueText, for: key)))
            }
        } catch let error as TagError {
            throw RemuxError(.invalidArgument, error.message)
        }
        changes.removingChapters = arguments.removeChapters
        if let path = arguments.chaptersFrom {
            let file = try InputFile(path: path)
            guard file.length <= 16 << 20 else {
                throw RemuxError(.invalidArgument, "\(path): a chapter file of \(file.length) bytes is too large")
            }
            let text = String(decoding: try file.bytes(at: 0, count: Int(file.length)), as: UTF8.self)
            let chapters: [Chapter]
            do {
                chapters = try ChapterFile.parse(text)
            } catch let error as RemuxError {
                throw RemuxError(.invalidArgument, "\(path): \(error.message)")
            }
            guard chapters.count <= Limits.maximumChapterCount else {
                throw RemuxError(.invalidArgument, "\(path): \(chapters.count) chapters, more than the "
                                 + "\(Limits.maximumChapterCount) written")
            }
            changes.chapters = chapters
        }
        for path in arguments.covers {
            let file = try InputFile(path: path)
            guard file.length <= 64 << 20 else {
                throw RemuxError(.unsupportedInput, "\(path): a cover image of \(file.length) bytes is too large "
                                 + "(at most 64 MiB)")
            }
            let bytes = try file.bytes(at: 0, count: Int(file.length))
            guard let image = TagImage(bytes: bytes) else {
                let head = bytes.prefix(4).map { hex($0) }.joined(separator: " ")
                throw RemuxError(.unsupportedInput, "\(path) is neither a JPEG nor a PNG image (it starts with "
                                 + "\(head)); covers must be one of those")
            }
            if let problem = image.structuralProblem {
                throw RemuxError(.unsupportedInput, "\(path) is not a whole \(image.format.rawValue) image "
                                 + "(\(problem)); covers must be")
            }
            changes.covers.append(image)
        }
        return changes
    }

    static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 15)]])
    }

    static func run(_ files: [String], arguments: Arguments) -> ExitStatus {
        let changes: TagChanges
        do {
            changes = try Self.changes(arguments)
        } catch {
            return report(error, input: nil, output: nil, json: arguments.json)
        }
        var firstFailure: ExitStatus?
        for (n, file) in files.enumerated() {
            do {
                // Without changes, a dry run that changes nothing: the tags as they are.
                let result = try TagFile.edit(file, applying: changes, dryRun: arguments.dryRun || changes.isEmpty)
                for warning in result.warnings { Terminal.warning("\(file): \(warning)") }
                if arguments.json {
                    Terminal.line(json(result, file: file, changed: !changes.isEmpty, dryRun: arguments.dryRun)
                        .compactText)
                } else if !arguments.quiet || changes.isEmpty {
                    if files.count > 1 { Terminal.line((n > 0 ? "\n" : "") + "file: \(file)") }
                    Terminal.line(text(result.tags))
                    for chapter in result.chapters {
                        Terminal.line("chapter \(clock(chapter.start)) \(chapter.title)")
                    }
                    if !changes.isEmpty && !arguments.quiet {
                        Terminal.write(arguments.dryRun ? "dry run: \(file) is unchanged\n"
                                       : result.method == .none ? "\(file): the tags were already these\n"
                                       : "wrote \(file) (\(describe(result.method)))\n", to: 2)
                    }
                }
            } catch {
                let status = report(error, input: file, output: nil, json: arguments.json)
                firstFailure = firstFailure ?? status
            }
        }
        return firstFailure ?? .success
    }

    static func describe(_ method: TagWriteResult.Method) -> String {
        switch method {
        case .rewrite: return "rewritten beside and moved into place"
        case .inPlace: return "edited in place, in the padding after moov"
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
                .object([("format", .string(image.format.rawValue)), ("bytes", .int(image.bytes.count))])
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
