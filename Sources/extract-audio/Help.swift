// `--help`, `help COMMAND` and `COMMAND --help`: made from each command's option table,
// synopsis and details, so that what help lists is what the parser takes.

enum Help {
    static let version = "0.2.0"

    /// The usage of `command` only: its synopsis, what it does, its options.
    static func text(for command: Command) -> String {
        let runner = command.runner
        return "Usage:\n" + synopsis(runner.synopsis) + "\n\n"
            + runner.details + "\n\nOptions:\n" + rows(runner.options + [.help]) + "\n\n"
            + "Exit statuses: see extract-audio --help."
    }

    /// The overview: every command in a line, extraction's options (it has no command word),
    /// examples and the exit statuses.
    static var overview: String {
        let others = Command.allCases.filter { $0 != .extract }
        let width = others.map(\.word.count).max() ?? 0
        return "Usage:\n" + synopsis(ExtractCommand.synopsis) + """

              extract-audio COMMAND [OPTIONS] …             (the commands below)
              extract-audio help COMMAND | COMMAND --help    (that command's usage and options only)
              extract-audio help | --help | --version

            Copies an audio track of an MP4/MOV/M4A/3GP file (regular or fragmented) into a new
            .m4a without re-encoding: the packets and their timing are kept exactly (like
            ffmpeg -c:a copy), and only the audio bytes of the input are read. Codecs: AAC,
            MP3/MP2 in mp4a, ALAC, AC-3, E-AC-3, Opus, FLAC.

            Commands:

            """
            + others.map { "  " + $0.word.padding(to: width) + "  " + $0.runner.summary }.joined(separator: "\n")
            + "\n\nOptions (extraction; extract-audio help extract says more):\n"
            + rows(ExtractCommand.options + Option.common) + "\n\n" + """
            Each command takes only its own options. INPUT - reads standard input; OUTPUT - streams
            the M4A to standard output.
            With --quiet, warnings (something dropped, repaired or salvaged) still print.

            Examples:
              extract-audio talk.mp4 talk.m4a
              extract-audio --track 1 interview.mov commentary.m4a
              extract-audio --salvage crashed-recording.mp4 rescued.m4a
              extract-audio *.mp4 --output-dir soundtracks/
              extract-audio probe --json movie.mp4
              extract-audio remux --from 1:05 --to 1:20.5 match.mp4 goal.mp4
              extract-audio mux holiday.mp4 --audio song1.m4a --audio song2.m4a holiday-music.mp4
              extract-audio tag --set title="Blue in Green" --set track=3/10 --cover front.jpg song.m4a
              extract-audio concat --chapters part1.m4a part2.m4a part3.m4a book.m4b
              extract-audio package --segment-duration 4 movie.mp4 movie-stream/

            Exit status:
              0 success            64 usage error, bad tag key or value   65 malformed or truncated input
              66 cannot open input 69 unsupported codec or cover image    73 output exists / cannot be created
                                   (tag: the file or its folder is read-only, or hard-linked)
              71 written and in place, but its folder could not be synced to disk
              74 I/O error (the destination left as it was)
              75 tag: the file is being edited by another run, try again
              79 no audio track    130/143 interrupted (SIGINT/SIGTERM)
              With several inputs: the status of the first that failed.
            """
    }

    /// The usage lines; one that starts with a space continues the line above.
    static func synopsis(_ lines: [String]) -> String {
        lines.map { "  " + ($0.hasPrefix(" ") ? String(repeating: " ", count: 14) : "extract-audio ") + $0 }
            .joined(separator: "\n")
    }

    /// The option rows, aligned: `  -t, --track N        help`; a long signature puts its
    /// help on the next line.
    static func rows(_ options: [Option]) -> String {
        let column = 28
        return options.map { option in
            let signature = "  " + option.signature
            return signature.count <= column - 2
                ? signature.padding(to: column) + option.help
                : signature + "\n" + "".padding(to: column) + option.help
        }.joined(separator: "\n")
    }
}
