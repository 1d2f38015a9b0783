import ISOBMFF

extension TagFile {
    /// The top-level boxes of a file and its `moov`.
    struct Layout {
        var boxes: [BoxHeader]
        var movieBox: [UInt8]
        var userData: [UInt8]?
        /// Bytes after the last box, too few for a box header.
        var trailingBytes: UInt64 = 0
        /// The old `moov`'s header.
        var moov: BoxHeader
        /// The covers left in the file (``movieBoxLeavingCovers(_:_:)``): which `data` box
        /// of the first `udta/meta/ilst/covr` each fills, where its bytes are and how many.
        var keptCovers: [(dataBox: Int, offset: UInt64, count: UInt64)] = []

        /// The payloads of cover `data` boxes at least this large are left in the file.
        static let keptCoverSize: UInt64 = 64 << 10

        /// Reads the file's boxes and its `moov`; with `leavingCovers`, the large covers of
        /// the first `covr` item are left in the file (``keptCovers``, see
        /// ``movieBoxLeavingCovers(_:_:)``).
        init(_ input: any ByteSource, leavingCovers: Bool = false) throws {
            boxes = []
            var offset: UInt64 = 0
            var moov: BoxHeader?
            while offset < input.length {
                let available = input.length - offset
                // Fewer than 8 bytes after the last box cannot be a box: trailing garbage,
                // which players ignore (an iPhone left 2), kept byte for byte.
                if available < 8 && !boxes.isEmpty {
                    trailingBytes = available
                    break
                }
                let headerBytes = try input.bytes(at: offset, count: Int(min(available, 32)))
                var reader = ByteReader(headerBytes, fileOffset: offset)
                let header: BoxHeader
                do {
                    header = try BoxHeader(parsing: &reader, available: available, parentPath: "")
                } catch let error as ISOBMFFError {
                    // A file that is no MP4 at all (text, an image) says what it looks like.
                    throw FileSignature.explain(RemuxError(.invalidInput, "\(input.name): the box at byte \(offset) is "
                                                           + "damaged or cut short (\(error.message)); tags are not "
                                                           + "written into a damaged file", parseError: error),
                                                source: input)
                }
                if header.type == "moov" && moov == nil { moov = header }
                boxes.append(header)
                offset = header.end
                guard boxes.count <= Limits.maximumTopLevelBoxes else {
                    throw RemuxError(.unsupportedInput, "\(input.name): more than \(Limits.maximumTopLevelBoxes) "
                                     + "top-level boxes")
                }
            }
            guard let moov else { throw RemuxError(.invalidInput, "\(input.name) has no moov box: not an MP4 file") }
            guard moov.size <= Limits.maximumMovieBoxSize else {
                throw RemuxError(.unsupportedInput, "\(input.name): its moov of \(moov.size) bytes is too large")
            }
            if leavingCovers, let hollow = try Self.movieBoxLeavingCovers(input, moov) {
                movieBox = hollow.bytes
                keptCovers = hollow.covers
            } else {
                movieBox = try input.bytes(at: moov.offset, count: Int(moov.size))
            }
            self.moov = moov
            // The first udta before any damaged child (none past one), as players read it.
            userData = try? BoxWalker.firstChild("udta", of: movieBox)
        }
    }
}

