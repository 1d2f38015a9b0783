/// `mdhd`: the media's timescale, duration and language (ISO/IEC 14496-12 § 8.4.2).
public struct MediaHeaderBox: Box {
    public static let type = FourCC.mdhd
    /// 0 for 32-bit times and duration, 1 for 64-bit; ``write(to:)`` moves to 1 when a value
    /// needs more than 32 bits, so a long file never has its duration wrap around.
    public var version: UInt8
    /// The full-box flags as read (none are defined), kept so the box is written back unchanged.
    public var flags: UInt32
    /// Seconds since midnight, 1 January 1904, UTC; 0 when unknown.
    public var creationTime: UInt64
    /// Seconds since midnight, 1 January 1904, UTC; 0 when unknown.
    public var modificationTime: UInt64
    /// Ticks per second of the media timeline, in which `stts` durations, `ctts` offsets and
    /// edit list media times count; for audio usually the sample rate.
    public var timescale: UInt32
    /// The media's duration in ``timescale`` ticks; 0 in a fragmented file, whose samples
    /// are in the fragments.
    public var duration: UInt64
    /// ISO 639-2/T code packed as three 5-bit letters (`und` is 0x55C4); QuickTime files may
    /// hold a Macintosh language code (< 0x400) instead.
    public var language: UInt16
    /// `pre_defined` in ISO; the QuickTime "quality" field.
    public var quality: UInt16

    /// A header for new media: no creation or modification time, the smallest version that
    /// holds `duration`, and `language` packed from three lowercase ISO 639-2/T letters
    /// (`und` when it is not three such letters).
    public init(timescale: UInt32, duration: UInt64, language: String = "und") {
        version = versionFor(duration)
        flags = 0
        creationTime = 0
        modificationTime = 0
        self.timescale = timescale
        self.duration = duration
        self.language = Self.packedLanguage(language) ?? 0x55C4
        quality = 0
    }

    /// Three lowercase letters packed as § 8.4.2.3 stores them (5 bits each, minus 0x60);
    /// nil for anything else.
    public static func packedLanguage(_ code: String) -> UInt16? {
        let letters = Array(code.utf8)
        guard letters.count == 3, letters.allSatisfy({ $0 >= 0x61 && $0 <= 0x7A }) else { return nil }
        // Each letter is 0x61...0x7A, so each term is 1...26 and the sum fits 15 bits.
        return letters.reduce(UInt16(0)) { $0 << 5 | UInt16($1 - 0x60) }
    }

    public init(parsing payload: inout ByteReader) throws {
        (version, flags) = try payload.readVersionAndFlags()
        try payload.check(version: version, in: 0...1)
        if version == 1 {
            creationTime = try payload.readUInt64()
            modificationTime = try payload.readUInt64()
            timescale = try payload.readUInt32()
            duration = try payload.readUInt64()
        } else {
            creationTime = UInt64(try payload.readUInt32())
            modificationTime = UInt64(try payload.readUInt32())
            timescale = try payload.readUInt32()
            duration = UInt64(try payload.readUInt32())
        }
        language = try payload.readUInt16()
        quality = try payload.readUInt16()
    }

    public func write(to writer: inout BoxWriter) {
        let version = max(version, versionFor(creationTime, modificationTime, duration))
        writer.fullBox(Self.type, version: version, flags: flags) { w in
            if version == 1 {
                w.write(creationTime)
                w.write(modificationTime)
                w.write(timescale)
                w.write(duration)
            } else {
                w.write(UInt32(truncatingIfNeeded: creationTime))
                w.write(UInt32(truncatingIfNeeded: modificationTime))
                w.write(timescale)
                w.write(UInt32(truncatingIfNeeded: duration))
            }
            w.write(language)
            w.write(quality)
        }
    }

    /// Macintosh language codes 0–23 (QuickTime File Format, "Language Code Values").
    static let macintoshLanguages = ["eng", "fra", "deu", "ita", "nld", "swe", "spa", "dan", "por", "nor", "heb",
                                     "jpn", "ara", "fin", "ell", "isl", "mlt", "tur", "hrv", "zho", "urd", "hin",
                                     "tha", "kor"]

    /// The language as three letters (`eng`, `und`); QuickTime's Macintosh codes are mapped
    /// for the common languages, nil otherwise.
    public var languageCode: String? {
        if language < 0x400 {
            return Int(language) < Self.macintoshLanguages.count ? Self.macintoshLanguages[Int(language)] : nil
        }
        var text = ""
        for shift in [10, 5, 0] {
            let letter = UInt8(truncatingIfNeeded: (language >> UInt16(shift)) & 0x1F) &+ 0x60
            guard letter >= 0x61, letter <= 0x7A else { return nil }
            text.unicodeScalars.append(Unicode.Scalar(letter))
        }
        return text
    }
}
