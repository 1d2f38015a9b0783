import AudioRemux

/// The parsed command line.
struct Arguments {
    enum Mode: Equatable {
        /// One input to one output, or several inputs into `outputDirectory`.
        case extract(jobs: [Job])
        case probe(inputs: [String])
        /// Music under a video: `mux VIDEO --audio A… OUTPUT`.
        case mux(video: String, music: [String], output: String)
        /// `remux IN OUT.mp4`: every kept track, optionally cut (RemuxCommand.swift).
        case remux(input: String, output: String)
        case tag(files: [String])
        /// `concat IN… OUT` (Concat.swift); with `--file-list`, the inputs come from the list.
        case concat(inputs: [String], output: String)
        case help
        case version
    }

    struct Job: Equatable {
        var input: String
        var output: String
        /// Set when the natural output name was taken by an earlier input of the run: that
        /// input's path.
        var collidedWith: String?
    }

    /// The commands, for the table of the options each takes.
    enum Command: String {
        case extract = "extraction"
        case probe
        case mux
        case remux
        case tag
        case concat
    }

    /// The options each command takes (by their long name); any other is a usage error,
    /// never silently ignored. `--help` and `--version` go with every command.
    static let allowedOptions: [Command: Set<String>] = [
        .extract: ["--track", "--track-id", "--output-dir", "--jobs", "--overwrite", "--skip-existing", "--salvage",
                   "--no-metadata", "--quiet", "--json", "--from", "--to", "--duration", "--split-chapters", "--set",
                   "--cover", "--chapters-from"],
        .probe: ["--json", "--list", "--packets", "--track-id"],
        .mux: ["--audio", "--offset", "--loop", "--keep-original-audio", "--exact-seams", "--no-metadata", "--overwrite",
               "--quiet", "--json", "--set", "--cover", "--chapters-from"],
        .remux: ["--from", "--to", "--duration", "--drop-audio", "--drop-video", "--track-id", "--fragment",
                 "--overwrite", "--quiet", "--json", "--set", "--cover", "--chapters-from", "--no-metadata"],
        .concat: ["--chapters", "--file-list", "--overwrite", "--quiet", "--json"],
        .tag: ["--set", "--remove", "--remove-all", "--cover", "--remove-cover", "--chapters-from", "--remove-chapters",
               "--dry-run", "--json", "--quiet"],
    ]

    /// The path that names a standard stream: standard input as INPUT, standard output as OUTPUT.
    static let standardStream = "-"

    var mode: Mode = .help
    var audioTrack: Int?
    var trackID: UInt32?
    var overwrite = false
    var skipExisting = false
    /// The folder of a batch run, which is created when missing.
    var outputDirectory: String?
    /// `--jobs N`: inputs of a batch extracted at a time; nil for the default (Batch.swift).
    var workers: Int?
    var salvage = false
    var quiet = false
    var keepMetadata = true
    var json = false
    /// `probe --packets`: every sample instead of the track table.
    var packets = false
    var musicOffset = 0.0
    var keepOriginalAudio = false
    var loop = false
    /// `mux --exact-seams`: one edit per clip, for players that honour multi-entry edit lists.
    var exactSeams = false
    /// Cuts and remux (RemuxCommand.swift).
    var cut = CutOptions()
    /// `tag`: the changes, applied in this order: --remove-all, --remove, --remove-cover,
    /// --set (in the order given), --cover (all of them replace the covers).
    var tagSets: [(key: String, value: String)] = []
    var tagRemovals: [String] = []
    var removeAllTags = false
    var covers: [String] = []
    var removeCover = false
    var dryRun = false
    var chaptersFrom: String?
    var removeChapters = false
    /// `concat --chapters`: one chapter per input.
    var chapters = false
    /// `concat --file-list LIST`: FFmpeg's concat list of the inputs.
    var fileList: String?
    /// The checked changes of --set, --cover (and, for tag, the removals): filled in by
    /// `run()` before any file is touched.
    var tagChanges = TagChanges()

    struct UsageError: Error {
        let message: String
    }

