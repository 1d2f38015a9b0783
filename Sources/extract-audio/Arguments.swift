/// The parsed command line.
struct Arguments {
    enum Mode: Equatable {
        case extract(input: String, output: String)
        case probe(input: String, json: Bool)
        case help
        case version
    }

    var mode: Mode
    var audioTrack: Int?
    var trackID: UInt32?
    var overwrite = false
    var salvage = false

    struct UsageError: Error {
        let message: String
    }

    init(_ arguments: [String]) throws {
        var positional: [String] = []
        var list = false
        var json = false
        var help = false
        var version = false
        var iterator = arguments.makeIterator()
        var optionsEnded = false
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
            case "--":
                optionsEnded = true
            case "-h", "--help":
                help = true
            case "--version":
                version = true
            case "-l", "--list":
                list = true
            case "--json":
                json = true
            case "--overwrite":
                overwrite = true
            case "--salvage":
                salvage = true
            case "-t", "--track":
                guard let value = attached ?? iterator.next() else {
                    throw UsageError(message: "--track needs a number (0 for the first audio track)")
                }
                guard let number = Int(value), number >= 0 else {
                    throw UsageError(message: "--track takes a number from 0 (the first audio track), not '\(value)'")
                }
                audioTrack = number
            case "--track-id":
                guard let value = attached ?? iterator.next(), let id = UInt32(value), id > 0 else {
                    throw UsageError(message: "--track-id takes a track ID from --list (1 or more)")
                }
                trackID = id
            default:
                throw UsageError(message: "unknown option '\(argument)' (see --help)")
            }
        }
        if help {
            mode = .help
        } else if version {
            mode = .version
        } else if list || positional.first == "probe" {
            let inputs = positional.first == "probe" && !list ? Array(positional.dropFirst()) : positional
            guard inputs.count == 1 else {
                throw UsageError(message: "probe (or --list) takes exactly one input file")
            }
            mode = .probe(input: inputs[0], json: json)
        } else {
            if json { throw UsageError(message: "--json goes with probe") }
            if audioTrack != nil && trackID != nil {
                throw UsageError(message: "use --track or --track-id, not both")
            }
            guard positional.count == 2 else {
                throw UsageError(message: positional.count < 2
                                 ? "needs an input and an output file: extract-audio INPUT OUTPUT.m4a"
                                 : "too many arguments: extract-audio INPUT OUTPUT.m4a")
            }
            mode = .extract(input: positional[0], output: positional[1])
        }
    }
}
