// libFuzzer target: a video and one or two music clips through the whole in-memory mux.
// Built and run by Fuzz/run.sh; see Fuzz/README.md.
//
// Input layout (Fuzz/make-mux-seed.py writes seeds in it):
//   byte 0        flags: bit 0 --loop, bit 1 --keep-original-audio, bit 2 a second clip,
//                 bits 3-7 the music offset in quarter seconds (0 to 7.75 s)
//   bytes 1-4     the video's length n (big-endian, cut to what is left)
//   n bytes       the video
//   with a second clip: 4 bytes, the first clip's length m, then m bytes of it, the rest
//   the second clip; otherwise the rest is the one clip.
import AudioRemux
import ISOBMFF

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A thrown ``RemuxError`` is the expected outcome for most inputs (the only error the
/// recipe can throw: typed throws); a trap, a hang, a huge allocation or an output that
/// does not read back is a finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMux(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = data.map { [UInt8](UnsafeBufferPointer(start: $0, count: count)) } ?? []
    guard let input = MuxInput(bytes) else { return 0 }
    var sink = MemoryByteSink()
    do throws(RemuxError) {
        let result = try BackgroundMusic.mux(video: MemoryByteSource(input.video),
                                             music: input.clips.map { MemoryByteSource($0) }, to: &sink,
                                             options: input.options)
        guard UInt64(sink.data.count) == result.bytesWritten else {
            fatalError("wrote \(sink.data.count) bytes, planned \(result.bytesWritten)")
        }
        dumpForTriage(sink.data)
        if getenv("FUZZ_VERBOSE") != nil {
            print("mux: \(result.clipsPlaced) clips, \(result.musicDuration) s of \(result.videoDuration) s, "
                  + "\(result.bytesWritten) bytes")
        }
        checkOutput(sink.data, result: result)
    } catch {
        if getenv("FUZZ_VERBOSE") != nil { print("mux: \(error.code): \(error)") }
    }
    return 0
}

struct MuxInput {
    var options: MuxOptions
    var video: [UInt8]
    var clips: [[UInt8]]

    init?(_ bytes: [UInt8]) {
        guard bytes.count >= 5 else { return nil }
        let flags = bytes[0]
        options = MuxOptions(musicOffset: Double(flags >> 3) / 4, keepOriginalAudio: flags & 2 != 0,
                             loop: flags & 1 != 0)
        var rest = bytes[5...]
        func take(lengthAt start: Int) -> Int {
            let length = bytes[start..<(start + 4)].reduce(0) { $0 << 8 | Int($1) }
            return min(length, rest.count)
        }
        let videoLength = take(lengthAt: 1)
        video = Array(rest.prefix(videoLength))
        rest = rest.dropFirst(videoLength)
        if flags & 4 != 0, rest.count >= 4 {
            let start = rest.startIndex
            rest = rest.dropFirst(4)
            let first = take(lengthAt: start)
            clips = [Array(rest.prefix(first)), Array(rest.dropFirst(first))]
        } else {
            clips = [Array(rest)]
        }
    }
}

/// The output reads back: its tracks' tables validate, the music track is there and
/// enabled, and its edits present exactly what the result says.
func checkOutput(_ bytes: [UInt8], result: MuxResult) {
    do {
        let output = MemoryByteSource(bytes)
        let movie = try Movie(reading: output)
        guard movie.tracks.count == result.videoTrackCount + 1 || movie.tracks.count == result.videoTrackCount + 2 else {
            fatalError("the output has \(movie.tracks.count) tracks for \(result.videoTrackCount) video track(s)")
        }
        for track in movie.tracks {
            let table = try SampleTable(boxes: track.sampleTable(), fileLength: movie.fileLength,
                                        excluding: [movie.movieBoxRange])
            if track.trackID == UInt32(result.videoTrackCount + 1) {
                guard track.isAudio, table.sampleCount > 0 else {
                    fatalError("the music track is \(track.handlerType) with \(table.sampleCount) samples")
                }
            }
        }
    } catch {
        fatalError("the output does not parse: \(error)")
    }
}

/// For triage: `FUZZ_OUTPUT=path fuzz-mux input` writes the muxed file to `path`;
/// `FUZZ_VERBOSE=1` prints the outcome.
func dumpForTriage(_ bytes: [UInt8]) {
    guard let path = getenv("FUZZ_OUTPUT"), let file = fopen(path, "wb") else { return }
    _ = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
    fclose(file)
}
