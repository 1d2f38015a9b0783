// libFuzzer target driven by the structure-aware mutator (Mutator.swift): every input goes
// through extraction (with salvage when truncated), a mux (as the video, then as the music)
// and probe, over in-memory sources, and a
// successful extraction's OUTPUT must be readable: it parses back, holds exactly one audio
// track (plus at most a text chapter track), nothing of track shape inside udta/meta, no
// size-0 box below the top level, and no box deeper than FFmpeg reads (OutputCheck.swift).
// Built and run by Fuzz/run.sh; see Fuzz/README.md.
import AudioRemux
import ISOBMFF

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzStructured(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = data.map { [UInt8](UnsafeBufferPointer(start: $0, count: count)) } ?? []
    currentInput = bytes
    let limit = HeapPeak.limit(inputBytes: count, tableBytes: HeapPeak.tableBytes(bytes))
    let baseline = HeapPeak.start()
    defer {
        let grown = HeapPeak.peak - baseline
        if verbose { print("heap: \(grown >> 10) KiB at the peak, limit \(limit >> 10) KiB") }
        if grown > limit {
            outputFinding("18-memory", "an input of \(count) bytes took \(grown >> 20) MiB of heap (limit \(limit >> 20) MiB)")
        }
    }
    let source = MemoryByteSource(bytes)
    if extract(source, options: ExtractionOptions()) == .truncatedInput {
        _ = extract(source, options: ExtractionOptions(salvage: true))
    }
    // The input as the video under a fixed clip (issue 11's classes 17 and 18: a video's
    // claimed durations driving the mux), then as the clip under a fixed video (class 20: a
    // clip's tables). Without --loop: looping fills the video's claimed length up to
    // Limits.maximumMusicPackets, legitimate work that takes seconds under ASan; the mux
    // target and MuxHardeningTests cover --loop.
    if let partner = muxPartner {
        mux(video: source, music: partner, role: "video")
        mux(video: partner, music: source, role: "clip")
    }
    do throws(RemuxError) {
        let report = try AudioExtractor.probe(source)
        if verbose { print("probe: \(report.tracks.count) tracks, \(report.duration) s") }
    } catch {
        if verbose { print("probe: \(error.code): \(error)") }
    }
    return 0
}

let verbose = getenv("FUZZ_VERBOSE") != nil

/// The other input of a mux: `Fixtures/aac-h264-faststart.mp4` (a video with AAC audio), read
/// once; run.sh runs the target from the repository's root (`FUZZ_MUX_PARTNER` overrides).
let muxPartner: MemoryByteSource? = {
    let path = getenv("FUZZ_MUX_PARTNER").map { String(cString: $0) } ?? "Fixtures/aac-h264-faststart.mp4"
    guard let file = fopen(path, "rb") else { return nil }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let count = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
        guard count > 0 else { break }
        bytes += chunk[0..<count]
    }
    return MemoryByteSource(bytes)
}()

/// A mux whose output, when there is one, must read back with the music track audio and
/// pass the same structure check as an extraction's (depth, size-0 boxes, copied tracks).
func mux(video: MemoryByteSource, music: MemoryByteSource, role: String) {
    var sink = MemoryByteSink()
    do {
        let result = try BackgroundMusic.mux(video: video, music: [music], to: &sink, options: MuxOptions())
        guard UInt64(sink.data.count) == result.bytesWritten else {
            finding("mux (input as the \(role)) wrote \(sink.data.count) bytes, planned \(result.bytesWritten)")
        }
        if verbose { print("mux (input as the \(role)): \(result.bytesWritten) bytes") }
        let movie = try Movie(reading: MemoryByteSource(sink.data))
        for track in movie.tracks {
            _ = try SampleTable(boxes: track.sampleTable(), fileLength: movie.fileLength,
                                excluding: [movie.movieBoxRange])
        }
        guard movie.tracks.contains(where: \.isAudio) else {
            outputFinding("20-mux-no-music", "the mux output (input as the \(role)) has no audio track")
            return
        }
        if let (problemClass, message) = OutputCheck.problem(in: sink.data) {
            outputFinding(problemClass + "-mux", "mux (input as the \(role)): " + message)
        }
    } catch let error as RemuxError {
        if verbose { print("mux (input as the \(role)): \(error.code): \(error)") }
    } catch let error as ISOBMFFError {
        finding("the mux output (input as the \(role)) does not parse: \(error)")
    } catch {
        finding("mux (input as the \(role)) threw an unexpected error type \(type(of: error)): \(error)")
    }
}

