// libFuzzer target: arbitrary bytes through the whole in-memory extraction path.
// Built and run by Fuzz/run.sh; see Fuzz/README.md.
import AudioRemux
import ISOBMFF

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A thrown ``RemuxError`` is the expected outcome for most inputs (the only error the
/// recipe can throw: typed throws); a trap, a hang or a huge allocation is a finding. A
/// truncated input is extracted a second time with salvage on, which takes the other path
/// through the tables.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzExtraction(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = data.map { [UInt8](UnsafeBufferPointer(start: $0, count: count)) } ?? []
    let source = MemoryByteSource(bytes)
    if extract(source, options: ExtractionOptions()) == .truncatedInput {
        _ = extract(source, options: ExtractionOptions(salvage: true))
    }
    return 0
}

/// Extracts into memory and returns the error code, if any.
func extract(_ source: MemoryByteSource, options: ExtractionOptions) -> RemuxError.Code? {
    var sink = MemoryByteSink()
    do throws(RemuxError) {
        let result = try AudioExtractor.extract(from: source, to: &sink, options: options)
        // The planned size is what was written.
        guard UInt64(sink.data.count) == result.bytesWritten else {
            fatalError("wrote \(sink.data.count) bytes, planned \(result.bytesWritten)")
        }
        dumpForTriage(sink.data)
        if getenv("FUZZ_VERBOSE") != nil { print("extraction: \(result.sampleCount) samples, \(result.bytesWritten) bytes") }
        // And the output reads back: its first track is the audio, whose tables hold the
        // samples copied (a chapter track may follow).
        do {
            let output = MemoryByteSource(sink.data)
            let movie = try Movie(reading: output)
            guard let track = movie.tracks.first, track.isAudio else {
                fatalError("the output's first track is not audio (\(movie.tracks.map(\.handlerType)))")
            }
            let table = try SampleTable(boxes: track.sampleTable(), fileLength: movie.fileLength,
                                        excluding: [movie.movieBoxRange])
            guard table.sampleCount == result.sampleCount else {
                fatalError("the output has \(table.sampleCount) samples, the result says \(result.sampleCount)")
            }
            for other in movie.tracks.dropFirst() {
                _ = try SampleTable(boxes: other.sampleTable(), fileLength: movie.fileLength,
                                    excluding: [movie.movieBoxRange])
            }
        } catch {
            fatalError("the output does not parse: \(error)")
        }
        return nil
    } catch {
        if getenv("FUZZ_VERBOSE") != nil { print("extraction: \(error.code): \(error)") }
        return error.code
    }
}

/// For triage: `FUZZ_OUTPUT=path fuzz-extraction input` writes the extracted file to `path`;
/// `FUZZ_VERBOSE=1` prints the outcome.
func dumpForTriage(_ bytes: [UInt8]) {
    guard let path = getenv("FUZZ_OUTPUT"), let file = fopen(path, "wb") else { return }
    _ = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
    fclose(file)
}
