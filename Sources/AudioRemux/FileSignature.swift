import ISOBMFF

/// Recognises common media files that are not ISO-BMFF by their first bytes, so that an
/// error can say what the file looks like instead of only "not an MP4".
enum FileSignature {
    static func describe(_ bytes: [UInt8]) -> String? {
        func starts(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
            bytes.count >= offset + prefix.count && Array(bytes[offset..<(offset + prefix.count)]) == prefix
        }
        if starts([0x1A, 0x45, 0xDF, 0xA3]) { return "a Matroska or WebM file (.mkv/.webm)" }
        if starts(Array("RIFF".utf8)) && starts(Array("WAVE".utf8), at: 8) { return "a WAV file" }
        if starts(Array("RIFF".utf8)) && starts(Array("AVI ".utf8), at: 8) { return "an AVI file" }
        if starts(Array("OggS".utf8)) { return "an Ogg file (Vorbis/Opus/FLAC in Ogg)" }
        if starts(Array("fLaC".utf8)) { return "a raw FLAC file" }
        if starts(Array("ID3".utf8)) { return "an MP3 file (with an ID3 tag)" }
        if starts([0x47]) && bytes.count > 188 && bytes[188] == 0x47 { return "an MPEG transport stream (.ts)" }
        if starts([0x00, 0x00, 0x01, 0xBA]) { return "an MPEG program stream (.mpg/.vob)" }
        if starts(Array("FLV".utf8)) { return "a Flash video file (.flv)" }
        if starts([0xFF, 0xD8, 0xFF]) { return "a JPEG image" }
        if starts([0x89] + Array("PNG".utf8)) { return "a PNG image" }
        if starts(Array("GIF8".utf8)) { return "a GIF image" }
        if starts(Array("%PDF".utf8)) { return "a PDF document" }
        if bytes.count >= 2 && bytes[0] == 0xFF {
            if bytes[1] & 0xF6 == 0xF0 { return "a raw AAC file (ADTS)" }
            if bytes[1] & 0xE0 == 0xE0 { return "an MP3 or MPEG audio file" }
        }
        // Text: every byte of the start printable ASCII, white space, or part of UTF-8 (a
        // playlist, a subtitle file, an HTML error page saved under a video's name).
        // (A box header starts with a size whose first byte is 0 for any box under 16 MiB.)
        if !bytes.isEmpty, bytes.allSatisfy({ (0x20...0x7E).contains($0) || [0x09, 0x0A, 0x0D].contains($0) || $0 >= 0x80 }) {
            return "a text file"
        }
        return nil
    }

    /// `error` with what the file looks like, when its first bytes tell.
    static func explain(_ error: RemuxError, source: some ByteSource) -> RemuxError {
        let firstBytes: Set<ISOBMFFError.Code> = [.invalidValue, .missingBox, .truncated, .endOfFile, .invalidBoxSize,
                                                  .boxOutsideParent]
        guard let parseError = error.parseError, firstBytes.contains(parseError.code),
              parseError.offset == 0 || parseError.offset == nil
                || error.message.containsBytes(of: "no ftyp") else { return error }
        let prefix = (try? source.bytes(at: 0, count: Int(min(source.length, 512)))) ?? []
        guard let kind = describe(prefix) else { return error }
        return RemuxError(.invalidInput, "this is not an MP4/MOV/M4A file: it looks like \(kind) "
                          + "(only ISO base media files are read: MP4, MOV, M4A, 3GP)", parseError: parseError)
    }
}

extension String {
    /// Whether `other` occurs in this string, compared byte for byte in UTF-8.
    ///
    /// `String.contains(_: String)` without Foundation comes from _StringProcessing, which
    /// needs macOS 13 / iOS 16 (Scripts/availability/check.py flags it). O(n·m), for short
    /// texts such as messages and paths.
    public func containsBytes(of other: String) -> Bool {
        let text = Array(utf8)
        let part = Array(other.utf8)
        guard part.count <= text.count else { return false }
        return (0...(text.count - part.count)).contains { start in
            text[start..<(start + part.count)].elementsEqual(part)
        }
    }
}
