import AudioRemux

/// The checks every command makes of its file operands.
enum Operand {
    /// The path that names a standard stream: standard input as INPUT, standard output as OUTPUT.
    static let standardStream = "-"

    /// Extensions of formats this tool does not write; an output named so is a mistake.
    static let foreignExtensions: Set<String> = ["mp3", "wav", "aac", "flac", "ogg", "oga", "opus", "mkv", "mka",
                                                 "webm", "ts", "avi", "wma", "aiff", "aif", "caf", "ac3"]

    /// A usage error when `output` is named like another format: "the output is named .EXT,
    /// but " + `what` (which names what the command writes).
    static func checkName(of output: String, _ what: String) throws(UsageError) {
        if let ext = extensionOf(output), foreignExtensions.contains(ext) {
            throw UsageError(message: "the output is named .\(ext), but " + what)
        }
    }

    /// A usage error `message` when one of `paths` is `-`.
    static func refuseStandardStreams(_ paths: [String], _ message: String) throws(UsageError) {
        if paths.contains(standardStream) {
            throw UsageError(message: message)
        }
    }

    static func extensionOf(_ path: String) -> String? {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        return name[name.index(after: dot)...].lowercased()
    }
}

/// The output names of a batch (`--output-dir`).
enum OutputNames {
    /// One job per input into `directory`: `NAME.m4a`, and for a later input whose name is
    /// taken (by an earlier input's, or by another input's own name such as `x-2.mp4`),
    /// `NAME-2.m4a`, `NAME-3.m4a`, …: the run never writes one output twice, and a rerun
    /// gives each input the same name again (so `--skip-existing` finds it).
    static func jobs(_ inputs: [String], in directory: String) -> [ExtractCommand.Job] {
        let key = System.nameKey  // Case-insensitive where volumes are by default.
        let natural = inputs.map { output(for: $0, in: directory) }
        var taken = Set(natural.map(key))
        var owner: [String: String] = [:]
        var jobs: [ExtractCommand.Job] = []
        for (input, name) in zip(inputs, natural) {
            guard let first = owner[key(name)] else {
                owner[key(name)] = input
                jobs.append(ExtractCommand.Job(input: input, output: name))
                continue
            }
            let stem = String(name.dropLast(".m4a".count))
            var number = 2
            while taken.contains(key(numbered(stem, number))) { number += 1 }
            let renamed = numbered(stem, number)
            taken.insert(key(renamed))
            owner[key(renamed)] = input
            jobs.append(ExtractCommand.Job(input: input, output: renamed, collidedWith: first))
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
}

/// The options every command that writes a file reads the same way (each command's table
/// says which of them it takes; one it does not take is simply never given).
struct CommonOptions: Sendable {
    var overwrite: Bool
    var quiet: Bool
    var json: Bool
    var keepMetadata: Bool
    /// --set, --cover, --chapters-from (and, for tag, the removals).
    var tags: TagOptions

    init(_ line: ParsedLine) {
        overwrite = line.has(.overwrite)
        quiet = line.has(.quiet)
        json = line.has(.json)
        keepMetadata = !line.has(.noMetadata)
        tags = TagOptions(line)
    }

    /// Whether progress and "wrote" lines are printed: neither --quiet nor --json.
    var printsText: Bool { !quiet && !json }
}
