// What a reader needs from the extractor's output, checked the way FFmpeg's mov demuxer
// walks a file: it recurses only into the containers it knows, and refuses a box read
// deeper than 10 levels from the root ("Atoms too deeply nested"). Measured (issue 11,
// point 4): moov/udta + 8 levels reads, + 9 is refused; trak/udta + 7 / + 8; inside mp4a
// + 4 / + 5 — i.e. level <= 10 counting the root's boxes as 1, with `stsd` not counted.
enum OutputCheck {
    static let maximumLevel = 10

    /// The containers FFmpeg's mov.c reads children of (with mov_read_default or a reader
    /// that calls it), and the bytes before their first child.
    static let containers: [String: Int] = [
        "moov": 0, "trak": 0, "mdia": 0, "minf": 0, "stbl": 0, "udta": 0, "edts": 0, "dinf": 0,
        "mvex": 0, "moof": 0, "traf": 0, "tref": 0, "ilst": 0, "wave": 0, "sinf": 0, "schi": 0,
        "clip": 0, "matt": 0, "meta": 4,
    ]
    /// Sample entries with ISO 14496-12's VisualSampleEntry layout.
    static let visualEntries: Set<String> = ["avc1", "avc2", "avc3", "avc4", "hvc1", "hev1", "mp4v", "av01", "vp08",
                                             "vp09", "encv", "s263", "jpeg", "mjpa", "mjpb", "apcn", "apch", "dvh1",
                                             "dvhe"]
    /// Sound sample entries FFmpeg reads inside (ISO AudioSampleEntry, QuickTime v0/v1/v2).
    static let soundEntries: Set<String> = ["mp4a", "alac", "Opus", "fLaC", "ac-3", "ec-3", ".mp3", "mp3 ", "lpcm",
                                            "sowt", "twos", "in24", "in32", "fl32", "fl64", "enca", "samr", "sawb",
                                            "ipcm", "fpcm", "raw ", "ulaw", "alaw", "ima4", "mac3", "mac6", "ac-4",
                                            "dtsc", "dtsh", "dtsl", "mha1", "mhm1"]
    static let trackShape: Set<String> = ["moov", "trak", "mdia", "minf", "stbl", "mdat", "moof", "mvex"]

    /// The first problem found, with the issue-11 point it belongs to, or nil.
    static func problem(in bytes: [UInt8]) -> (String, String)? {
        var problem: (String, String)?
        walk(bytes[...], level: 1, path: "") { type, path, level, sizeField in
            guard problem == nil else { return }
            if level > maximumLevel {
                problem = ("20-too-deep", "output box \(path) is at level \(level), deeper than FFmpeg reads (\(maximumLevel))")
            } else if sizeField == 0, level > 1 {
                problem = ("20-size-0", "output box \(path) has size 0 (extends to its parent's end)")
            } else if path.hasSuffix("/stsd/" + type) {
                // A sample entry: its type names a codec, and readers take it for none of
                // the boxes of that name (FFmpeg reads the stsd's entries by count).
            } else if trackShape.contains(type), !(type == "moov" && level == 1) && !(type == "mdat" && level == 1)
                        && !(type == "trak" && path.hasPrefix("moov/") && level == 2)
                        && !(["mdia", "minf", "stbl"].contains(type) && path.hasPrefix("moov/trak/")) {
                problem = ("19-\(type)-copied", "output has a box of track shape at \(path)")
            }
        }
        return problem
    }

    /// Calls `visit` for each box FFmpeg would read; `stsd` entries' children are read at
    /// the level of the `stsd` itself.
    static func walk(_ bytes: ArraySlice<UInt8>, level: Int, path: String,
                     _ visit: (String, String, Int, UInt32) -> Void) {
        var at = bytes.startIndex
        while bytes.endIndex - at >= 8 {
            let size32 = readUInt32(bytes, at)
            let type = String(decoding: bytes[(at + 4)..<(at + 8)], as: UTF8.self)
            var header = 8
            var size = Int(size32)
            if size32 == 0 { size = bytes.endIndex - at }
            if size32 == 1 {
                guard bytes.endIndex - at >= 16 else { return }
                let large = readUInt64(bytes, at + 8)
                guard large <= UInt64(bytes.endIndex - at) else { return }
                size = Int(large)
                header = 16
            }
            guard size >= header, size <= bytes.endIndex - at else { return }
            let boxPath = path.isEmpty ? type : "\(path)/\(type)"
            visit(type, boxPath, level, size32)
            let payload = bytes[(at + header)..<(at + size)]
            if type == "stsd", payload.count >= 8 {
                // Each entry: its fixed fields, then child boxes (esds, wave, ...).
                walkEntries(payload.dropFirst(8), level: level, path: boxPath, visit)
            } else if type == "meta", !containsHandler(payload) {
                // FFmpeg's mov_read_meta reads a meta's children only when an `hdlr` follows.
            } else if let skip = containers[type], payload.count >= skip {
                walk(payload.dropFirst(skip), level: level + 1, path: boxPath, visit)
            }
            at += size
        }
    }

    static func containsHandler(_ payload: ArraySlice<UInt8>) -> Bool {
        let hdlr = Array("hdlr".utf8)
        var at = payload.startIndex
        while payload.endIndex - at >= 4 {
            if Array(payload[at..<(at + 4)]) == hdlr { return true }
            at += 4
        }
        return false
    }

    static func walkEntries(_ bytes: ArraySlice<UInt8>, level: Int, path: String,
                            _ visit: (String, String, Int, UInt32) -> Void) {
        var at = bytes.startIndex
        while bytes.endIndex - at >= 8 {
            let size = Int(readUInt32(bytes, at))
            guard size >= 8, size <= bytes.endIndex - at else { return }
            let type = String(decoding: bytes[(at + 4)..<(at + 8)], as: UTF8.self)
            let payload = bytes[(at + 8)..<(at + size)]
            let boxPath = "\(path)/\(type)"
            visit(type, boxPath, level, UInt32(size))
            // Text entries (QuickTime `text`, 3GPP `tx3g`) have fixed fields of their own size,
            // which the 28/44/64 bytes of a sound entry misread as boxes (a false finding:
            // FFmpeg and GStreamer read such outputs). The sanitizer checks their children
            // with the right layout, and HostileMetadataTests checks them with both players.
            if type == "text" || type == "tx3g" {
                at += size
                continue
            }
            // Visual entries (a mux output copies the video's) have 78 bytes of fixed fields;
            // entries of types a reader does not know are not read inside.
            var skip = 28
            if visualEntries.contains(type) {
                if payload.count >= 78 { walk(payload.dropFirst(78), level: level + 1, path: boxPath, visit) }
                at += size
                continue
            }
            guard soundEntries.contains(type) else {
                at += size
                continue
            }
            if payload.count >= 10 {
                let version = Int(payload[payload.startIndex + 8]) << 8 | Int(payload[payload.startIndex + 9])
                skip = version == 1 ? 44 : version == 2 ? 64 : 28
            }
            if payload.count >= skip { walk(payload.dropFirst(skip), level: level + 1, path: boxPath, visit) }
            at += size
        }
    }
}
