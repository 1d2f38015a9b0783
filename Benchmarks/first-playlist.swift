// Time to the first playlist through SegmentSource (issue 31 point 2): plans the package of
// a movie and gives master.m3u8 and the first media playlist, RUNS times in one process.
// Built by Benchmarks/first-playlist.sh against the release objects; prints one line:
// "samples N runs R min X ms median Y ms".
import AudioRemux
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count >= 2, let runs = Int(arguments[1]), runs > 0 else {
    print("usage: first-playlist IN RUNS [--segment-duration S] [--single-file] [--iframes]")
    exit(64)
}
var options = PackageOptions()
var rest = arguments.dropFirst(2)
while let option = rest.popFirst() {
    switch option {
    case "--segment-duration": options.segmentSeconds = Double(rest.popFirst() ?? "") ?? 6
    case "--single-file": options.singleFile = true
    case "--iframes": options.iFramePlaylists = true
    default: print("unknown option \(option)"); exit(64)
    }
}
var times: [Double] = []
var bytes = 0
let clock = ContinuousClock()
for _ in 0..<runs {
    let start = clock.now
    let source = try SegmentSource(path: arguments[0], options: options)
    let media = source.fileNames.first { $0.hasSuffix(".m3u8") && $0 != "master.m3u8" } ?? "master.m3u8"
    for name in ["master.m3u8", media] {
        for case .bytes(let text) in try source.contents(of: name) ?? [] { bytes += text.count }
    }
    let elapsed = clock.now - start
    times.append(Double(elapsed.components.seconds) * 1e3 + Double(elapsed.components.attoseconds) / 1e15)
}
times.sort()
let median = times[times.count / 2]
print(String(format: "runs %d min %.2f ms median %.2f ms (playlist bytes %d)", runs, times[0], median, bytes / runs))
