// Darwin review (issue 21). CI builds this file on Linux only; the calls below were checked
// line by line against Apple's manual pages (section in parentheses) for the Darwin branch:
//   - exit(3), write(2): the same on Darwin; the import preamble is the only branch.
// Writes an MP4 holding a silent AAC-LC track (stereo, 44.1 kHz) made up from one fixed
// frame: a track built from a codec configuration, samples made in memory and spilled to a
// temporary file as they come (the writer keeps only the tables). No
// Foundation.
//
//   SilentAAC [--overwrite] [--fragment SECONDS] OUTPUT [DURATION-SECONDS]
//
// The duration (default 5 s) is rounded up to whole frames of 1024 samples.
// Exit status: 0 on success, 1 when writing failed, 2 on a usage error.

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import AudioRemux
import ISOBMFF

/// One raw AAC-LC frame of digital silence for 2 channels: a channel pair element whose
/// spectra are all zero. Made with
///   ffmpeg -f lavfi -i anullsrc=r=44100:cl=stereo -t 0.2 -c:a aac -f adts -
/// (FFmpeg 5.1), taking the second ADTS frame (the first carries the encoder's version
/// string in a fill element) without its 7-byte header.
let silentFrame: [UInt8] = [0x21, 0x10, 0x04, 0x60, 0x8C, 0x1C]

/// AudioSpecificConfig (ISO/IEC 14496-3 § 1.6.2.1): object type 2 (AAC-LC, 5 bits),
/// sampling frequency index 4 (44100 Hz, 4 bits), channel configuration 2 (stereo, 4 bits),
/// then frameLengthFlag, dependsOnCoreCoder and extensionFlag all 0.
let audioSpecificConfig: [UInt8] = [0x12, 0x10]

func fail(_ message: String, status: Int32) -> Never {
    var stderr = StreamSink(descriptor: 2, name: "standard error")
    try? stderr.write(Array("SilentAAC: \(message)\n".utf8))
    exit(status)
}

var fragmentSeconds: Double?
var overwrite = false
var positional: [String] = []
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--overwrite":
        overwrite = true
    case "--fragment":
        guard let value = arguments.popFirst(), let seconds = Double(value), seconds > 0 else {
            fail("--fragment needs a positive number of seconds", status: 2)
        }
        fragmentSeconds = seconds
    default:
        guard !argument.hasPrefix("-") else { fail("unknown option \(argument)", status: 2) }
        positional.append(argument)
    }
}
guard (1...2).contains(positional.count) else {
    fail("usage: SilentAAC [--overwrite] [--fragment SECONDS] OUTPUT [DURATION-SECONDS]", status: 2)
}
let seconds = positional.count == 2 ? Double(positional[1]) ?? -1 : 5
guard seconds > 0, seconds <= 86_400 else { fail("the duration must be a number of seconds, up to a day", status: 2) }

do {
    var writer = MovieWriter(movieTimescale: 1000)
    let track = try writer.addTrack(TrackDescription(.aac(audioSpecificConfig: audioSpecificConfig,
                                                          sampleRate: 44_100, channelCount: 2), language: "eng"))
    let frames = Int((seconds * 44_100 / 1024).rounded(.up))
    // The frames go to a temporary file as they are made (source 0 of the sink), so that a
    // day of audio costs the writer its tables only, not the frames' bytes.
    let spill = try SpillFile()
    var store = spill
    for _ in 0..<frames {
        try writer.append(silentFrame, duration: 1024, to: track, spillingTo: &store, asSource: 0)
    }
    let sink = try MovieFileSink(destination: positional[0], overwrite: overwrite, sources: [spill])
    var target = sink
    try writer.finish(fragmentSeconds.map { .fragmented(seconds: $0) } ?? .progressive, into: &target)
    try sink.publish()
    var stdout = StreamSink()
    let line = "\(positional[0]): \(frames) silent AAC frames, \(frames * 1024) samples at 44100 Hz\n"
    try stdout.write(Array(line.utf8))
} catch {
    fail("\(error)", status: 1)
}
