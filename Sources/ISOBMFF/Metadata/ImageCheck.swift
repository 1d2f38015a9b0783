/// Whether the bytes of a cover are a whole image of their format, read as far as a decoder
/// must before it draws a pixel: bytes that only start like a JPEG or a PNG make a `covr`
/// that players and `ffmpeg -map 0 -c copy` fail on (issue 28).
extension TagImage {
    /// What is wrong with ``bytes`` as a ``format`` image, in one sentence; nil when they are
    /// a whole one (``ImageCheck``, fed the bytes at once). A streamed image
    /// (``streamed``) is checked where its bytes are read, through an ``ImageCheck``.
    public var structuralProblem: String? {
        var check = ImageCheck(format)
        check.consume(bytes[...])
        return check.finish()
    }
}

/// Checks that bytes fed in pieces of any size are a whole image of a format, holding
/// nothing of them but a few counters: a cover streamed from its file is checked as it is
/// read, in the copy loop's buffer, whatever its size (issue 28, point 7).
///
/// - JPEG (ITU-T T.81, Annex B): markers from SOI, each segment's length inside the
///   data, a frame header (SOF0–SOF15 but DHT, JPG and DAC) before the first scan (SOS),
///   and an EOI marker after it.
/// - PNG (ISO/IEC 15948, § 5): the signature, then chunks whose lengths fit and whose
///   CRC-32s are right, IHDR (13 bytes) first, at least one IDAT, IEND last.
public struct ImageCheck: Sendable {
    private enum State: Sendable {
        // JPEG (Annex B.1): SOI's two bytes, then segments.
        case jpegStart
        case jpegMarker             // Expecting the FF that starts a marker.
        case jpegFill               // After FF: fill bytes (B.1.1.2), then the marker's code.
        case jpegLength(marker: UInt8, at: UInt64, high: UInt8?)
        case jpegSegment(marker: UInt8, remaining: UInt64)
        case jpegScan(previousFF: Bool)
        // PNG (§ 5.2, 5.3): the signature, then chunks of length, type, data and CRC.
        case pngSignature
        case pngHeader(have: Int)
        case pngData(remaining: UInt64)
        case pngCRC(have: Int)
        case done
        case failed(String)
    }

    /// The format checked.
    public let format: TagImage.Format
    private var state: State
    /// Bytes consumed so far.
    private var position: UInt64 = 0
    private var sawFrame = false
    private var sawEndOfImage = false
    private var sawImageData = false
    private var chunkIndex = 0
    private var chunkStart: UInt64 = 0
    private var header: [UInt8] = []  // A chunk's length and type; the CRC being read.
    private var chunkLength: UInt64 = 0
    private var crc: UInt32 = 0

    private static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// A check of a `format` image, fed nothing yet.
    public init(_ format: TagImage.Format) {
        self.format = format
        state = format == .jpeg ? .jpegStart : .pngSignature
        header.reserveCapacity(8)
    }

    /// Feeds the next bytes of the image. O(n) in their count.
    public mutating func consume(_ bytes: ArraySlice<UInt8>) {
        var index = bytes.startIndex
        while index < bytes.endIndex {
            switch state {
            case .done, .failed:
                return
            case .pngData(let remaining):
                // The bulk of a PNG: CRC over as much of the chunk as this piece holds.
                let take = Int(min(remaining, UInt64(bytes.endIndex - index)))  // <= the piece's count.
                crc = CRC32.update(crc, bytes[index..<(index + take)])
                index += take
                position += UInt64(take)
                state = remaining == UInt64(take) ? .pngCRC(have: 0) : .pngData(remaining: remaining - UInt64(take))
            case .jpegSegment(let marker, let remaining) where remaining > 0:
                let take = Int(min(remaining, UInt64(bytes.endIndex - index)))
                index += take
                position += UInt64(take)
                state = .jpegSegment(marker: marker, remaining: remaining - UInt64(take))
                if remaining == UInt64(take) { endSegment(marker) }
            case .jpegScan(var previousFF):
                // Entropy-coded data; the image ends with EOI (trailing bytes after it, which
                // some writers leave, are ignored by decoders).
                while index < bytes.endIndex {
                    let byte = bytes[index]
                    if previousFF && byte == 0xD9 { sawEndOfImage = true }
                    previousFF = byte == 0xFF
                    index += 1
                    position += 1
                }
                state = .jpegScan(previousFF: previousFF)
            default:
                step(bytes[index])
                index += 1
                position += 1
            }
        }
    }

    /// What is wrong with the bytes fed, in one sentence; nil when they are a whole image.
    public func finish() -> String? {
        switch state {
        case .done: return nil
        case .failed(let problem): return problem
        case .jpegStart: return "it does not start with SOI"
        case .jpegMarker: return "no marker at byte \(position) (expected after the segment before it)"
        case .jpegFill: return "it ends in a marker"
        case .jpegLength(let marker, _, _):
            return "the segment of marker FF\(marker.hexDigits(uppercase: true)) is cut short"
        case .jpegSegment(let marker, _):
            return "the segment of marker FF\(marker.hexDigits(uppercase: true)) at byte \(segmentStart) runs past "
                + "the data"
        case .jpegScan: return sawEndOfImage ? nil : "no EOI after the scan"
        case .pngSignature: return "it does not start with PNG's signature"
        case .pngHeader(let have) where have == 0: return "no IEND chunk"
        case .pngHeader, .pngData, .pngCRC:
            // As a reader holding the whole data sees it: too short for a chunk's 12 bytes of
            // length, type and CRC, or a length claiming more than there is.
            return position - chunkStart < 12 ? "the chunk at byte \(chunkStart) is cut short"
                : "the chunk at byte \(chunkStart) runs past the data"
        }
    }

