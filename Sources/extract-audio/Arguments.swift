/// The parsed command line.
struct Arguments {
    enum Mode: Equatable {
        case extract(input: String, output: String)
        case list(input: String)
        case help
        case version
    }

    var mode: Mode
    var audioTrack: Int?
    var overwrite = false
    var salvage = false

    struct UsageError: Error {
        let message: String
    }

    init(_ arguments: [String]) throws {
        var positional: [String] = []
        var list = false
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
            default:
                throw UsageError(message: "unknown option '\(argument)' (see --help)")
            }
        }
        if help {
            mode = .help
        } else if version {
            mode = .version
        } else if list {
            guard positional.count == 1 else {
                throw UsageError(message: "--list takes exactly one input file")
            }
            mode = .list(input: positional[0])
        } else {
            guard positional.count == 2 else {
                throw UsageError(message: positional.count < 2
                                 ? "needs an input and an output file: extract-audio INPUT OUTPUT.m4a"
                                 : "too many arguments: extract-audio INPUT OUTPUT.m4a")
            }
            mode = .extract(input: positional[0], output: positional[1])
        }
    }
}
