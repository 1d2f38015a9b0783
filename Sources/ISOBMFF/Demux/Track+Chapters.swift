/// Which tracks hold a movie's QuickTime chapters (QuickTime File Format, "Chapter Lists"):
/// a text track that another track names in its `tref/chap`. The one rule for finding
/// them, used by listing, extraction, remuxing and tag edits alike.
extension Track {
    /// The track IDs this track names in `tref/chap`, in order, its own left out (a track
    /// naming itself is no chapter list for it).
    public var chapterReferences: [UInt32] {
        (references["chap"] ?? []).filter { $0 != trackID }
    }

    /// Whether this track can be a chapter track: a text handler (`text`, QuickTime's, or
    /// `sbtl`, Apple's subtitles) and a text sample entry (`text` or 3GPP's `tx3g`), as FFmpeg
    /// and QuickTime read chapters. A `tref/chap` that names anything else (a video track of
    /// chapter images) is not a chapter list of titles.
    public var isTextTrack: Bool {
        guard ["text", "sbtl"].contains(handlerType), let entry = sampleDescriptions.entries.first else {
            return false
        }
        return ["text", "tx3g"].contains(entry.format)
    }

    /// The chapter tracks among `tracks`: each text track (``isTextTrack``) that another
    /// track names in `tref/chap`, once, in the order they are named (tracks in order, each
    /// track's references in order). O(n²) in the tracks, which ``Limits`` bounds.
    public static func chapterTracks(in tracks: [Track]) -> [Track] {
        var found: [Track] = []
        for track in tracks {
            for id in track.chapterReferences where !found.contains(where: { $0.trackID == id }) {
                if let named = tracks.first(where: { $0.trackID == id }), named.isTextTrack { found.append(named) }
            }
        }
        return found
    }
}
