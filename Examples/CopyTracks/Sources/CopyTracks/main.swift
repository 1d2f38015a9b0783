// Darwin review (issue 21). CI builds this file on Linux only; the calls below were checked
// line by line against Apple's manual pages (section in parentheses) for the Darwin branch:
//   - exit(3), write(2): the same on Darwin; the import preamble is the only branch.
// Copies chosen tracks of an MP4 or MOV (regular or fragmented) into a new MP4, sample by
// sample, through the public writer: the track descriptions, edit lists and metadata are
// kept, the sample bytes are copied from the input by the sink (in the kernel where it
// can). No Foundation.
//
//   CopyTracks [--overwrite] [--track ID]... [--fragment SECONDS [--sidx]] INPUT OUTPUT
//
// Without --track every track is copied; with --fragment the output is fragmented (fMP4)
// with fragments of about SECONDS, cut at the video's sync samples, and with --sidx a
// segment index before the first fragment.
// Exit status: 0 on success, 1 when the copy failed, 2 on a usage error.

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import AudioRemux
import ISOBMFF

func fail(_ message: String, status: Int32) -> Never {
    var stderr = StreamSink(descriptor: 2, name: "standard error")
    try? stderr.write(Array("CopyTracks: \(message)\n".utf8))
    exit(status)
}

var trackIDs: [UInt32] = []
var fragmentSeconds: Double?
var overwrite = false
var segmentIndex = false
var paths: [String] = []
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--overwrite":
        overwrite = true
    case "--sidx":
        segmentIndex = true
    case "--track":
        guard let value = arguments.popFirst(), let id = UInt32(value) else {
            fail("--track needs a track ID", status: 2)
        }
        trackIDs.append(id)
    case "--fragment":
        guard let value = arguments.popFirst(), let seconds = Double(value), seconds > 0 else {
            fail("--fragment needs a positive number of seconds", status: 2)
        }
        fragmentSeconds = seconds
    default:
        guard !argument.hasPrefix("-") else { fail("unknown option \(argument)", status: 2) }
        paths.append(argument)
    }
}
guard paths.count == 2 else {
    fail("usage: CopyTracks [--overwrite] [--track ID]... [--fragment SECONDS [--sidx]] INPUT OUTPUT", status: 2)
}

do {
    let input = try InputFile(path: paths[0])
    // The reader: tracks, their descriptions and samples, regular or fragmented alike.
    let reader = try MovieReader(reading: input)
    let movie = reader.movie
    let chosen = trackIDs.isEmpty ? reader.tracks : try trackIDs.map { id in
        guard let track = reader.track(id: id) else {
            throw RemuxError(.invalidArgument, "\(paths[0]) has no track with ID \(id)")
        }
        return track
    }
    var writer = MovieWriter(movieTimescale: movie.header.timescale)
    if movie.fileType?.isQuickTime ?? true { writer.fileType = movie.fileType }
    writer.userData = movie.userData
    writer.metadata = movie.metadata
    // Track IDs are renumbered 1, 2, … in the output: references (chapters) follow.
    var newIDs: [UInt32: UInt32] = [:]
    for (index, track) in chosen.enumerated() where newIDs[track.id] == nil {
        newIDs[track.id] = UInt32(index + 1)
    }
    for track in chosen {
        var description = TrackDescription(copying: track.track)
        description.references = track.track.references.compactMapValues { ids in
            let kept = ids.compactMap { newIDs[$0] }
            return kept.isEmpty ? nil : kept
        }
        let id = try writer.addTrack(description)
        // The input's own edit list, as it is (the reader's presentation would fit it).
        try writer.setEdits(track.editList?.entries, for: id)
        // Sample groups (AAC's roll distance, …) count the samples as they are copied.
        let groups = try reader.sampleGroups(of: track)
        try writer.setSampleGroups(groups.descriptions, assignments: groups.assignments, for: id)
        // Every sample in decode order, copied by range from source 0 (the input).
        for sample in try reader.samples(of: track) { try writer.append(sample, from: 0, to: id) }
    }
    let sink = try MovieFileSink(destination: paths[1], overwrite: overwrite, sources: [input])
    var target = sink
    let layout = fragmentSeconds.map { MovieWriter.Layout.fragmented(seconds: $0, segmentIndex: segmentIndex) }
    try writer.finish(layout ?? .progressive, into: &target)
    try sink.publish()
} catch {
    fail("\(error)", status: 1)
}
