/// How a track is presented: its edit list (ISO/IEC 14496-12 § 8.6.6) checked against the
/// media it really holds. Extraction and `probe` both go through this one rule, so what
/// `probe` reports is what extraction writes.
///
/// The arithmetic is that of `elst` version 1: 64-bit unsigned segment durations in the
/// movie timescale and 64-bit signed media times in the media timescale, every conversion
/// and sum checked. An edit list that cannot be honoured is ignored, with a warning, and the
/// track is presented whole:
/// - a sum or a conversion between timescales overflows;
/// - a media time is below -1 (-1 marks an empty edit) or at or past the end of the media;
/// - a timescale is 0.
///
/// An empty edit (a delay) is honoured whatever its length, even longer than the media: the
/// track then starts after it, as FFmpeg and GStreamer play it.
///
/// A segment that runs past the end of the media is fitted to it (with a warning when it
/// claims more than ``Limits/editOverrunTolerance`` seconds beyond it): real files round
/// their edits, and the presented duration is never more than the media holds. The media
/// ends where its last frame is presented (`mediaEnd`: with B-frames, after the decode
/// times end), so a video's last frames are kept. In a fragmented file, a last edit of
/// duration 0 runs to the end of the media (ISO/IEC 14496-12 § 8.6.6.3: DASH and HLS init
/// segments carry one, the fragments' length being unknown when `moov` is written).
///
/// A track without an edit list whose file carries an `iTunSMPB` item (``GaplessInfo``:
/// iTunes, `afconvert`, qaac) is presented as Apple's players present it: `priming` samples
/// skipped, then the valid samples (fitted to the media). The result is then one edit, so
/// every output carries it as an edit list; ``isFromGaplessInfo`` says so. An edit list,
/// where present, wins.
public struct TrackPresentation: Sendable, Equatable {
    /// The edits to apply, checked and fitted; empty when the track is presented whole.
    public var edits: [EditListBox.Entry]
    /// Whether ``edits`` differs from the input's list (ignored or fitted).
    public var isChanged: Bool
    /// What was ignored or fitted and why, one line each, naming the track.
    public var warnings: [String]
    /// The media ticks skipped at the start: the first non-empty edit's media time (the
    /// encoder priming of AAC), 0 without edits.
    public var priming: UInt64
    /// The presented duration in seconds: the edits' total, or the media's without edits.
    public var seconds: Double
    /// Whether ``edits`` was made from an `iTunSMPB` item (the track has no edit list).
    public var isFromGaplessInfo: Bool = false
    /// The timescale the segment durations of ``edits`` count in: the movie's, or for an edit
    /// made from `iTunSMPB` the one its caller chose (``MovieReader`` picks the media's, so
    /// the edit is exact). Write them with ``edits(in:)``, never as they are.
    public var segmentTimescale: UInt32 = 0

    /// ``edits`` with their segment durations in `timescale` (a writer's movie timescale),
    /// rounded to nearest; nil when a duration overflows there or the presentation has no
    /// timescale. Empty when the track is presented whole.
    public func edits(in timescale: UInt32) -> [EditListBox.Entry]? {
        edits.rescaled(from: segmentTimescale, to: timescale)
    }

    /// Checks `editList` against a media of `mediaDuration` ticks of `mediaTimescale`.
    ///
    /// - Parameters:
    ///   - editList: the track's `elst`, nil when it has none.
    ///   - movieTimescale: the `mvhd` timescale, in which segment durations count.
    ///   - mediaTimescale: the `mdhd` timescale, in which media times count.
    ///   - mediaDuration: what the media holds (the samples' total duration), not what
    ///     `mdhd` claims.
    ///   - path: the track's box path, for the warnings.
    ///   - gapless: the file's `iTunSMPB` numbers, in samples of `mediaTimescale` (the caller
    ///     checks that the media timescale is the sample rate); used only when `editList` has
    ///     no entries. For an exact edit, pass the media timescale as `movieTimescale`.
    ///   - mediaEnd: where the media's presentation ends (the latest `pts + duration`, in
    ///     media ticks), when later than `mediaDuration` (B-frames); nil for `mediaDuration`.
    ///   - isFragmented: the track's samples come from movie fragments: a last edit of
    ///     duration 0 then runs to the end of the media.
    public init(editList: EditListBox?, movieTimescale: UInt32, mediaTimescale: UInt32, mediaDuration: UInt64,
                path: String, gapless: GaplessInfo? = nil, mediaEnd: UInt64? = nil, isFragmented: Bool = false) {
        if editList?.entries.isEmpty ?? true, let gapless,
           let fromItem = Self.fromGaplessInfo(gapless, movieTimescale: movieTimescale,
                                               mediaTimescale: mediaTimescale, mediaDuration: mediaDuration,
                                               path: path)
        {
            self = fromItem
        } else {
            self = Self.checked(editList, movieTimescale: movieTimescale, mediaTimescale: mediaTimescale,
                                mediaDuration: mediaDuration, mediaEnd: Swift.max(mediaEnd ?? 0, mediaDuration),
                                isFragmented: isFragmented, path: path)
        }
        segmentTimescale = movieTimescale
    }

