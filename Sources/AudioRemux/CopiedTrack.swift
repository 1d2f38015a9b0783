import ISOBMFF

/// A track copied whole into a new movie (`mux`, `remux`, an extraction's chapter track):
/// its description, with every box it carries over checked (``CopiedBoxSanitizer``) — the
/// track's `udta`, `mdia/elng`, its media information header (`gmhd` holds children), and
/// the children of its sound, visual and text sample entries — so that nothing a reader
/// refuses (too deep, of track shape, size 0) is written. What could not be kept is added
/// to `notes`, one line per box.
enum CopiedTrack {
    ///
    /// - Parameter soundEntries: for an audio track, its entries as ``checkedSoundEntries(of:quickTimeLayout:quickTimeOutput:)``
    ///   made them; nil to copy them as they are.
    static func description(of track: Track, quickTimeLayout: Bool, soundEntries: [[UInt8]]? = nil,
                            notes: inout [String]) -> TrackDescription {
        var description = TrackDescription(copying: track)
        if let box = track.userData {
            let result = CopiedBoxSanitizer.sanitize(box, depth: 3, parentPath: track.path)
            notes += result.warnings
            description.userData = result.bytes
        }
        if let box = track.extendedLanguage {
            let result = CopiedBoxSanitizer.sanitize(box, depth: 4, parentPath: track.path + "/mdia")
            notes += result.warnings
            description.extendedLanguage = result.bytes
        }
        if let box = track.mediaInformationHeader {
            let result = CopiedBoxSanitizer.sanitize(box, depth: 5, parentPath: track.path + "/mdia/minf")
            notes += result.warnings
            description.mediaInformationHeader = result.bytes
                ?? TrackDescription.defaultMediaInformationHeader(for: TrackKind(handlerType: track.handlerType))
        }
        description.sampleEntries = track.sampleDescriptions.entries.enumerated().map { index, entry in
            if track.isAudio {
                // A rewritten entry is an ISO version 0 one, whose fields the layout flag does not change.
                let bytes = soundEntries.flatMap { index < $0.count ? $0[index] : nil } ?? entry.bytes
                return soundEntry(bytes, quickTimeLayout: quickTimeLayout, track: track, notes: &notes)
            }
            if track.handlerType == .vide { return visualEntry(entry.bytes, track: track, notes: &notes) }
            if let fields = entry.textFieldsSize { return textEntry(entry.bytes, fieldsSize: fields, track: track,
                                                                    notes: &notes) }
            return entry.bytes
        }
        return description
    }

    /// The audio entries of `track` as a copy must hold them, each checked as extraction
    /// checks it (``AudioCodec``, the one check): an entry no player could use (Opus
    /// without `dOps`, `mp4a` of object type 0, a malformed configuration) makes the track
    /// uncopyable. Into a QuickTime movie the entries are kept as they are; into an ISO
    /// file (`.mp4`, `.m4a`) each is written as ``AudioCodec/outputEntry(original:)``
    /// writes extraction's: a QuickTime version 1/2 description or a `wave`-wrapped
    /// configuration becomes an ISO `AudioSampleEntry`, which ISO readers (ours included)
    /// read. Formats the check does not know (PCM, AMR, …) are copied as they are.
    ///
    /// - Throws: ``RemuxError`` with code `.unsupportedCodec` and the check's reason.
    static func checkedSoundEntries(of track: Track, quickTimeLayout: Bool,
                                    quickTimeOutput: Bool) throws -> [[UInt8]] {
        try track.sampleDescriptions.entries.map { entry in
            guard AudioCodec.isChecked(entry.format) else { return entry.bytes }
            let codec: AudioCodec
            do {
                codec = try AudioCodec(entry: entry, quickTimeLayout: quickTimeLayout)
            } catch let error as RemuxError {
                throw RemuxError(.unsupportedCodec, "its sample entry cannot be used: \(error.message)",
                                 parseError: error.parseError)
            }
            return quickTimeOutput ? entry.bytes : codec.outputEntry(original: entry)
        }
    }

    /// A text sample entry (QuickTime `text`, 3GPP `tx3g`: its fixed fields, then boxes)
    /// with its children checked.
    static func textEntry(_ entry: [UInt8], fieldsSize: Int, track: Track, notes: inout [String]) -> [UInt8] {
        let result = CopiedBoxSanitizer.sanitizeEntry(entry, fieldsSize: fieldsSize, depth: Limits.sampleEntryDepth,
                                                      path: track.path + "/mdia/minf/stbl/stsd")
        notes += result.warnings
        return result.bytes ?? entry
    }

    /// A visual sample entry (ISO/IEC 14496-12 § 12.1.3: 78 bytes of fixed fields) with its
    /// children (`avcC`, `colr`, `pasp`, …) checked.
    static func visualEntry(_ entry: [UInt8], track: Track, notes: inout [String]) -> [UInt8] {
        guard entry.count >= 8 + VisualSampleEntry.fixedFieldsSize else { return entry }
        let result = CopiedBoxSanitizer.sanitizeEntry(entry, fieldsSize: VisualSampleEntry.fixedFieldsSize,
                                                      depth: Limits.sampleEntryDepth,
                                                      path: track.path + "/mdia/minf/stbl/stsd")
        notes += result.warnings
        return result.bytes ?? entry
    }

    /// A sound sample entry with its children checked (``AudioSampleEntry/sanitized(_:quickTimeLayout:path:)``).
    static func soundEntry(_ entry: [UInt8], quickTimeLayout: Bool, track: Track, notes: inout [String]) -> [UInt8] {
        let result = AudioSampleEntry.sanitized(entry, quickTimeLayout: quickTimeLayout,
                                                path: track.path + "/mdia/minf/stbl/stsd")
        notes += result.warnings
        return result.bytes ?? entry
    }
}
