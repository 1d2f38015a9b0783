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
    let movie = try Movie(reading: input)
    let chosen = trackIDs.isEmpty ? movie.tracks : try trackIDs.map { id in
        guard let track = movie.tracks.first(where: { $0.trackID == id }) else {
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
    for (index, track) in chosen.enumerated() where newIDs[track.trackID] == nil {
        newIDs[track.trackID] = UInt32(index + 1)
    }
    for track in chosen {
        var description = TrackDescription(copying: track)
        description.references = track.references.compactMapValues { ids in
            let kept = ids.compactMap { newIDs[$0] }
            return kept.isEmpty ? nil : kept
        }
        let id = try writer.addTrack(description)
        try writer.setEdits(track.editList?.entries, for: id)
        let boxes = movie.isFragmented ? try movie.fragmentedTrack(track, in: input).boxes : try track.sampleTable()
        let table = try SampleTable(boxes: boxes, fileLength: movie.fileLength)
        // Sample groups (AAC's roll distance, …) count the samples as they are copied.
        try writer.setSampleGroups(boxes.sampleGroupDescriptions, assignments: boxes.sampleToGroups, for: id)
        try forEachSample(of: table) { try writer.append($0, from: 0, to: id) }
    }
    let sink = try MovieFileSink(destination: paths[1], overwrite: overwrite, sources: [input])
    var target = sink
    let layout = fragmentSeconds.map { MovieWriter.Layout.fragmented(seconds: $0, segmentIndex: segmentIndex) }
    try writer.finish(layout ?? .progressive, into: &target)
    try sink.publish()
} catch {
    fail("\(error)", status: 1)
}

/// Calls `body` with every sample of `table` in decode order, walking the run-length
/// tables side by side (the reader's sample collection will do this for every caller).
func forEachSample(of table: SampleTable, _ body: (Sample) throws -> Void) throws {
    let boxes = table.boxes
    var timing = boxes.timeToSample.entries.makeIterator()
    var timingRun = timing.next()
    var timingLeft = timingRun?.sampleCount ?? 0
    var offsets = (boxes.compositionOffsets?.entries ?? []).makeIterator()
    var offsetRun = offsets.next()
    var offsetLeft = offsetRun?.sampleCount ?? 0
    let syncNumbers = boxes.syncSamples?.sampleNumbers
    var nextSync = 0
    var decodeTime: UInt64 = 0
    var index = 0
    var chunks = table.makeChunkIterator()
    while let chunk = chunks.next() {
        var offset = chunk.offset
        for _ in 0..<chunk.sampleCount {
            while timingLeft == 0, let run = timing.next() { (timingRun, timingLeft) = (run, run.sampleCount) }
            while offsetLeft == 0, let run = offsets.next() { (offsetRun, offsetLeft) = (run, run.sampleCount) }
            let size = boxes.sampleSizes.size(ofSample: index)
            let duration = timingRun?.sampleDelta ?? 0
            var isSync = true
            if let syncNumbers {
                while nextSync < syncNumbers.count, Int(syncNumbers[nextSync]) < index + 1 { nextSync += 1 }
                isSync = nextSync < syncNumbers.count && Int(syncNumbers[nextSync]) == index + 1
            }
            // ctts entries are signed in version 1; version 0 values above 2^31 are written
            // by encoders that meant negative offsets, and players read them so.
            let composition = offsetLeft > 0 ? Int64(Int32(bitPattern: offsetRun?.sampleOffset ?? 0)) : 0
            try body(Sample(offset: offset, size: size, decodeTime: decodeTime, compositionOffset: composition,
                            duration: duration, isSync: isSync, descriptionIndex: chunk.sampleDescriptionIndex))
            offset += UInt64(size)
            decodeTime += UInt64(duration)
            if timingLeft > 0 { timingLeft -= 1 }
            if offsetLeft > 0 { offsetLeft -= 1 }
            index += 1
        }
    }
}