    /// One edit from `iTunSMPB`: skip the priming, present the valid samples. Nil (the track
    /// presented whole) when the priming is not inside the media or a timescale is 0; a
    /// valid count running past the media's end is fitted to it, with a warning.
    private static func fromGaplessInfo(_ gapless: GaplessInfo, movieTimescale: UInt32, mediaTimescale: UInt32,
                                        mediaDuration: UInt64, path: String) -> TrackPresentation? {
        guard movieTimescale > 0, mediaTimescale > 0, gapless.priming < mediaDuration,
              gapless.priming <= UInt64(Int64.max) else { return nil }
        let available = mediaDuration - gapless.priming  // priming < mediaDuration, checked above.
        var warnings: [String] = []
        var valid = gapless.validSampleCount
        if valid > available {
            warnings.append("the iTunSMPB item of the file presents \(valid) samples of \(path) after \(gapless.priming) "
                            + "of priming, but the media holds \(available): presented up to the media's end")
            valid = available
        }
        guard let duration = rescale(valid, from: mediaTimescale, to: movieTimescale), duration > 0 else { return nil }
        return TrackPresentation(edits: [.init(segmentDuration: duration, mediaTime: Int64(gapless.priming))],
                                 isChanged: true, warnings: warnings, priming: gapless.priming,
                                 seconds: Double(valid) / Double(mediaTimescale), isFromGaplessInfo: true)
    }

    private static func checked(_ editList: EditListBox?, movieTimescale: UInt32, mediaTimescale: UInt32,
                                mediaDuration: UInt64, mediaEnd: UInt64, isFragmented: Bool,
                                path: String) -> TrackPresentation {
        let whole = mediaTimescale == 0 ? 0 : Double(mediaDuration) / Double(mediaTimescale)
        let input = editList?.entries ?? []
        func presentedWhole(_ reason: String?) -> TrackPresentation {
            TrackPresentation(edits: [], isChanged: !input.isEmpty,
                              warnings: reason.map { ["the edit list of \(path) was ignored: \($0); the track is "
                                                     + "presented whole"] } ?? [],
                              priming: 0, seconds: whole)
        }
        guard !input.isEmpty else { return presentedWhole(nil) }
        guard movieTimescale > 0, mediaTimescale > 0 else { return presentedWhole("the movie or media timescale is 0") }
        var edits: [EditListBox.Entry] = []
        var warnings: [String] = []
        let tolerance = UInt64(mediaTimescale) * Limits.editOverrunTolerance  // < 2^32 · 2^8: no overflow.
        for (n, entry) in input.enumerated() {
            var edit = entry
            let number = n + 1
            guard let ticks = rescale(edit.segmentDuration, from: movieTimescale, to: mediaTimescale) else {
                return presentedWhole("edit \(number) lasts \(edit.segmentDuration) ticks of 1/\(movieTimescale) s, "
                                      + "which overflows in the media's timescale")
            }
            if !edit.isEmpty {
                guard let start = UInt64(exactly: edit.mediaTime) else {
                    return presentedWhole("edit \(number) starts at media time \(edit.mediaTime)")
                }
                guard start < mediaEnd else {
                    return presentedWhole("edit \(number) starts at media time \(start), past the media's "
                                          + "\(mediaEnd) ticks")
                }
                let available = mediaEnd - start  // start < mediaEnd, checked above.
                if isFragmented && ticks == 0 && number == input.count {
                    // To the end of the media: rescale cannot fail on a value below one that converted.
                    edit.segmentDuration = rescale(available, from: mediaTimescale, to: movieTimescale) ?? 0
                } else if ticks > available {
                    // Fitted to the media's end; rescale cannot fail on a value below one that converted.
                    let fitted = rescale(available, from: mediaTimescale, to: movieTimescale) ?? 0
                    if ticks - available > tolerance {
                        warnings.append("edit \(number) of \(path) presents \(seconds(ticks, mediaTimescale)) s "
                                        + "but the media holds \(seconds(available, mediaTimescale)) s after its "
                                        + "start: presented up to the media's end")
                    }
                    edit.segmentDuration = fitted
                }
            }
            edits.append(edit)
        }
        let total = edits.totalDuration
        guard total < UInt64.max else { return presentedWhole("its durations add up past 2^64") }
        let priming = edits.first { !$0.isEmpty }.map { UInt64(clamping: $0.mediaTime) } ?? 0
        let seconds = Double(total) / Double(movieTimescale)
        return TrackPresentation(edits: edits, isChanged: edits != input, warnings: warnings, priming: priming,
                  seconds: total == 0 ? whole : seconds)
    }