    /// Extensions of formats this tool does not write; an output named so is a mistake.
    static let foreignExtensions: Set<String> = ["mp3", "wav", "aac", "flac", "ogg", "oga", "opus", "mkv", "mka",
                                                 "webm", "ts", "avi", "wma", "aiff", "aif", "caf", "ac3"]

    init(_ arguments: [String]) throws {
        var positional: [String] = []
        var list = false
        var help = false
        var version = false
        var music: [String] = []
        /// The options given, by long name, with how they were typed.
        var given: [(name: String, typed: String)] = []
        var iterator = arguments.makeIterator()
        var optionsEnded = false
        func value(_ name: String, _ attached: String?) throws -> String {
            guard let value = attached ?? iterator.next() else {
                throw UsageError(message: "\(name) needs a value (see --help)")
            }
            return value
        }
        while let argument = iterator.next() {
            if optionsEnded || !argument.hasPrefix("-") || argument == "-" {
                positional.append(argument)
                continue
            }
            var name = argument
            var attached: String?
            if let equals = argument.firstIndex(of: "="), argument.hasPrefix("--") {
                name = String(argument[..<equals])
                attached = String(argument[argument.index(after: equals)...])
            }
            let longNames = ["-h": "--help", "-l": "--list", "-q": "--quiet", "-o": "--output-dir", "-a": "--audio",
                             "-t": "--track", "-j": "--jobs"]
            if name != "--" { given.append((longNames[name] ?? name, argument)) }
            switch name {
            case "--": optionsEnded = true
            case "-h", "--help": help = true
            case "--version": version = true
            case "-l", "--list": list = true
            case "--json": json = true
            case "--packets": packets = true
            case "-q", "--quiet": quiet = true
            case "--overwrite": overwrite = true
            case "--skip-existing": skipExisting = true
            case "--salvage": salvage = true
            case "--no-metadata": keepMetadata = false
            case "-o", "--output-dir": outputDirectory = try value(name, attached)
            case "-a", "--audio": music.append(try value(name, attached))
            case "-j", "--jobs":
                let text = try value(name, attached)
                guard let number = Int(text), (1...1024).contains(number) else {
                    throw UsageError(message: "--jobs takes a number of inputs at a time, 1 to 1024, not '\(text)'")
                }
                workers = number
            case "--keep-original-audio": keepOriginalAudio = true
            case "--loop": loop = true
            case "--exact-seams": exactSeams = true
            case "--offset":
                let text = try value(name, attached)
                guard let seconds = Double(text), seconds >= 0, seconds.isFinite else {
                    throw UsageError(message: "--offset takes seconds (0 or more), not '\(text)'")
                }
                musicOffset = seconds
            case "-t", "--track":
                let text = try value(name, attached)
                guard let number = Int(text), number >= 0 else {
                    throw UsageError(message: "--track takes a number from 0 (the first audio track), not '\(text)'")
                }
                audioTrack = number
            case "--track-id":
                let text = try value(name, attached)
                guard let id = UInt32(text), id > 0 else {
                    throw UsageError(message: "--track-id takes a track ID as probe shows it (1 or more), not '\(text)'")
                }
                trackID = id
                cut.trackIDs.append(id)
            case "--set":
                let text = try value(name, attached)
                guard let equals = text.firstIndex(of: "=") else {
                    throw UsageError(message: "--set takes KEY=VALUE, not '\(text)'")
                }
                tagSets.append((String(text[..<equals]), String(text[text.index(after: equals)...])))
            case "--remove": tagRemovals.append(try value(name, attached))
            case "--remove-all": removeAllTags = true
            case "--cover": covers.append(try value(name, attached))
            case "--remove-cover": removeCover = true
            case "--dry-run": dryRun = true
            case "--chapters-from": chaptersFrom = try value(name, attached)
            case "--remove-chapters": removeChapters = true
            case "--chapters": chapters = true
            case "--file-list": fileList = try value(name, attached)
            case "--from", "--to", "--duration", "--drop-audio", "--drop-video", "--fragment", "--split-chapters":
                try cut.parse(name, value: { try value(name, attached) })
            default:
                throw UsageError(message: "unknown option '\(argument)' (see --help)")
            }
        }
        if help || positional == ["help"] {
            mode = .help
            return
        }
        if version {
            mode = .version
            return
        }
        let command: Command = positional.first == "mux" ? .mux : positional.first == "remux" ? .remux
            : positional.first == "tag" ? .tag : positional.first == "concat" ? .concat : list || positional.first == "probe" ? .probe : .extract
        let allowed = Self.allowedOptions[command] ?? []
        if let stray = given.first(where: { !allowed.contains($0.name) && $0.name != "--version" }) {
            let hint = ["--audio", "--offset", "--loop", "--keep-original-audio"].contains(stray.name)
                ? " (it goes with mux)" : " (see --help)"
            throw UsageError(message: "\(stray.typed) does not apply to \(command.rawValue)" + hint)
        }
        switch command {
        case .mux:
            guard positional.count == 3 else {
                throw UsageError(message: "mux takes a video and an output: extract-audio mux VIDEO --audio MUSIC.m4a "
                                 + "OUTPUT.mp4")
            }
            guard !music.isEmpty else {
                throw UsageError(message: "mux needs at least one --audio MUSIC file")
            }
            if ([positional[1], positional[2]] + music).contains(Self.standardStream) {
                throw UsageError(message: "mux reads and writes files, not standard input or output ('-')")
            }
            if let ext = Self.extensionOf(positional[2]), Self.foreignExtensions.contains(ext) {
                throw UsageError(message: "the output is named .\(ext), but mux writes an MP4: name it .mp4")
            }
            mode = .mux(video: positional[1], music: music, output: positional[2])
            return
        case .remux:
            mode = try cut.remuxMode(Array(positional.dropFirst()))
            return
        case .probe:
            let inputs = positional.first == "probe" ? Array(positional.dropFirst()) : positional
            guard !inputs.isEmpty else {
                throw UsageError(message: "probe takes one or more input files")
            }
            guard !inputs.contains(Self.standardStream) else {
                throw UsageError(message: "probe reads files, not standard input ('-')")
            }
            if trackID != nil && !packets {
                throw UsageError(message: "probe takes --track-id only with --packets")
            }
            if packets && inputs.count > 1 {
                throw UsageError(message: "probe --packets takes one input file")
            }
            mode = .probe(inputs: inputs)
            return
        case .concat:
            let paths = Array(positional.dropFirst())
            if fileList != nil {
                guard paths.count == 1 else {
                    throw UsageError(message: "with --file-list, concat takes only the output: extract-audio concat "
                                     + "--file-list LIST OUTPUT")
                }
            } else if paths.count < 2 {
                throw UsageError(message: "concat takes inputs and an output: extract-audio concat IN1 IN2 … OUTPUT "
                                 + "(or --file-list LIST OUTPUT)")
            }
            guard !paths.contains(Self.standardStream) else {
                throw UsageError(message: "concat reads and writes files, not standard input or output ('-')")
            }
            let output = paths[paths.count - 1]
            if let ext = Self.extensionOf(output), Self.foreignExtensions.contains(ext) {
                throw UsageError(message: "the output is named .\(ext), but concat writes an MPEG-4 file: name it "
                                 + ".m4a, .m4b or .mp4")
            }
            mode = .concat(inputs: Array(paths.dropLast()), output: output)
            return
        case .tag:
            let files = Array(positional.dropFirst())
            guard !files.isEmpty else {
                throw UsageError(message: "tag takes one or more files: extract-audio tag [--set KEY=VALUE]… FILE…")
            }
            guard !files.contains(Self.standardStream) else {
                throw UsageError(message: "tag edits files, not standard input ('-')")
            }
            if removeChapters && chaptersFrom != nil {
                throw UsageError(message: "use --chapters-from (which replaces the chapters) or --remove-chapters, "
                                 + "not both")
            }
            if removeCover && !covers.isEmpty {
                throw UsageError(message: "use --cover (which replaces the covers) or --remove-cover, not both")
            }
            mode = .tag(files: files)
            return
        case .extract:
            break
        }
        try cut.checkExtraction(inputs: positional, outputDirectory: outputDirectory)
        if cut.splitChapters && chaptersFrom != nil {
            throw UsageError(message: "--split-chapters cuts at the input's chapters: it does not take --chapters-from")
        }
        if audioTrack != nil && trackID != nil {
            throw UsageError(message: "use --track or --track-id, not both")
        }
        if overwrite && skipExisting {
            throw UsageError(message: "use --overwrite or --skip-existing, not both")
        }
        if workers != nil && outputDirectory == nil {
            throw UsageError(message: "--jobs goes with --output-dir: one input and output run alone")
        }
        if let outputDirectory {
            guard !positional.isEmpty else {
                throw UsageError(message: "--output-dir needs at least one input file")
            }
            guard outputDirectory != Self.standardStream, !positional.contains(Self.standardStream) else {
                throw UsageError(message: "--output-dir takes files, not standard input or output ('-')")
            }
            self.outputDirectory = outputDirectory
            mode = .extract(jobs: Self.jobs(positional, in: outputDirectory))
            return
        }
        guard positional.count == 2 else {
            throw UsageError(message: positional.count < 2
                             ? "needs an input and an output file: extract-audio INPUT OUTPUT.m4a (see --help)"
                             : "several inputs need an output directory: extract-audio IN1 IN2 … --output-dir DIR")
        }
        let output = positional[1]
        if let ext = Self.extensionOf(output), Self.foreignExtensions.contains(ext) {
            throw UsageError(message: "the output is named .\(ext), but extract-audio writes an MPEG-4 audio file "
                             + "(the codec is copied, not converted): name it .m4a")
        }
        mode = .extract(jobs: [Job(input: positional[0], output: output)])
    }

