/// The gapless-playback numbers of an `iTunSMPB` item (the freeform `----` item with mean
/// `com.apple.iTunes` and name `iTunSMPB` in `moov/udta/meta/ilst`), as iTunes, `afconvert`
/// and qaac write it: hexadecimal fields separated by spaces — a zero, the priming (encoder
/// delay) in samples, the end padding in samples, the valid (original) sample count as 64
/// bits, then zeros.
///
/// Apple's players present `validSampleCount` samples after `priming` when a file has no
/// edit list; FFmpeg reads only the priming. ``TrackPresentation`` takes these numbers where
/// a track has no edit list (an edit list, where present, wins).
public struct GaplessInfo: Sendable, Equatable {
    /// The samples to skip at the start (encoder delay).
    public var priming: UInt64
    /// The samples of padding after the valid ones.
    public var padding: UInt64
    /// The samples that play: those of the original audio.
    public var validSampleCount: UInt64

    /// The numbers as given.
    public init(priming: UInt64, padding: UInt64, validSampleCount: UInt64) {
        self.priming = priming
        self.padding = padding
        self.validSampleCount = validSampleCount
    }

    /// Parses the item's text (" 00000000 00000E26 000001F5 000000000003AC00 00000000 …").
    /// Nil unless it holds at least four hexadecimal fields, the priming and padding fit in 32
    /// bits and the valid count in 64 (as iTunes writes them), and the valid count is not 0.
    public init?(text: String) {
        let fields = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\0" }).prefix(4)
        guard fields.count == 4, fields.allSatisfy({ $0.count <= 16 }) else { return nil }
        let numbers = fields.compactMap { UInt64($0, radix: 16) }
        guard numbers.count == 4, numbers[1] <= UInt64(UInt32.max), numbers[2] <= UInt64(UInt32.max),
              numbers[3] > 0 else { return nil }
        self.init(priming: numbers[1], padding: numbers[2], validSampleCount: numbers[3])
    }

    /// The first `iTunSMPB` item of a `moov/udta` box (header included), parsed; nil when it
    /// has none or its text does not parse. The text is read from any data type that holds
    /// text (``MetadataBox/Value/text``): some encoders write type 0 (implicit) rather than
    /// 1 (UTF-8). Bounded as ``MetadataBox`` is.
    public init?(userData: [UInt8]) {
        for meta in UserDataBox(parsing: userData)?.metadata ?? [] {
            for item in meta.items
            where item.type == "----" && item.mean == "com.apple.iTunes" && item.name == "iTunSMPB" {
                guard let text = item.values.first?.text, let parsed = GaplessInfo(text: text) else { return nil }
                self = parsed
                return
            }
        }
        return nil
    }
}
