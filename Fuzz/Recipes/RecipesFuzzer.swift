// libFuzzer target: arbitrary bytes through the recipes above the box layer, in memory and
// with hostile times (issue 29) — remux (whole, cut, fragmented, into a QuickTime movie),
// an audio cut, --split-chapters and tag listing (with chapters replaced). Built and run
// by Fuzz/run.sh; see Fuzz/README.md.
import AudioRemux
import ISOBMFF

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRecipes(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = data.map { [UInt8](UnsafeBufferPointer(start: $0, count: count)) } ?? []
    let source = MemoryByteSource(bytes)
    var times = HostileTimes(bytes)
    remux(source, options: RemuxOptions(), name: "whole.mp4")
    var cut = RemuxOptions(range: times.range())
    // The fragment length is the caller's (the CLI checks it), not the file's: sane ones.
    cut.fragmentSeconds = [nil, 0.001, 0.5, 2][Int(times.next() % 4)]
    remux(source, options: cut, name: times.next() & 1 == 0 ? "cut.mp4" : "cut.mov")
    var audio = RemuxOptions(range: times.range())
    audio.audioOnly = true
    audio.keepMetadata = times.next() & 1 == 0
    remux(source, options: audio, name: "audio.m4a")
    var options = ExtractionOptions()
    options.range = times.range()
    extract(source, options: options)
    split(source)
    listTags(source, chapters: times.chapters())
    return 0
}

/// Times from the input's hash (SplitMix64), most of them at the edges of what the types
/// hold: 0, one tick, 2^32, 2^53, 2^63 and UInt64.max nanoseconds, and seconds that are
/// negative, huge, infinite or NaN.
struct HostileTimes {
    var state: UInt64

    init(_ bytes: [UInt8]) {
        state = bytes.reduce(0x9E37_79B9_7F4A_7C15 as UInt64) { ($0 ^ UInt64($1)) &* 0x100_0000_01B3 }
    }

    /// SplitMix64: wrapping arithmetic is its definition.
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func nanoseconds() -> UInt64 {
        let edges: [UInt64] = [0, 1, 999_999_999, 1_000_000_000, 1 << 32, 1 << 53, 1 << 63, (1 << 63) - 1,
                               UInt64.max, UInt64.max - 1, 500_000_000, 1_500_000_000]
        let pick = next()
        return pick & 3 == 0 ? next() % 4_000_000_000 : pick & 3 == 1 ? next() : edges[Int(next() % UInt64(edges.count))]
    }

    mutating func range() -> CutRange {
        let from = CutTime(nanoseconds: nanoseconds())
        let to = next() & 3 == 0 ? nil : CutTime(nanoseconds: nanoseconds())
        return CutRange(from: from, to: to)
    }

    mutating func seconds() -> Double {
        let edges: [Double] = [0, -1, 1e-9, 0.5, 2, 1e18, 9.3e18, 1.8e19, 1e300, .infinity, -.infinity, .nan,
                               .leastNonzeroMagnitude, .greatestFiniteMagnitude]
        return edges[Int(next() % UInt64(edges.count))]
    }

    mutating func chapters() -> [Chapter] {
        (0..<Int(next() % 4)).map { Chapter(title: "Chapter \($0)", start: seconds()) }
    }
}

/// A thrown ``RemuxError`` is the expected outcome for most inputs; only a trap, a hang, a
/// huge allocation, an error of another type or an output that does not read back is a
/// finding.
func expecting<T>(_ what: String, _ body: () throws -> T) -> T? {
    do {
        return try body()
    } catch let error as RemuxError {
        if getenv("FUZZ_VERBOSE") != nil { print("\(what): \(error.code): \(error)") }
        return nil
    } catch {
        fatalError("\(what): unexpected error type \(type(of: error)): \(error)")
    }
}

/// The written file is as long as planned and reads back: each of its tracks' tables hold.
func checkOutput(_ what: String, _ sink: MemoryByteSink, planned: UInt64) {
    guard UInt64(sink.data.count) == planned else {
        fatalError("\(what): wrote \(sink.data.count) bytes, planned \(planned)")
    }
    let output = MemoryByteSource(sink.data)
    do {
        let reader = try MovieReader(reading: output)
        for track in reader.tracks {
            _ = try reader.samples(of: track)
        }
    } catch {
        fatalError("\(what): the output does not read back: \(error)")
    }
    if getenv("FUZZ_VERBOSE") != nil { print("\(what): \(sink.data.count) bytes") }
}

func remux(_ source: MemoryByteSource, options: RemuxOptions, name: String) {
    var sink = MemoryByteSink()
    guard let result = expecting("remux \(name)", { try Remux.run(from: source, to: &sink, name: name,
                                                                  options: options) }) else { return }
    // Fragments are read back by the extraction target's checks; a progressive file here.
    if options.fragmentSeconds == nil { checkOutput("remux \(name)", sink, planned: result.bytesWritten) }
}

func extract(_ source: MemoryByteSource, options: ExtractionOptions) {
    var sink = MemoryByteSink()
    guard let result = expecting("cut", { try AudioExtractor.extract(from: source, to: &sink, options: options) })
    else { return }
    checkOutput("cut", sink, planned: result.bytesWritten)
}

/// --split-chapters: every piece (at most 8) cut into memory.
func split(_ source: MemoryByteSource) {
    guard let split = expecting("split", { try ChapterSplit(source: source) }) else { return }
    for piece in split.pieces.prefix(8) {
        var sink = MemoryByteSink()
        guard let result = expecting("split \(piece.fileName)", { try split.write(piece, from: source, to: &sink) })
        else { continue }
        checkOutput("split \(piece.fileName)", sink, planned: result.bytesWritten)
    }
}

/// `tag FILE` (the listing, as the command prints it), then with the chapters replaced.
func listTags(_ source: MemoryByteSource, chapters: [Chapter]) {
    if let listed = expecting("tag", { try TagFile.list(source) }) {
        for chapter in listed.chapters { _ = MediaTime.clock(seconds: chapter.start) }
        for item in listed.tags.items { _ = "\(item.key) \(item.value)" }
    }
    var changes = TagChanges()
    changes.chapters = chapters
    if let listed = expecting("tag --chapters-from", { try TagFile.list(source, applying: changes) }) {
        for chapter in listed.chapters { _ = MediaTime.clock(seconds: chapter.start) }
    }
}