    /// One job per input into `directory`: `NAME.m4a`, and for a later input whose name is
    /// taken (by an earlier input's, or by another input's own name such as `x-2.mp4`),
    /// `NAME-2.m4a`, `NAME-3.m4a`, …: the run never writes one output twice, and a rerun
    /// gives each input the same name again (so `--skip-existing` finds it).
    static func jobs(_ inputs: [String], in directory: String) -> [Job] {
        let key = System.nameKey  // Case-insensitive where volumes are by default.
        let natural = inputs.map { output(for: $0, in: directory) }
        var taken = Set(natural.map(key))
        var owner: [String: String] = [:]
        var jobs: [Job] = []
        for (input, name) in zip(inputs, natural) {
            guard let first = owner[key(name)] else {
                owner[key(name)] = input
                jobs.append(Job(input: input, output: name))
                continue
            }
            let stem = String(name.dropLast(".m4a".count))
            var number = 2
            while taken.contains(key(numbered(stem, number))) { number += 1 }
            let renamed = numbered(stem, number)
            taken.insert(key(renamed))
            owner[key(renamed)] = input
            jobs.append(Job(input: input, output: renamed, collidedWith: first))
        }
        return jobs
    }

    /// `STEM-N.m4a`, the file name shortened at a character boundary so that it fits
    /// `NAME_MAX` (255 bytes) when `STEM`'s own name nearly fills it.
    static func numbered(_ stem: String, _ number: Int) -> String {
        let suffix = "-\(number).m4a"
        let slash = stem.lastIndex(of: "/")
        let folder = slash.map { String(stem[...$0]) } ?? ""
        var name = slash.map { String(stem[stem.index(after: $0)...]) } ?? stem
        while !name.isEmpty && name.utf8.count + suffix.utf8.count > 255 { name.removeLast() }
        return folder + name + suffix
    }

    /// `DIR/NAME.m4a` for input `…/NAME.EXT`.
    static func output(for input: String, in directory: String) -> String {
        var name = input.split(separator: "/").last.map(String.init) ?? input
        if let dot = name.lastIndex(of: "."), dot != name.startIndex { name = String(name[..<dot]) }
        return (directory.hasSuffix("/") ? directory : directory + "/") + name + ".m4a"
    }

    static func extensionOf(_ path: String) -> String? {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        return name[name.index(after: dot)...].lowercased()
    }
}
