// The command line's one source of truth: every option is a row (long name, short name,
// value placeholder and rule, one-line help), and each command lists the rows it takes
// (`Command.options`). Parsing, the "does not apply" check and every `--help` screen are
// made from those lists; ExtractAudioCLITests checks docs/cli.md's option lists against them.
import AudioRemux
import ISOBMFF

/// A usage error: exit 64, one line.
struct UsageError: Error {
    let message: String
}

/// An option's value, converted by its row's rule.
enum OptionValue: Sendable, Equatable {
    case text(String)
    case integer(Int)
    case seconds(Double)
    case time(CutTime)
    case trackID(UInt32)
    case keyValue(key: String, value: String)
}

/// What an option's value must be: its placeholder in help, and the conversion that
/// accepts it. A value it refuses is a usage error "NAME takes EXPECTED, not 'TEXT'".
struct ValueRule: Sendable {
    let placeholder: String
    let expected: String
    let convert: @Sendable (String) -> OptionValue?

    static func text(_ placeholder: String) -> ValueRule {
        ValueRule(placeholder: placeholder, expected: "", convert: { .text($0) })
    }

    static func integer(_ placeholder: String, _ range: ClosedRange<Int>, expected: String) -> ValueRule {
        ValueRule(placeholder: placeholder, expected: expected) { text in
            Int(text).flatMap { range.contains($0) ? .integer($0) : nil }
        }
    }

    static func seconds(_ placeholder: String, expected: String,
                        accepting accepts: @escaping @Sendable (Double) -> Bool) -> ValueRule {
        ValueRule(placeholder: placeholder, expected: expected) { text in
            Double(text).flatMap { $0.isFinite && accepts($0) ? .seconds($0) : nil }
        }
    }

    static func time(_ placeholder: String) -> ValueRule {
        ValueRule(placeholder: placeholder,
                  expected: "a time as seconds (90, 2.52) or [[h:]m:]s[.frac] (1:30, 01:02:03.5)") { text in
            (try? CutTime(parsing: text)).map { .time($0) }
        }
    }

    static let trackID = ValueRule(placeholder: "ID", expected: "a track ID as probe shows it (1 or more)") { text in
        UInt32(text).flatMap { $0 > 0 ? .trackID($0) : nil }
    }

    static func keyValue(_ placeholder: String) -> ValueRule {
        ValueRule(placeholder: placeholder, expected: "KEY=VALUE") { text in
            text.firstIndex(of: "=").map {
                .keyValue(key: String(text[..<$0]), value: String(text[text.index(after: $0)...]))
            }
        }
    }
}

/// One row of the option table. The same long name may have a row per command (its help
/// differs), always with the same short name and value rule.
struct Option: Sendable {
    let name: String
    let short: String?
    var value: ValueRule?
    let help: String

    /// An option that takes a value.
    init(_ name: String, short: String? = nil, _ value: ValueRule, _ help: String) {
        self.name = name
        self.short = short
        self.value = value
        self.help = help
    }

    /// A flag.
    init(_ name: String, short: String? = nil, _ help: String) {
        self.name = name
        self.short = short
        self.help = help
    }

    /// `-t, --track N`, as help shows it.
    var signature: String {
        (short.map { $0 + ", " } ?? "    ") + name + (value.map { " " + $0.placeholder } ?? "")
    }
}

extension Option {
    // Rows every command shows or several share (with one help text).
    static let help = Option("--help", short: "-h", "show this help")
    static let version = Option("--version", "show the version")
    static let json = Option("--json", "print one JSON object per input on stdout (result or error)")
    static let quiet = Option("--quiet", short: "-q", "no progress bar, no \"wrote\" line, no summary (errors and "
                              + "warnings still print)")
    static let overwrite = Option("--overwrite", "replace an existing output (atomically); else an existing file is "
                                  + "left alone")
    static let noMetadata = Option("--no-metadata", "drop the input's tags, cover art and chapters (what playback "
                                   + "needs stays)")
    static let from = Option("--from", .time("T"), "keep from T (seconds or [[h:]m:]s[.frac]), to the sample")
    static let to = Option("--to", .time("T"), "keep up to T")
    static let duration = Option("--duration", .time("D"), "keep D from --from (the same as --to FROM+D)")
    static let set = Option("--set", .keyValue("KEY=VALUE"), "tag the output in the same pass, as tag does "
                            + "(repeatable)")
    static let cover = Option("--cover", .text("IMAGE"), "give the output this cover, JPEG or PNG (repeatable)")
    static let chaptersFrom = Option("--chapters-from", .text("FILE"), "give the output these chapters, as tag "
                                     + "writes them")

    /// The rows that are not any one command's: parsed with every command.
    static let common: [Option] = [.help, .version]

    /// The row of `name` (long or short) in any command's table.
    static func named(_ name: String) -> Option? {
        (common + Command.allCases.flatMap(\.options)).first { $0.name == name || $0.short == name }
    }
}

/// The commands, with the rows each takes. Any other option is a usage error, never
/// silently ignored; `--help` and `--version` go with every command.
enum Command: String, CaseIterable, Sendable {
    /// Named so in messages ("does not apply to extraction"); it has no command word.
    case extract = "extraction"
    case probe
    case mux
    case remux
    case tag
    case concat
    case package

    var options: [Option] {
        switch self {
        case .extract: ExtractCommand.options
        case .probe: ProbeCommand.options
        case .mux: MuxCommand.options
        case .remux: RemuxCommand.options
        case .tag: TagCommand.options
        case .concat: ConcatCommand.options
        case .package: PackageCommand.options
        }
    }

