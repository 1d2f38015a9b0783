import Foundation
import TestSupport
import XCTest

@testable import extract_audio

/// Issues 29.5 and 30.4: each command's options come from one table (OptionTable.swift),
/// which the parser reads, `COMMAND --help` prints, and the README's lists must match.
final class CommandHelpTests: XCTestCase {
    /// The three ways to ask for a command's help print the same text, its own: its usage
    /// line, every option of its table, and nothing of the overview.
    func testEachCommandsHelpIsItsOwnAndListsItsTable() throws {
        for command in Command.allCases {
            var asked = [["help", command.word]]
            if command != .extract { asked += [[command.word, "--help"], [command.word, "-h"]] }
            var texts: Set<String> = []
            for arguments in asked {
                let run = try runCLI(arguments)
                XCTAssertEqual(run.status, 0, "\(arguments): \(run.stderr)")
                XCTAssertEqual(run.stderr, "", "\(arguments)")
                texts.insert(run.stdout)
            }
            XCTAssertEqual(texts.count, 1, "\(command): the forms of help differ")
            let text = try XCTUnwrap(texts.first)
            let usage = "extract-audio " + (command == .extract ? "[OPTIONS] INPUT OUTPUT.m4a" : command.word + " ")
            XCTAssertTrue(text.hasPrefix("Usage:\n  " + usage), "\(command): \(text.prefix(200))")
            for option in command.options + [.help] {
                XCTAssertTrue(text.contains(option.signature), "\(command) help lacks \(option.signature)")
                XCTAssertTrue(text.contains(option.help), "\(command) help lacks the help of \(option.name)")
            }
            // Only its own options: every --option of the options list is in its table.
            let listed = try XCTUnwrap(text.components(separatedBy: "\nOptions:\n").last)
            XCTAssertEqual(Self.optionNames(in: listed), Set((command.options + [.help]).map(\.name)), "\(command)")
            XCTAssertFalse(text.contains("Commands:"), "\(command): the overview leaked in")
            XCTAssertLessThan(text.split(separator: "\n").count, 50, "\(command): \(text)")
        }
        // Options before the command word, and probe's other name, find the same help.
        XCTAssertEqual(try runCLI(["--json", "remux", "--help"]).stdout, try runCLI(["help", "remux"]).stdout)
        XCTAssertEqual(try runCLI(["--list", "-h"]).stdout, try runCLI(["help", "probe"]).stdout)
    }

    /// `--help` and `help` alone: the overview, each command in one line, the exit statuses.
    func testTheOverviewListsEveryCommandInALine() throws {
        let overview = try runCLI(["--help"])
        XCTAssertEqual(overview.status, 0, overview.stderr)
        XCTAssertEqual(try runCLI(["help"]).stdout, overview.stdout)
        XCTAssertEqual(try runCLI(["-h"]).stdout, overview.stdout)
        let lines = overview.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        for command in Command.allCases where command != .extract {
            let line = lines.filter { $0.hasPrefix("  \(command.word) ") && $0.hasSuffix(command.runner.summary) }
            XCTAssertEqual(line.count, 1, "\(command): \(lines)")
        }
        for status in ["0 success", "64 usage error", "65 malformed", "66 cannot open", "69 unsupported",
                       "71 written", "73 output exists", "74 I/O error", "75 tag", "79 no audio track",
                       "130/143 interrupted"] {
            XCTAssertTrue(overview.stdout.contains(status), "the overview lacks \(status)")
        }
        XCTAssertLessThan(lines.count, 80, "the overview is no longer short")
    }

    func testHelpOfAnUnknownCommandIsAUsageError() throws {
        for arguments in [["help", "bogus"], ["help", "extraction-audio"], ["--json", "help", "nope"]] {
            let run = try runCLI(arguments)
            XCTAssertEqual(run.status, 64, "\(arguments)")
            if arguments.contains("--json") {
                XCTAssertTrue(run.stdout.contains("\"code\": \"usage\""), run.stdout)
                continue
            }
            XCTAssertEqual(run.stdout, "")
            XCTAssertTrue(run.stderr.hasPrefix("extract-audio: error: help: no command '"), run.stderr)
            XCTAssertEqual(run.stderr.filter { $0 == "\n" }.count, 1, run.stderr)
        }
    }

    /// A long name means one thing everywhere: the same short name and value rule in every
    /// command's row, listed once per command; a short name stands for one long name.
    func testTheOptionTableIsConsistent() {
        var rows: [String: Option] = [:]
        for option in Option.common + Command.allCases.flatMap(\.options) {
            if let first = rows[option.name] {
                XCTAssertEqual(first.short, option.short, option.name)
                XCTAssertEqual(first.value?.placeholder, option.value?.placeholder, option.name)
                XCTAssertEqual(first.value?.expected, option.value?.expected, option.name)
            }
            rows[option.name] = rows[option.name] ?? option
            XCTAssertTrue(option.name.hasPrefix("--"), option.name)
            XCTAssertFalse(option.help.isEmpty || option.help.contains("\n"), "\(option.name): one line of help")
        }
        for command in Command.allCases {
            let names = command.options.map(\.name)
            XCTAssertEqual(names.count, Set(names).count, "\(command) lists an option twice")
        }
        let shorts = rows.values.compactMap { row in row.short.map { ($0, row.name) } }
        XCTAssertEqual(Dictionary(shorts, uniquingKeysWith: { $0 == $1 ? $0 : "two" }).values.filter { $0 == "two" },
                       [])
    }