    /// The presentation of `track`, whose samples last `mediaDuration` ticks; `gapless` as in
    /// ``init(editList:movieTimescale:mediaTimescale:mediaDuration:path:gapless:mediaEnd:isFragmented:)``.
    public init(track: Track, movieTimescale: UInt32, mediaDuration: UInt64, gapless: GaplessInfo? = nil,
                mediaEnd: UInt64? = nil, isFragmented: Bool = false) {
        self.init(editList: track.editList, movieTimescale: movieTimescale,
                  mediaTimescale: track.mediaHeader.timescale, mediaDuration: mediaDuration, path: track.path,
                  gapless: gapless, mediaEnd: mediaEnd, isFragmented: isFragmented)
    }

    /// How `track` of `movie` is presented: the one rule, with its inputs gathered in the one
    /// place every reader asks (``MovieReader/presentation(of:samples:)``, extraction, probe,
    /// chapters, clip lengths and cuts). The track's edit list, checked against `mediaDuration`
    /// and `mediaEnd`; without one, the file's `iTunSMPB` item where it applies
    /// (``GaplessInfo/init(for:in:)``), as one edit in the media timescale so that it presents
    /// exactly the valid samples (``segmentTimescale``); a fragmented movie's last edit of
    /// duration 0 runs to the media's end.
    ///
    /// - Parameters:
    ///   - track: the track, whose edit list, timescale and sample entry are read.
    ///   - movie: the movie holding it: its timescale, whether it is fragmented, its
    ///     `iTunSMPB` item.
    ///   - mediaDuration: what the samples hold (``SampleTable/totalDuration``), not what
    ///     `mdhd` claims.
    ///   - mediaEnd: where their presentation ends (``SampleTable/presentationEnd``), when
    ///     known.
    public init(of track: Track, in movie: Movie, mediaDuration: UInt64, mediaEnd: UInt64?) {
        let gapless = GaplessInfo(for: track, in: movie)
        self.init(track: track,
                  movieTimescale: gapless == nil ? movie.header.timescale : track.mediaHeader.timescale,
                  mediaDuration: mediaDuration, gapless: gapless, mediaEnd: mediaEnd,
                  isFragmented: movie.isFragmented)
    }

    init(edits: [EditListBox.Entry], isChanged: Bool, warnings: [String], priming: UInt64, seconds: Double,
         isFromGaplessInfo: Bool = false) {
        self.edits = edits
        self.isChanged = isChanged
        self.warnings = warnings
        self.priming = priming
        self.seconds = seconds
        self.isFromGaplessInfo = isFromGaplessInfo
    }

