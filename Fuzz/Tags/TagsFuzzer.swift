// libFuzzer target: arbitrary bytes through the tag code — the ilst item list read and
// written back, the user-data tags, the chapter-file parser and the tag rewrite plan over
// arbitrary top-level boxes. Built and run by Fuzz/run.sh; see Fuzz/README.md.
import AudioRemux
import ISOBMFF

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTags(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = data.map { [UInt8](UnsafeBufferPointer(start: $0, count: count)) } ?? []
    itemListRoundTrip(bytes)
    userDataTags(bytes)
    chapterFile(bytes)
    rewritePlan(bytes)
    return 0
}

/// The input as an `ilst` payload: read, written back, read again. Items kept byte for
/// byte must come back identical; items written from their typed values must come back
/// with the same keys, in the same order, and text, pairs, flags and images unchanged.
func itemListRoundTrip(_ bytes: [UInt8]) {
    let list = ItemList(parsing: ByteReader(bytes))
    let again = ItemList(parsing: payload(ofIlst: list.bytes))
    guard again.items == list.items else { fatalError("ilst round trip changed the items: \(list.items) -> \(again.items)") }
    // A `uuid` item (no key names one: TagKey refuses it) can only be kept as read.
    var rebuilt = list
    rebuilt.items.removeAll { $0.key == .code("uuid") }
    for index in rebuilt.items.indices { rebuilt.items[index].originalBytes = nil }
    let typed = ItemList(parsing: payload(ofIlst: rebuilt.bytes))
    guard typed.items.map(\.key) == rebuilt.items.map(\.key) else {
        fatalError("ilst written from values changed the keys: \(rebuilt.items.map(\.key)) -> \(typed.items.map(\.key))")
    }
    for (before, after) in zip(rebuilt.items, typed.items) {
        switch before.value {
        case .text, .pair, .flag, .images:
            guard before.value == after.value else {
                fatalError("\(before.key): \(before.value) written and read back as \(after.value)")
            }
        default:
            break
        }
    }
}

/// The payload of an `ilst` box written by ``ItemList/bytes``.
func payload(ofIlst box: [UInt8]) -> ByteReader {
    var reader = ByteReader(box)
    guard let (header, payload) = try? reader.readBox(depth: 1), header.type == "ilst" else {
        fatalError("ItemList.bytes is not an ilst box")
    }
    return payload
}

/// The input as a whole `udta`: its tags read, a title set, the `udta` written, read again.
func userDataTags(_ bytes: [UInt8]) {
    var list = ItemList(userData: bytes)
    list.set(.text(["Fuzz"]), for: .code("©nam"))
    guard let written = list.userData(replacingIn: bytes) else { fatalError("no udta written for a title") }
    guard ItemList(userData: written)[.code("©nam")] == .text(["Fuzz"]) else {
        fatalError("the title set is not read back from the udta written")
    }
}

/// The input as a chapter file: chapters or a RemuxError, nothing else.
func chapterFile(_ bytes: [UInt8]) {
    do throws(RemuxError) {
        let chapters = try ChapterFile.parse(String(decoding: bytes, as: UTF8.self))
        for (a, b) in zip(chapters, chapters.dropFirst()) where a.start > b.start {
            fatalError("chapters out of order: \(a.start) before \(b.start)")
        }
    } catch {
        // The expected outcome for most inputs; typed throws rule out any other error.
    }
}

/// The input as a file: its top-level boxes, and where there is a `moov`, a rewrite with a
/// new title and an in-place edit planned. The plan copies only bytes inside the file; its
/// output, assembled, has one `moov` first among the boxes it wrote, whose tags have the title.
func rewritePlan(_ bytes: [UInt8]) {
    // The top-level boxes as TagFile reads them: a header at a time, each at its offset.
    var boxes: [BoxHeader] = []
    var offset = 0
    while bytes.count - offset >= 8 && boxes.count < 64 {
        var reader = ByteReader(Array(bytes[offset..<min(bytes.count, offset + 32)]), fileOffset: UInt64(offset))
        guard let header = try? BoxHeader(parsing: &reader, available: UInt64(bytes.count - offset), parentPath: ""),
              header.end <= UInt64(bytes.count) else { break }
        boxes.append(header)
        offset = Int(header.end)
    }
    guard let moov = boxes.first(where: { $0.type == "moov" }) else { return }
    let movieBox = Array(bytes[Int(moov.offset)..<Int(moov.end)])
    // The udta as TagFile.Layout finds it.
    let oldUserData = try? BoxWalker.firstChild("udta", of: movieBox)
    var tags = ItemList(userData: oldUserData ?? [])
    tags.set(.text(["Fuzz"]), for: .code("©nam"))
    let userData = tags.userData(replacingIn: oldUserData)
    // The chapter change a `tag --chapters-from` makes: every text track dropped (and the
    // tref entries naming them), a two-chapter track added, so that ChapterTrack.movieBox
    // and the plan's chapter mdat run on the fuzzed moov too.
    var removed = Set<UInt32>()
    var lastID: UInt32 = 0
    let movie = try? Movie(reading: MemoryByteSource(bytes))
    if let movie {
        for track in movie.tracks {
            lastID = max(lastID, track.trackID)
            if ["text", "sbtl"].contains(track.handlerType) { removed.insert(track.trackID) }
        }
    }
    let chapterTrack = try? ChapterTrack(chapters: [Chapter(title: "One", start: 0), Chapter(title: "Two", start: 1)],
                                         endingAt: 2)
    let change = ChapterTrack.Change(tracks: movie?.tracks ?? [], removedTracks: removed, track: chapterTrack,
                                     trackID: lastID < UInt32.max - 1 ? lastID + 1 : 1)
    do {
        _ = try TagRewritePlan.inPlaceEdit(boxes: boxes, movieBox: movieBox, userData: userData, chapters: change)
        let plan = try TagRewritePlan(boxes: boxes, movieBox: movieBox, userData: userData, chapters: change)
        var output: [UInt8] = []
        for piece in plan.pieces {
            switch piece {
            case .copy(let offset, let count), .shift(let offset, let count, _):
                guard offset <= UInt64(bytes.count), count <= UInt64(bytes.count) - offset else {
                    fatalError("the plan reads \(count) bytes at \(offset) of a \(bytes.count)-byte file")
                }
                let part = Array(bytes[Int(offset)..<Int(offset + count)])
                if case .shift = piece {
                    output += (try? TagRewritePlan.shiftedFragmentBox(part, by: plan.delta, threshold: plan.threshold))
                        ?? part
                } else {
                    output += part
                }
            case .write(let written):
                output += written
            case .zeros(let count):
                // Padding and cleared bytes: at most the new moov's size and 4 KiB more.
                guard count <= UInt64(bytes.count) + (1 << 20) else {
                    fatalError("the plan pads \(count) bytes for a \(bytes.count)-byte file")
                }
                output += [UInt8](repeating: 0, count: Int(count))
            case .image(let index, _):
                fatalError("the plan copies streamed image \(index), but none was given")
            }
        }
        if let (moov, _) = try BoxWalker.first("moov", in: ByteReader(output), depth: 1) {
            let found = try? BoxWalker.firstChild("udta", of: Array(output[Int(moov.offset)..<Int(moov.end)]))
            guard ItemList(userData: found ?? [])[.code("©nam")] == .text(["Fuzz"]) else {
                fatalError("the rewritten moov lacks the title")
            }
        }
    } catch is ISOBMFFError {
    } catch {
        fatalError("the tag rewrite plan threw \(type(of: error)): \(error)")
    }
}