    // MARK: The README against the table

    static let readme: String = ReadmeCLITests.readme

    /// The `--option` names in `text`.
    static func optionNames(in text: some StringProtocol) -> Set<String> {
        var names: Set<String> = []
        var rest = Substring(text)
        while let range = rest.range(of: "--") {
            let name = rest[range.lowerBound...].prefix { $0 == "-" || $0.isLetter }
            if name.count > 2 && name.dropFirst(2).first?.isLetter == true { names.insert(String(name)) }
            rest = rest[range.upperBound...].drop { $0 == "-" || $0.isLetter }
        }
        return names
    }

    /// The rows of the first Markdown table whose header is `header`: first cell -> the rest.
    static func table(headed header: String) -> [(String, String)] {
        guard let start = readme.range(of: header + "\n| --- |") else { return [] }
        return readme[start.lowerBound...].split(separator: "\n").dropFirst(2).prefix { $0.hasPrefix("|") }.map {
            let cells = $0.split(separator: "|", omittingEmptySubsequences: false)
            return (cells.count > 1 ? cells[1].trimmingCharacters(in: .whitespaces) : "",
                    cells.dropFirst(2).joined(separator: "|"))
        }
    }

    /// The README's table of the options each command takes equals the command's table, both
    /// ways; so do the rows of its option table for extraction.
    func testTheReadmeListsExactlyEachCommandsOptions() throws {
        let rows = Self.table(headed: "| command | options |")
        XCTAssertEqual(rows.count, Command.allCases.count, "the README's table of options per command")
        for (cell, options) in rows {
            let word = cell.trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            guard let command = Command.allCases.first(where: { $0.rawValue == word }) else {
                XCTFail("the README lists options of '\(cell)', which is no command")
                continue
            }
            XCTAssertEqual(Self.optionNames(in: options), Set(command.options.map(\.name)),
                           "README vs the option table of \(command)")
        }
        let extraction = Self.table(headed: "| option | meaning |").map { Self.optionNames(in: $0.0) }
        XCTAssertEqual(extraction.reduce(into: Set<String>()) { $0.formUnion($1) },
                       Set(ExtractCommand.options.map(\.name)), "the README's option table")
    }

    /// Every `--option` the README's command-line section writes in code is one the tool
    /// takes (a renamed or removed option cannot linger in the documentation).
    func testEveryOptionTheReadmeShowsExists() throws {
        let start = try XCTUnwrap(Self.readme.range(of: "## The command line"))
        let end = try XCTUnwrap(Self.readme.range(of: "\n## ", range: start.upperBound..<Self.readme.endIndex))
        let section = Self.readme[start.lowerBound..<end.lowerBound]
        // Code that is ours: an option alone, or a command line of the tool (not ffprobe's or
        // mediainfo's).
        let spans = section.components(separatedBy: "`").enumerated().filter { $0.offset % 2 == 1 }.map(\.element)
            .filter { $0.hasPrefix("--") || $0.contains("extract-audio ") }
        let known = Set((Option.common + Command.allCases.flatMap(\.options)).map(\.name))
        let shown = spans.reduce(into: Set<String>()) { $0.formUnion(Self.optionNames(in: $1)) }
        XCTAssertFalse(shown.isEmpty)
        XCTAssertEqual(shown.subtracting(known), [], "the README shows options the tool does not take")
    }

    /// The hint to salvage follows the error's `salvageable` field (issue 29), only where
    /// --salvage applies and was not given.
    func testTheSalvageHintFollowsTheErrorsField() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let truncated = fixture("aac-h264-faststart-truncated.mp4")
        let plain = try runCLI([truncated, directory.file("a.m4a")])
        XCTAssertEqual(plain.status, 65, plain.stderr)
        XCTAssertTrue(plain.stderr.hasSuffix(" (use --salvage)\n"), plain.stderr)
        let salvaged = try runCLI(["--salvage", truncated, directory.file("b.m4a")])
        XCTAssertEqual(salvaged.status, 0, salvaged.stderr)
        let cut = directory.write("cut.mp4", Array(readFile(fixture("frag-dash.mp4")).prefix(2048)))
        let nothing = try runCLI([cut, directory.file("c.m4a")])
        XCTAssertEqual(nothing.status, 65, nothing.stderr)
        XCTAssertFalse(nothing.stderr.contains("--salvage"), nothing.stderr)
    }
}
