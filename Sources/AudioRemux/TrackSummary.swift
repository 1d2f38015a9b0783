import ISOBMFF

/// A short description of one track, read from `moov` without touching sample data.
public struct TrackSummary: Sendable, Equatable {
    public var trackID: UInt32
    /// The handler type (`soun`, `vide`, `text`, `tmcd`, …).
    public var handlerType: FourCC
    /// The first sample entry's format (`mp4a`, `avc1`, …).
    public var format: String
    public var duration: Double
    public var sampleCount: UInt32
    public var language: String?
    public var isEnabled: Bool

    public var isAudio: Bool { handlerType == .soun }

    /// "audio", "video", "text", "timecode" or the handler type.
    public var kind: String {
        switch handlerType.description {
        case "soun": "audio"
        case "vide": "video"
        case "text", "sbtl", "subt": "text"
        case "tmcd": "timecode"
        case "hint": "hint"
        case "meta": "metadata"
        default: handlerType.description
        }
    }
}

extension AudioExtractor {
    /// The tracks of the file at `path`, in file order.
    public static func tracks(in path: String) throws -> [TrackSummary] {
        let input = try InputFile(path: path)
        let movie = try parse { try Movie(reading: input) }
        return movie.tracks.map { track in
            TrackSummary(trackID: track.trackID, handlerType: track.handlerType,
                         format: track.sampleDescriptions.entries.first?.format.description ?? "-",
                         duration: track.durationInSeconds, sampleCount: track.declaredSampleCount,
                         language: track.mediaHeader.languageCode, isEnabled: track.header.isEnabled)
        }
    }
}