extension TagFile.Layout {
    /// The `moov` at `moov` with the image bytes of the large JPEG and PNG covers (`data`
    /// types 13 and 14, at least ``keptCoverSize`` bytes) of its first
    /// `udta/meta/ilst/covr` left in the file, the sizes of `moov`, `udta`, `meta`, `ilst`,
    /// `covr` and those `data` boxes made smaller by what they lost, and where those bytes
    /// are (the boxes ``UserDataBox/CoverBoxes`` finds, the rule `TagRewritePlan.splicing`
    /// shares): what splicing puts back as `.image` pieces, so that an edit
    /// keeping the covers holds none of them (issue 28). Reads headers, then the `moov`
    /// but for those bytes. Nil (the `moov` is then read whole) for anything else: no such
    /// cover, a 64-bit or size-0 header on the way, a box that does not fit its parent, or
    /// a result that splicing would not turn back into the file's bytes (checked here, by
    /// reading them again), so that what is written is the file's `moov` byte for byte.
    static func movieBoxLeavingCovers(_ input: any ByteSource, _ moov: BoxHeader) throws
        -> (bytes: [UInt8], covers: [(dataBox: Int, offset: UInt64, count: UInt64)])? {
        guard let found = try UserDataBox.CoverBoxes(movie: moov, in: input) else { return nil }
        var covers: [(dataBox: Int, offset: UInt64, count: UInt64)] = []
        for (n, data) in found.dataBoxes.enumerated() where data.size >= 16 + keptCoverSize {
            let type = try input.bytes(at: data.offset + 8, count: 4)
            guard type[1] == 0, type[2] == 0, type[3] == 13 || type[3] == 14 else { continue }
            covers.append((n, data.offset + 16, data.size - 16))
        }
        guard !covers.isEmpty else { return nil }
        let removed = covers.reduce(UInt64(0)) { $0 + $1.count }  // Inside moov: no overflow.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(moov.size - removed))
        var at = moov.offset
        for cover in covers {
            bytes += try input.bytes(at: at, count: Int(cover.offset - at))
            at = cover.offset + cover.count
        }
        bytes += try input.bytes(at: at, count: Int(moov.end - at))
        func setSize(_ size: UInt64, at position: UInt64) {
            let at = Int(position)  // Inside `bytes`, a header CoverBoxes read.
            for i in 0..<4 { bytes[at + i] = UInt8(truncatingIfNeeded: size >> (24 - 8 * UInt64(i))) }
        }
        for box in found.path { setSize(box.size - removed, at: box.offset - moov.offset) }
        var before: UInt64 = 0
        for cover in covers {
            setSize(16, at: cover.offset - 16 - moov.offset - before)
            before += cover.count
        }
        // The check: splicing the covers back gives the file's moov, byte for byte.
        let pieces: [TagRewritePlan.Piece]
        do {
            pieces = try TagRewritePlan.splicing(bytes, images: covers.map {
                TagRewritePlan.StreamedImage(dataBox: $0.dataBox, count: $0.count)
            })
        } catch {
            return nil
        }
        var position = moov.offset
        for piece in pieces {
            switch piece {
            case .write(let part):
                guard position + UInt64(part.count) <= moov.end,
                      try input.bytes(at: position, count: part.count) == part else { return nil }
            case .image(let index, let count):
                guard covers[index].offset == position, covers[index].count == count else { return nil }
            default:
                return nil
            }
            position += piece.byteCount
        }
        return position == moov.end ? (bytes, covers) : nil
    }

    /// `list` (read from this layout's `udta`) with the kept covers marked as theirs
    /// (`TagImage.Streamed(keptAt:count:)`); nil when its first `covr` item is not the
    /// images they are (read the `moov` whole then).
    func markingKeptCovers(_ list: ItemList) -> ItemList? {
        guard let index = list.items.firstIndex(where: { $0.key == .code("covr") }),
              !list.items[index].isDamaged, case .images(var images) = list.items[index].value else { return nil }
        for cover in keptCovers {
            guard cover.dataBox < images.count, images[cover.dataBox].bytes.isEmpty,
                  images[cover.dataBox].streamed == nil else { return nil }
            images[cover.dataBox].streamed = TagImage.Streamed(keptAt: cover.offset, count: cover.count)
        }
        var marked = list
        marked.items[index].value = .images(images)
        return marked
    }

    /// The file as `Movie` reads it, without the kept covers' bytes: the `moov` read here
    /// (smaller), then a `free` box where the covers' bytes are, so that every other box
    /// stays at its offset. Reads past the `moov` come from the file.
    struct Source: ByteSource {
        var input: any ByteSource
        var movieBox: [UInt8]
        var moov: BoxHeader

        var length: UInt64 { input.length }
        var name: String { input.name }

        func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws {
            let gapStart = moov.offset + UInt64(movieBox.count)
            var done = 0
            while done < buffer.count {
                let at = offset + UInt64(done)
                let part: UnsafeMutableRawBufferPointer
                if at < moov.offset || at >= moov.end || movieBox.count == Int(moov.size) {
                    let end = at < moov.offset ? moov.offset : input.length
                    part = UnsafeMutableRawBufferPointer(rebasing: buffer[done..<min(buffer.count, done + Int(end - at))])
                    try input.read(into: part, at: at)
                } else if at < gapStart {
                    let from = Int(at - moov.offset)
                    let count = min(buffer.count - done, movieBox.count - from)
                    part = UnsafeMutableRawBufferPointer(rebasing: buffer[done..<(done + count)])
                    movieBox.withUnsafeBytes { bytes in
                        part.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[from..<(from + count)]))
                    }
                } else {
                    var header = BoxWriter(capacity: 8)
                    header.write(UInt32(truncatingIfNeeded: moov.end - gapStart))  // Under the moov's 32-bit size.
                    header.write(FourCC("free"))
                    let count = min(buffer.count - done, Int(moov.end - at))
                    part = UnsafeMutableRawBufferPointer(rebasing: buffer[done..<(done + count)])
                    for i in 0..<count {
                        let inGap = Int(at - gapStart) + i
                        part[i] = inGap < 8 ? header.bytes[inGap] : 0
                    }
                }
                done += part.count
            }
        }
    }

    /// What `Movie` reads: the file, or ``Source`` when covers are kept.
    func movieSource(_ input: any ByteSource) -> any ByteSource {
        keptCovers.isEmpty ? input : Source(input: input, movieBox: movieBox, moov: moov)
    }
}