/// Prints what is wrong and aborts, which libFuzzer records as a crash.
func finding(_ message: String) -> Never {
    let line = "FINDING: \(message)\n"
    _ = line.withCString { write(2, $0, strlen($0)) }
    abort()
}

nonisolated(unsafe) var currentInput: [UInt8] = []
nonisolated(unsafe) var recorded: Set<String> = []

/// An unreadable output (classes 4, 19, 20: no trap) is a finding like a crash, unless
/// `FUZZ_FINDINGS_DIR` is set: then the input is saved there as `CLASS-N.mp4` (at most 5 per
/// class in that folder, across runs and fork jobs) and fuzzing goes on, so that a long
/// campaign is not stopped over and over by one known class and still reaches traps, hangs
/// and memory blow-ups.
func outputFinding(_ problemClass: String, _ message: String) {
    guard let dir = getenv("FUZZ_FINDINGS_DIR").map({ String(cString: $0) }) else {
        finding("[\(problemClass)] \(message)")
    }
    guard !recorded.contains(problemClass) else { return }
    recorded.insert(problemClass)
    var free: String?
    for index in 0..<5 where free == nil {
        let candidate = "\(dir)/\(problemClass)-\(index).mp4"
        if access(candidate, F_OK) != 0 { free = candidate }
    }
    guard let path = free else { return }
    let line = "FINDING (recorded as \(path)): [\(problemClass)] \(message)\n"
    _ = line.withCString { write(2, $0, strlen($0)) }
    guard let file = fopen(path, "wb") else { return }
    _ = currentInput.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
    fclose(file)
}

func extract(_ source: MemoryByteSource, options: ExtractionOptions) -> RemuxError.Code? {
    var sink = MemoryByteSink()
    do throws(RemuxError) {
        let result = try AudioExtractor.extract(from: source, to: &sink, options: options)
        guard UInt64(sink.data.count) == result.bytesWritten else {
            finding("wrote \(sink.data.count) bytes, planned \(result.bytesWritten)")
        }
        dumpForTriage(sink.data)
        if verbose { print("extraction: \(result.sampleCount) samples, \(result.bytesWritten) bytes") }
        checkOutput(sink.data, sampleCount: result.sampleCount)
        return nil
    } catch {
        if verbose { print("extraction: \(error.code): \(error)") }
        return error.code
    }
}

/// The output parses back with our parser, its first track is the audio with the samples
/// copied, any other track is a text (chapter) track, and its structure is one FFmpeg reads.
func checkOutput(_ output: [UInt8], sampleCount: Int) {
    do {
        let movie = try Movie(reading: MemoryByteSource(output))
        guard let track = movie.tracks.first, track.isAudio else {
            outputFinding("19-not-audio", "the output's first track is not audio (\(movie.tracks.map(\.handlerType)))")
            return
        }
        let table = try SampleTable(boxes: track.sampleTable(), fileLength: movie.fileLength,
                                    excluding: [movie.movieBoxRange])
        guard table.sampleCount == sampleCount else {
            finding("the output has \(table.sampleCount) samples, the result says \(sampleCount)")
        }
        for other in movie.tracks.dropFirst() {
            let kind = other.handlerType.description
            guard kind == "text" || kind == "sbtl" else {
                outputFinding("19-\(kind)-track", "the audio-only output holds a track of type '\(kind)' (\(movie.tracks.count) tracks)")
                return
            }
            _ = try SampleTable(boxes: other.sampleTable(), fileLength: movie.fileLength,
                                excluding: [movie.movieBoxRange])
        }
    } catch {
        finding("the output does not parse: \(error)")
    }
    if let (problemClass, message) = OutputCheck.problem(in: output) { outputFinding(problemClass, message) }
}

/// `FUZZ_OUTPUT=path fuzz-structured input` writes the extracted file to `path`.
func dumpForTriage(_ bytes: [UInt8]) {
    guard let path = getenv("FUZZ_OUTPUT"), let file = fopen(path, "wb") else { return }
    _ = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
    fclose(file)
}
