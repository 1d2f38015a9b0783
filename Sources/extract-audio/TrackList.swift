import AudioRemux
import ISOBMFF

/// The `--list` table: one line per track, with the track `extract-audio` takes by default
/// marked.
struct TrackList {
    let table: String

    init(path: String) throws {
        let tracks = try AudioExtractor.tracks(in: path)
        var rows = [["#", "ID", "KIND", "CODEC", "DURATION", "SAMPLES", "LANG", "ENABLED"]]
        var audioIndex = 0
        for track in tracks {
            var number = ""
            if track.isAudio {
                number = "a:\(audioIndex)"
                audioIndex += 1
            }
            rows.append([number, "\(track.trackID)", track.kind, track.format,
                         formatted(track.duration, digits: 3) + " s", "\(track.sampleCount)",
                         track.language ?? "-", track.isEnabled ? "yes" : "no"])
        }
        let widths = (0..<rows[0].count).map { column in rows.map { $0[column].count }.max() ?? 0 }
        table = rows.map { row in
            zip(row, widths).map { cell, width in cell + String(repeating: " ", count: width - cell.count) }
                .joined(separator: "  ").trimmingTrailingSpaces()
        }.joined(separator: "\n")
    }
}

extension String {
    func trimmingTrailingSpaces() -> String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}

/// `value` with `digits` decimals, without Foundation.
func formatted(_ value: Double, digits: Int) -> String {
    guard value.isFinite else { return "\(value)" }
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let scaled = (abs(value) * scale).rounded()
    guard scaled < 9e18 else { return "\(value)" }
    let whole = Int(scaled) / Int(scale)
    var fraction = String(Int(scaled) % Int(scale))
    while fraction.count < digits { fraction = "0" + fraction }
    return (value < 0 ? "-" : "") + "\(whole)" + (digits > 0 ? "." + fraction : "")
}