    private var segmentStart: UInt64 = 0

    private mutating func fail(_ problem: String) { state = .failed(problem) }

    private mutating func step(_ byte: UInt8) {
        switch state {
        case .jpegStart:
            if position == 0 && byte != 0xFF || position == 1 && byte != 0xD8 {
                fail("it does not start with SOI")
            } else if position == 1 {
                state = .jpegMarker
            }
        case .jpegMarker:
            if byte == 0xFF {
                state = .jpegFill
            } else {
                fail("no marker at byte \(position) (expected after the segment before it)")
            }
        case .jpegFill:
            guard byte != 0xFF else { return }
            let at = position - 1  // The FF before the code.
            switch byte {
            case 0xD8: fail("a second SOI at byte \(at)")
            case 0xD9: fail("EOI at byte \(at) before any scan")
            case 0x01, 0xD0...0xD7: state = .jpegMarker  // TEM, RSTn: no length.
            default: state = .jpegLength(marker: byte, at: at, high: nil)
            }
        case .jpegLength(let marker, let at, let high):
            guard let high else {
                state = .jpegLength(marker: marker, at: at, high: byte)
                return
            }
            let length = UInt64(high) << 8 | UInt64(byte)
            segmentStart = at
            guard length >= 2 else {
                fail("the segment of marker FF\(marker.hexDigits(uppercase: true)) at byte \(at) runs past the data")
                return
            }
            if (0xC0...0xCF).contains(marker) && ![0xC4, 0xC8, 0xCC].contains(marker) { sawFrame = true }
            if marker == 0xDA && !sawFrame {
                fail("a scan (SOS) before any frame header (SOF)")
                return
            }
            state = .jpegSegment(marker: marker, remaining: length - 2)
            if length == 2 { endSegment(marker) }
        case .jpegSegment:
            break  // Consumed in bulk by consume(_:).
        case .jpegScan:
            break  // Consumed in bulk by consume(_:).
        case .pngSignature:
            guard byte == Self.pngSignature[Int(position)] else {
                fail("it does not start with PNG's signature")
                return
            }
            if position == 7 {
                state = .pngHeader(have: 0)
                header.removeAll(keepingCapacity: true)
                chunkStart = 8
            }
        case .pngHeader(let have):
            if have == 0 { chunkStart = position }
            header.append(byte)
            guard have == 7 else {
                state = .pngHeader(have: have + 1)
                return
            }
            chunkLength = header[0..<4].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            crc = CRC32.update(0xFFFF_FFFF, header[4..<8])
            state = chunkLength == 0 ? .pngCRC(have: 0) : .pngData(remaining: chunkLength)
            chunkType = String(decoding: header[4..<8], as: UTF8.self)
            header.removeAll(keepingCapacity: true)
        case .pngData:
            break  // Consumed in bulk by consume(_:).
        case .pngCRC(let have):
            header.append(byte)
            guard have == 3 else {
                state = .pngCRC(have: have + 1)
                return
            }
            let stored = header.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            header.removeAll(keepingCapacity: true)
            guard crc ^ 0xFFFF_FFFF == stored else {
                fail("the \(chunkType) chunk at byte \(chunkStart) fails its CRC")
                return
            }
            if chunkIndex == 0 && (chunkType != "IHDR" || chunkLength != 13) {
                fail("the first chunk is not a 13-byte IHDR")
                return
            }
            if chunkType == "IDAT" { sawImageData = true }
            if chunkType == "IEND" {
                if sawImageData { state = .done } else { fail("IEND before any IDAT") }
                return
            }
            chunkIndex += 1
            state = .pngHeader(have: 0)
        case .done, .failed:
            break
        }
    }

    private var chunkType = ""

    /// A JPEG segment read to its end: the scan's entropy-coded data follows SOS.
    private mutating func endSegment(_ marker: UInt8) {
        state = marker == 0xDA ? .jpegScan(previousFF: false) : .jpegMarker
    }
}

/// CRC-32 as PNG (and zlib, Ethernet) compute it: polynomial 0xEDB88320 (reflected), initial
/// and final value 0xFFFFFFFF (ISO/IEC 15948, Annex D).
enum CRC32 {
    static let table: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static func of(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        update(0xFFFF_FFFF, bytes) ^ 0xFFFF_FFFF
    }

    /// `c` (the running value, before the final inversion) carried over `bytes`.
    static func update(_ c: UInt32, _ bytes: ArraySlice<UInt8>) -> UInt32 {
        var c = c
        table.withUnsafeBufferPointer { table in
            for byte in bytes { c = table[Int((c ^ UInt32(byte)) & 0xFF)] ^ (c >> 8) }
        }
        return c
    }
}
