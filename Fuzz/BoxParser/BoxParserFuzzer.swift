// libFuzzer target: arbitrary bytes through the box parser and the sample-table checks.
// Built and run by Fuzz/run.sh; see Fuzz/README.md.
import ISOBMFF

/// Errors are the expected outcome for most inputs; only a trap, a hang, a huge
/// allocation or an error of an unexpected type is a finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBoxParser(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = data.map { [UInt8](UnsafeBufferPointer(start: $0, count: count)) } ?? []
    let source = MemoryByteSource(bytes)
    expectParserErrors {
        let movie = try Movie(reading: source)
        for track in movie.tracks {
            expectParserErrors {
                let table = try SampleTable(boxes: track.sampleTable(), fileLength: movie.fileLength,
                                            excluding: [movie.movieBoxRange])
                // What the extractor does next with a validated table: walk its chunks.
                var chunks = table.makeChunkIterator()
                while chunks.next() != nil {}
            }
            if movie.isFragmented {
                expectParserErrors {
                    let fragmented = try movie.fragmentedTrack(track, in: source)
                    _ = try SampleTable(boxes: fragmented.boxes, fileLength: movie.fileLength,
                                        excluding: [movie.movieBoxRange])
                }
            }
        }
    }
    expectParserErrors {
        var boxes = 0
        try BoxWalker.walk(source) { _, _ in boxes += 1 }
    }
    return 0
}

/// Runs `body`; an error other than ``ISOBMFFError`` is a bug (the parser's contract).
func expectParserErrors(_ body: () throws -> Void) {
    do {
        try body()
    } catch is ISOBMFFError {
    } catch {
        fatalError("unexpected error type \(type(of: error)): \(error)")
    }
}
