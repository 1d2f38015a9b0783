/// The parsed command line.
struct Arguments {
    enum Mode: Equatable {
        /// One input to one output, or several inputs into `outputDirectory`.
        case extract(jobs: [Job])
        case probe(inputs: [String])
        /// Music under a video: `mux VIDEO --audio A… OUTPUT`.
        case mux(video: String, music: [String], output: String)
        case help
        case version
    }

    struct Job: Equatable {
        var input: String
        var output: String
    }

    var mode: Mode = .help
    var audioTrack: Int?
    var trackID: UInt32?
    var overwrite = false
    var salvage = false
    var quiet = false
    var keepMetadata = true
    var json = false
    var musicOffset = 0.0
    var keepOriginalAudio = false
    var loop = false

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
        var outputDirectory: String?
        var music: [String] = []
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
            switch name {
            case "--": optionsEnded = true
            case "-h", "--help": help = true
            case "--version": version = true
            case "-l", "--list": list = true
            case "--json": json = true
            case "-q", "--quiet": quiet = true
            case "--overwrite": overwrite = true
            case "--salvage": salvage = true
            case "--no-metadata": keepMetadata = false
            case "-o", "--output-dir": outputDirectory = try value(name, attached)
            case "-a", "--audio": music.append(try value(name, attached))
            case "--keep-original-audio": keepOriginalAudio = true
            case "--loop": loop = true
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
            default:
                throw UsageError(message: "unknown option '\(argument)' (see --help)")
            }
        }
        if help {
            mode = .help
            return
        }
        if version {
            mode = .version
            return
        }
        if positional.first == "mux" {
            guard positional.count == 3 else {
                throw UsageError(message: "mux takes a video and an output: extract-audio mux VIDEO --audio MUSIC.m4a "
                                 + "OUTPUT.mp4")
            }
            guard !music.isEmpty else {
                throw UsageError(message: "mux needs at least one --audio MUSIC file")
            }
            if let ext = Self.extensionOf(positional[2]), Self.foreignExtensions.contains(ext) {
                throw UsageError(message: "the output is named .\(ext), but mux writes an MP4: name it .mp4")
            }
            mode = .mux(video: positional[1], music: music, output: positional[2])
            return
        }
        if !music.isEmpty || keepOriginalAudio || loop || musicOffset != 0 {
            throw UsageError(message: "--audio, --offset, --loop and --keep-original-audio go with mux")
        }
        if list || positional.first == "probe" {
            let inputs = positional.first == "probe" && !list ? Array(positional.dropFirst()) : positional
            guard !inputs.isEmpty else {
                throw UsageError(message: "probe takes one or more input files")
            }
            mode = .probe(inputs: inputs)
            return
        }
        if audioTrack != nil && trackID != nil {
            throw UsageError(message: "use --track or --track-id, not both")
        }
        if let outputDirectory {
            guard !positional.isEmpty else {
                throw UsageError(message: "--output-dir needs at least one input file")
            }
            mode = .extract(jobs: positional.map { Job(input: $0, output: Self.output(for: $0, in: outputDirectory)) })
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
