import ISOBMFF

/// Chapter lists as text, in the two forms tools write: mp4chaps' lines
/// (`HH:MM:SS.mmm Title`, one chapter a line) and FFmpeg's metadata file (`;FFMETADATA1`,
/// then `[CHAPTER]` sections with `TIMEBASE=num/den`, `START=` and `title=`; a backslash
/// escapes `=`, `;`, `#`, `\` and a line break).
public enum ChapterFile {
    /// Parses `text` in either form (FFmpeg's when its first line is `;FFMETADATA1`).
    /// Throws ``RemuxError/Code/invalidArgument`` naming the line at fault; chapters come
    /// out sorted by start.
    public static func parse(_ text: String) throws(RemuxError) -> [Chapter] {
        try bridged {
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map {
                $0.hasSuffix("\r") ? String($0.dropLast()) : String($0)
            }
            let chapters = lines.first == ";FFMETADATA1" ? try ffmetadata(lines) : try mp4chaps(lines)
            return chapters.enumerated().sorted { ($0.element.start, $0.offset) < ($1.element.start, $1.offset) }
                .map(\.element)
        }
    }

    /// `HH:MM:SS.mmm Title` (or `MM:SS.mmm`, or seconds); blank lines and `#` comments skipped.
    static func mp4chaps(_ lines: [String]) throws -> [Chapter] {
        var chapters: [Chapter] = []
        for (n, line) in lines.enumerated() {
            let trimmed = line.drop(while: { $0 == " " || $0 == "\t" })
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            let time = trimmed.prefix(while: { $0 != " " && $0 != "\t" })
            let title = trimmed.dropFirst(time.count).drop(while: { $0 == " " || $0 == "\t" })
            guard let seconds = Self.seconds(String(time)) else {
                throw RemuxError(.invalidArgument, "chapter line \(n + 1): '\(line)' does not start with a time "
                                 + "HH:MM:SS.mmm")
            }
            chapters.append(Chapter(title: String(title), start: seconds))
        }
        return chapters
    }

    /// `[[h:]m:]s[.frac]` as seconds; nil for anything else.
    static func seconds(_ text: String) -> Double? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count) else { return nil }
        var total = 0.0
        for (i, part) in parts.enumerated() {
            let isLast = i == parts.count - 1
            guard !part.isEmpty, part.allSatisfy({ $0.isASCII && ($0.isNumber || (isLast && $0 == ".")) }),
                  let value = Double(part), value.isFinite else { return nil }
            total = total * 60 + value
        }
        return total
    }

    /// FFmpeg's metadata file: the `[CHAPTER]` sections (other sections and keys ignored).
    static func ffmetadata(_ lines: [String]) throws -> [Chapter] {
        // Join escaped line breaks first, keeping the escapes of the rest for `unescape`.
        var logical: [(String, Int)] = []
        var pending = ""
        var startLine = 0
        for (n, line) in lines.enumerated() {
            if pending.isEmpty { startLine = n + 1 }
            var trailing = 0
            for character in line.reversed() { if character == "\\" { trailing += 1 } else { break } }
            if trailing % 2 == 1 {
                pending += line.dropLast() + "\n"
                continue
            }
            logical.append((pending + line, startLine))
            pending = ""
        }
        var chapters: [Chapter] = []
        var section: String?
        var timebase = (1.0, 1000.0)
        var start: Double?
        var title = ""
        func finish(_ line: Int) throws {
            guard section == "CHAPTER" else { return }
            guard let start else {
                throw RemuxError(.invalidArgument, "chapter section ending at line \(line) has no START")
            }
            chapters.append(Chapter(title: title, start: start * timebase.0 / timebase.1))
        }
        for (line, number) in logical.dropFirst() {
            if line.hasPrefix(";") || line.hasPrefix("#") || line.isEmpty { continue }
            if line.hasPrefix("[") && line.hasSuffix("]") {
                try finish(number)
                section = String(line.dropFirst().dropLast())
                (timebase, start, title) = ((1, 1000), nil, "")
                continue
            }
            guard section == "CHAPTER" else { continue }
            let (key, value) = split(line)
            switch key {
            case "TIMEBASE":
                let parts = value.split(separator: "/")
                guard parts.count == 2, let num = Double(parts[0]), let den = Double(parts[1]), num > 0, den > 0 else {
                    throw RemuxError(.invalidArgument, "chapter line \(number): TIMEBASE '\(value)' is not num/den")
                }
                timebase = (num, den)
            case "START":
                guard let value = Double(value), value >= 0, value.isFinite else {
                    throw RemuxError(.invalidArgument, "chapter line \(number): START '\(value)' is not a number")
                }
                start = value
            case "title":
                title = value
            default:
                break
            }
        }
        try finish(lines.count)
        return chapters
    }

    /// A `key=value` line split at its first unescaped `=`, both unescaped.
    static func split(_ line: String) -> (String, String) {
        var key = ""
        var value = ""
        var inValue = false
        var escaped = false
        for character in line {
            if escaped {
                if inValue { value.append(character) } else { key.append(character) }
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == "=" && !inValue {
                inValue = true
            } else if inValue {
                value.append(character)
            } else {
                key.append(character)
            }
        }
        return (key, value)
    }
}
