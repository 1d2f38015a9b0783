import AudioRemux
import ISOBMFF

/// A minimal JSON writer (the CLI avoids Foundation to start fast).
enum JSON {
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)
    case null
    case array([JSON])
    /// Keys keep their order.
    case object([(String, JSON)])

    static func optional(_ value: Int?) -> JSON { value.map(JSON.int) ?? .null }
    static func optional(_ value: String?) -> JSON { value.map(JSON.string) ?? .null }
    static func optional(_ value: Double?) -> JSON { value.map(JSON.double) ?? .null }
    /// `dropped_tracks` of remux and package: each damaged input track left out.
    static func droppedTracks(_ tracks: [RemuxResult.DroppedTrack]) -> JSON {
        .array(tracks.map { JSON.object([("track_id", .int(Int($0.trackID))), ("reason", .string($0.reason))]) })
    }

    /// On one line, for JSON Lines output.
    var compactText: String {
        switch self {
        case .array(let values): return "[" + values.map(\.compactText).joined(separator: ", ") + "]"
        case .object(let members):
            return "{" + members.map { Self.quoted($0.0) + ": " + $0.1.compactText }.joined(separator: ", ") + "}"
        default: return text
        }
    }

    var text: String {
        var output = ""
        write(to: &output, indent: "")
        return output
    }

    private func write(to output: inout String, indent: String) {
        switch self {
        case .string(let value): output += Self.quoted(value)
        case .int(let value): output += String(value)
        case .double(let value): output += value.isFinite ? "\(value)" : "null"
        case .bool(let value): output += value ? "true" : "false"
        case .null: output += "null"
        case .array(let values):
            guard !values.isEmpty else { output += "[]"; return }
            output += "[\n"
            for (i, value) in values.enumerated() {
                output += indent + "  "
                value.write(to: &output, indent: indent + "  ")
                output += i + 1 < values.count ? ",\n" : "\n"
            }
            output += indent + "]"
        case .object(let members):
            guard !members.isEmpty else { output += "{}"; return }
            output += "{\n"
            for (i, (key, value)) in members.enumerated() {
                output += indent + "  " + Self.quoted(key) + ": "
                value.write(to: &output, indent: indent + "  ")
                output += i + 1 < members.count ? ",\n" : "\n"
            }
            output += indent + "}"
        }
    }

    static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20:
                result += "\\u" + scalar.value.hexDigits(4)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