    /// Where a sample presented at media time `time` (its ``Sample/presentationTime``: decode
    /// time plus composition offset, in ticks of `mediaTimescale`) appears in the movie's
    /// presentation, in seconds from its start: through the edits, each empty edit a delay,
    /// each media edit showing `[mediaTime, mediaTime + duration)` of the media; the first
    /// edit that shows it wins. Without edits, `time` itself. Nil when no edit shows it (it
    /// lies in the priming skipped, or after the end). What FFmpeg and GStreamer show a frame
    /// at, the way `ffprobe -show_packets` times a packet with the edit list applied. O(edits).
    public func presentedSeconds(ofMediaTime time: Int64, mediaTimescale: UInt32) -> Double? {
        guard mediaTimescale > 0 else { return nil }
        guard !edits.isEmpty else { return Double(time) / Double(mediaTimescale) }
        guard segmentTimescale > 0 else { return nil }
        var elapsed = 0.0
        for edit in edits {
            let seconds = Double(edit.segmentDuration) / Double(segmentTimescale)
            if !edit.isEmpty, time >= edit.mediaTime,
               let length = rescale(edit.segmentDuration, from: segmentTimescale, to: mediaTimescale) {
                let (into, overflow) = time.subtractingReportingOverflow(edit.mediaTime)
                if !overflow, UInt64(into) < length {  // into ≥ 0: time ≥ mediaTime.
                    return elapsed + Double(into) / Double(mediaTimescale)
                }
            }
            elapsed += seconds
        }
        return nil
    }

    /// The edit list to write: the input's when unchanged, the fitted one, or none.
    public func editList(replacing input: EditListBox?) -> EditListBox? {
        guard isChanged else { return input }
        guard !edits.isEmpty else { return nil }
        var list = input ?? EditListBox(entries: [])
        list.entries = edits
        return list
    }

    /// Seconds with three decimals, for messages.
    static func seconds(_ ticks: UInt64, _ timescale: UInt32) -> String {
        MediaTime.text(seconds: MediaTime.seconds(ticks, timescale: timescale))
    }
}

extension GaplessInfo {
    /// The file's `iTunSMPB` numbers where they apply to `track`, in its media ticks: it has
    /// no edit list (an edit list wins), it is the file's first audio track, and its media
    /// timescale counts the samples the item counts. The one place that decides;
    /// ``MovieReader/presentation(of:samples:)``, extraction, probe and salvage all ask it.
    ///
    /// The item counts samples at the codec's core rate: for AAC the AudioSpecificConfig's
    /// sampling frequency, which for HE-AAC (SBR) is half the rate it decodes to; for other
    /// codecs the sample entry's rate. A media timescale at that rate takes the numbers as
    /// ticks; an AAC track timed at twice it (HE-AAC whose 1024-sample frames last 2048
    /// ticks of the output rate) takes them doubled. Any other timescale: nil.
    public init?(for track: Track, in movie: Movie) {
        guard track.editList?.entries.isEmpty ?? true, track.handlerType == .soun,
              movie.tracks.first(where: { $0.handlerType == .soun })?.trackID == track.trackID,
              let userData = movie.userData, let entry = track.sampleDescriptions.entries.first,
              let audio = try? AudioSampleEntry(parsing: entry, quickTimeLayout: movie.usesQuickTimeLayout)
        else { return nil }
        var rate = UInt64(audio.sampleRateV2.flatMap { UInt32(exactly: $0) } ?? audio.sampleRate >> 16)
        var isAAC = false
        if audio.format == .mp4a, let esds = audio.configuration(.esds) {
            var reader = ByteReader(esds.payload, path: "esds")
            if let descriptor = try? ElementaryStreamDescriptorBox(parsing: &reader),
               let info = descriptor.decoderSpecificInfo,
               let config = try? AudioSpecificConfig(parsing: info), config.isAAC, config.samplingFrequency > 0 {
                rate = UInt64(config.samplingFrequency)
                isAAC = true
            }
        }
        let timescale = UInt64(track.mediaHeader.timescale)
        let ticksPerSample: UInt64 = timescale == rate ? 1 : isAAC && timescale == 2 * rate ? 2 : 0
        guard ticksPerSample > 0, let item = GaplessInfo(userData: userData) else { return nil }
        // Priming and padding are below 2^32 (the parser checks), the valid count below 2^64.
        let (valid, overflow) = item.validSampleCount.multipliedReportingOverflow(by: ticksPerSample)
        guard !overflow else { return nil }
        self.init(priming: item.priming * ticksPerSample, padding: item.padding * ticksPerSample,
                  validSampleCount: valid)
    }
}