    /// The word that selects it (`help` takes `extract` for extraction).
    var word: String { self == .extract ? "extract" : rawValue }

    var runner: any CommandRunner.Type {
        switch self {
        case .extract: ExtractCommand.self
        case .probe: ProbeCommand.self
        case .mux: MuxCommand.self
        case .remux: RemuxCommand.self
        case .tag: TagCommand.self
        case .concat: ConcatCommand.self
        case .package: PackageCommand.self
        }
    }
}

/// A command: its table, its help, its options type made from a parsed line, and its run.
protocol CommandRunner: Sendable {
    static var options: [Option] { get }
    /// Its usage lines, without the leading `extract-audio `.
    static var synopsis: [String] { get }
    /// One line for the overview of `--help`.
    static var summary: String { get }
    /// What it does, in paragraphs, for `COMMAND --help`.
    static var details: String { get }
    /// Checks the options and operands (every usage error is found here, before any file is
    /// touched).
    init(_ line: ParsedLine) throws(UsageError)
    func run() -> ExitStatus
}

/// The command line, read against the option table.
struct ParsedLine: Sendable {
    enum Request: Sendable {
        /// `--help` (nil: the overview), `help COMMAND`, `COMMAND --help`.
        case help(Command?)
        case version
        case run(Command)
    }

    var request: Request
    /// The operands, after the command word.
    var operands: [String] = []
    /// The options given, in order, with their converted values.
    var given: [(option: Option, value: OptionValue?)] = []

    init(_ arguments: [String]) throws(UsageError) {
        var positional: [String] = []
        /// The options given, with how they were typed.
        var typed: [(option: Option, text: String, value: OptionValue?)] = []
        var index = arguments.startIndex
        var optionsEnded = false
        while index < arguments.endIndex {
            let argument = arguments[index]
            index += 1
            if optionsEnded || !argument.hasPrefix("-") || argument == "-" {
                positional.append(argument)
                continue
            }
            if argument == "--" {
                optionsEnded = true
                continue
            }
            var name = argument
            var attached: String?
            if let equals = argument.firstIndex(of: "="), argument.hasPrefix("--") {
                name = String(argument[..<equals])
                attached = String(argument[argument.index(after: equals)...])
            }
            guard let option = Option.named(name) else {
                throw UsageError(message: "unknown option '\(argument)' (see --help)")
            }
            var value: OptionValue?
            if let rule = option.value {
                guard let text = attached ?? (index < arguments.endIndex ? arguments[index] : nil) else {
                    throw UsageError(message: "\(name) needs a value (see --help)")
                }
                if attached == nil { index += 1 }
                guard let converted = rule.convert(text) else {
                    throw UsageError(message: "\(option.name) takes \(rule.expected), not '\(text)'")
                }
                value = converted
            }
            typed.append((option, argument, value))
        }
        let first = positional.first
        let listed = typed.contains { $0.option.name == "--list" }
        let command = Command.allCases.first { $0 != .extract && $0 != .probe && $0.rawValue == first }
            ?? (listed || first == "probe" ? .probe : .extract)
        if typed.contains(where: { $0.option.name == "--help" }) || first == "help" && positional.count == 1 {
            request = .help(command == .extract ? nil : command)
            return
        }
        if first == "help" && positional.count == 2 {
            let asked = positional[1]
            guard let topic = Command.allCases.first(where: { $0.word == asked || $0.rawValue == asked }) else {
                throw UsageError(message: "help: no command '\(asked)'; the commands are "
                                 + Command.allCases.map(\.word).joined(separator: ", "))
            }
            request = .help(topic)
            return
        }
        if typed.contains(where: { $0.option.name == "--version" }) {
            request = .version
            return
        }
        let allowed = Set(command.options.map(\.name))
        if let stray = typed.first(where: { !allowed.contains($0.option.name) }) {
            let hint = MuxCommand.hinted.contains(stray.option.name) ? " (it goes with mux)" : " (see --help)"
            throw UsageError(message: "\(stray.text) does not apply to \(command.rawValue)" + hint)
        }
        request = .run(command)
        operands = command == .extract || first != command.rawValue ? positional : Array(positional.dropFirst())
        given = typed.map { ($0.option, $0.value) }
    }

    func has(_ option: Option) -> Bool {
        given.contains { $0.option.name == option.name }
    }

    /// The values given for `option`, in order (it may be repeated).
    func values(_ option: Option) -> [OptionValue] {
        given.compactMap { $0.option.name == option.name ? $0.value : nil }
    }

    /// The last value given for `option`.
    func value(_ option: Option) -> OptionValue? { values(option).last }

    func text(_ option: Option) -> String? {
        guard case .text(let text)? = value(option) else { return nil }
        return text
    }

    func texts(_ option: Option) -> [String] {
        values(option).compactMap { if case .text(let text) = $0 { text } else { nil } }
    }

    func integer(_ option: Option) -> Int? {
        guard case .integer(let number)? = value(option) else { return nil }
        return number
    }

    func seconds(_ option: Option) -> Double? {
        guard case .seconds(let seconds)? = value(option) else { return nil }
        return seconds
    }

    func time(_ option: Option) -> CutTime? {
        guard case .time(let time)? = value(option) else { return nil }
        return time
    }

    func trackIDs(_ option: Option) -> [UInt32] {
        values(option).compactMap { if case .trackID(let id) = $0 { id } else { nil } }
    }

    func keyValues(_ option: Option) -> [(key: String, value: String)] {
        values(option).compactMap { if case .keyValue(let key, let value) = $0 { (key, value) } else { nil } }
    }
}
