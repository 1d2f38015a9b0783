/// How many samples before the one presented at a cut a decoder needs to produce that
/// sample's output correctly: its pre-roll.
///
/// Video needs the sync sample at or before it (``syncSample``). Audio codecs built on
/// overlapped transforms need the packets before it: the `roll` sample group says how many
/// where the file has one (ISO/IEC 14496-12 § 10.1, AAC's `roll_distance` of -1); else the
/// codec's own figure (``init(track:sampleGroups:hasSyncTable:)``). Copying more than needed is
/// harmless: the edit list hides it.
public enum PreRoll: Sendable, Equatable {
    /// Decoding starts at the sync sample at or before the cut (video, and any track whose
    /// `stss` marks only some samples).
    case syncSample
    /// That many packets before the cut (AAC-LC 1, HE-AAC 2, AC-3 1).
    case packets(Int)
    /// Packets before the cut until they last at least this many media ticks (Opus: 80 ms).
    case ticks(UInt64)
    /// One packet, then packets before it until they hold this many bytes (MP3's bit
    /// reservoir: `main_data_begin` reaches back up to 511 bytes).
    case reservoir(bytes: Int)

    /// The pre-roll of `track`: the first `roll` group description of `sampleGroups` where
    /// present (a negative `roll_distance` counts the packets), else by codec:
    /// AAC-LC one packet, HE-AAC (SBR, PS) two, Opus 80 ms, MP3 one packet and its
    /// reservoir, AC-3/E-AC-3 one packet, FLAC/ALAC/PCM none; an unknown audio codec two.
    /// Video and tracks with sync samples decode from a sync sample.
    public init(track: MediaTrack, sampleGroups: [SampleGroupDescriptionBox] = [], hasSyncTable: Bool = false) {
        self.init(kind: track.kind, description: track.sampleDescriptions.first, timescale: track.timescale,
                  sampleGroups: sampleGroups, hasSyncTable: hasSyncTable)
    }

    /// The pre-roll of a track of `kind` whose first sample description is `description`,
    /// as ``init(track:sampleGroups:hasSyncTable:)`` decides it: for a track about to be
    /// written, whose entries are not the input's (extraction rewrites a QuickTime or a
    /// damaged `esds` as the ISO entry it writes).
    public init(kind: TrackKind, description: SampleDescription?, timescale: UInt32,
                sampleGroups: [SampleGroupDescriptionBox] = [], hasSyncTable: Bool = false) {
        if kind == .video || hasSyncTable {
            self = .syncSample
            return
        }
        guard kind == .audio else {
            self = .packets(0)
            return
        }
        let codec = Self.byCodec(description, timescale: timescale)
        if let roll = sampleGroups.first(where: { $0.groupingType == "roll" }),
           let entry = roll.entries.first, entry.count >= 2 {
            let distance = Int16(bitPattern: UInt16(entry[0]) << 8 | UInt16(entry[1]))
            if distance < 0 {
                // The group's count, or the codec's where it asks for more (FFmpeg writes -1
                // for HE-AAC too, whose SBR needs two packets).
                if case .packets(let n) = codec {
                    self = .packets(Swift.max(n, Int(-Int32(distance))))
                } else {
                    self = codec
                }
                return
            }
        }
        self = codec
    }

    /// The pre-roll of an audio track by its codec alone.
    static func byCodec(_ description: SampleDescription?, timescale: UInt32) -> PreRoll {
        let format = description?.format.description ?? ""
        switch format {
        case "mp4a":
            let esds = description?.configuration
            var objectType: UInt8 = 0x40
            var audioObjectType = 2
            if let esds, esds.type == "esds" {
                var reader = ByteReader(esds.payload, path: "esds")
                if let box = try? ElementaryStreamDescriptorBox(parsing: &reader) {
                    objectType = box.objectTypeIndication
                    if let info = box.decoderSpecificInfo, let first = info.first {
                        audioObjectType = Int(first >> 3)
                        if audioObjectType == 31, info.count >= 2 {
                            audioObjectType = 32 + Int((first & 0x07) << 3 | info[1] >> 5)
                        }
                    }
                }
            }
            switch objectType {
            case 0x69, 0x6B:  // MPEG-2 / MPEG-1 audio (MP3, MP2) in mp4a.
                return .reservoir(bytes: 511)
            case 0x40, 0x66, 0x67, 0x68:  // AAC.
                return audioObjectType == 5 || audioObjectType == 29 ? .packets(2)
                    : audioObjectType == 2 ? .packets(1) : .packets(2)
            default:
                return .packets(2)
            }
        case ".mp3", "mp3 ":
            return .reservoir(bytes: 511)
        case "Opus":
            return .ticks(UInt64(timescale) * 80 / 1000)  // ≤ 2^32 · 80: no overflow.
        case "ac-3", "ec-3":
            return .packets(1)
        case "fLaC", "alac":
            return .packets(0)
        default:
            if let format = description?.format, AudioSampleEntry.uncompressedFormats.contains(format) {
                return .packets(0)
            }
            return .packets(2)
        }
    }
}

/// The cut of one track (issue 14): which samples to copy and the edit list that presents
/// exactly `[from, to)` of the input's presentation.
///
/// Times of the range are the movie's presentation (what a player shows at 0 s is 0), so
/// the input's edit list is applied first: an empty edit delays the track, the first
/// non-empty edit's media time skips priming. The copy starts at the sample a decoder must
/// start from (``PreRoll``): for video the sync sample at or before the frame presented at
/// `from` — found in presentation time, so B-frames (`ctts`) are handled — and ends after
/// the last sample in decode order presented before `to` (frames presented later but
/// decoded earlier are references and are copied too). The edit list then hides what
/// precedes `from` and what follows `to`: an empty edit where the track starts after
/// `from`, then one edit whose media time is the media time of `from` in the copied
/// samples' time line.
public struct CutPlan: Sendable, Equatable {
    /// The samples to copy, in decode order (indices of the input's ``SampleIndex``).
    public var samples: Range<Int>
    /// The edit list of the output track: segment durations in the output movie timescale,
    /// media times in the track's timescale counted from the first copied sample.
    public var edits: [EditListBox.Entry]
    /// The sample presented at `from`: where the output's presentation starts.
    public var firstPresented: Int
    /// Media ticks presented (`to − from`, or less where the track ends first).
    public var presentedTicks: UInt64
    /// The worst rounding of ``edits``' segment durations in the output movie timescale, in
    /// seconds: 0 when that timescale is a multiple of the track's.
    public var editRounding: Double
        /// Whether the copy had to start at a sample that is not a sync sample because none
    /// precedes `from` (the decoder may show garbage until the first sync sample).
    public var startsBeforeFirstSync: Bool

    /// Why a track cannot be cut.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// One line for a person.
        public var description: String
    }

    /// Plans the cut of a track whose samples are `samples`, presented as `presentation`
    /// says (its edits in `movieTimescale`), keeping `range`; nil when the track presents
    /// nothing in the range (it ends before `from` or starts at or after `to`).
    ///
    /// - Parameters:
    ///   - samples: the track's samples, in decode order.
    ///   - presentation: the track's presentation (``TrackPresentation``): its checked edits.
    ///   - timescale: the track's media timescale.
    ///   - movieTimescale: the input's movie timescale, in which `presentation`'s segment
    ///     durations count.
    ///   - outputMovieTimescale: the output's, in which the plan's segment durations count.
    ///   - range: what to keep, in seconds of the presentation: `[from, to)`.
    ///   - preRoll: what the decoder needs before the first presented sample.
    ///   - timelineOffset: where the range's 0 lies in the track's own presentation, in media
    ///     ticks (negative: before it starts): ``timelineOffsets(of:)`` for the tracks of a
    ///     fragmented file, 0 where every track's presentation starts at the file's.
    /// - Throws: ``Failure`` when the edit list has several non-empty edits or a rate other
    ///   than 1, or when a time does not fit.
    public init?(samples: SampleIndex, presentation: TrackPresentation, timescale: UInt32, movieTimescale: UInt32,
                 outputMovieTimescale: UInt32, range: CutRange, preRoll: PreRoll, timelineOffset: Int64 = 0) throws {
        guard samples.count > 0, timescale > 0, movieTimescale > 0, outputMovieTimescale > 0 else { return nil }
        func fail(_ message: String) -> Failure { Failure(description: message) }
        // The presentation as one delay and one window of media: [mediaStart, mediaStart + length).
        var delay: UInt64 = 0
        var mediaStart = samples.firstDecodeTime
        var length = samples.totalDuration
        let media = presentation.edits.filter { !$0.isEmpty }
        guard media.count <= 1 else {
            throw fail("its edit list has \(media.count) segments of media; only one can be cut")
        }
        // The rule fitted the segments to the media's presentation end (its last frame's).
        let (lastEnd, o1) = samples.firstDecodeTime.addingReportingOverflow(samples.presentationEnd)
        let presentationEnd = o1 ? UInt64.max : lastEnd
        for edit in presentation.edits {
            guard edit.rateInteger == 1 || edit.isEmpty, edit.rateFraction == 0 else {
                throw fail("its edit list plays at a rate other than 1")
            }
            guard let ticks = rescale(edit.segmentDuration, from: movieTimescale, to: timescale) else {
                throw fail("an edit lasts longer than 2^64 ticks")
            }
            if edit.isEmpty {
                guard media.isEmpty || edit == presentation.edits.first else {
                    throw fail("its edit list has an empty edit after media")
                }
                let (sum, overflow) = delay.addingReportingOverflow(ticks)
                guard !overflow else { throw fail("its delay overflows") }
                delay = sum
            } else {
                // media time ≥ 0 and < the media's duration: TrackPresentation checked it.
                mediaStart = samples.firstDecodeTime &+ UInt64(clamping: edit.mediaTime)
                length = Swift.min(ticks, presentationEnd > mediaStart ? presentationEnd - mediaStart : 0)
            }
        }
        // [from, to) keeps every tick it touches: the one presented at `from` (a frame of a
        // coarse timescale, 10 ticks a second in a camera's MJPEG, starts before it) and
        // every one that starts before `to`.
        // Both ends in the track's own presentation (moved by timelineOffset), where they may
        // fall before its start (signed: a track starting after the file's first).
        guard let fromRange = range.from.ticks(timescale, rounding: .down), let fromSigned = Int64(exactly: fromRange),
              case (let fromTicks, false) = fromSigned.addingReportingOverflow(timelineOffset) else {
            throw fail("the cut's start does not fit the timescale")
        }
        let (trackEnd, overflow) = delay.addingReportingOverflow(length)
        guard !overflow else { throw fail("its presentation ends past 2^64 ticks") }
        var toTicks = UInt64.max
        if let to = range.to {
            let ticks = to.ticks(timescale, rounding: .up).flatMap { Int64(exactly: $0) } ?? Int64.max
            let (moved, o) = ticks.addingReportingOverflow(timelineOffset)
            toTicks = o ? (timelineOffset > 0 ? UInt64.max : 0) : UInt64(clamping: moved)
        }
        let start = Swift.max(UInt64(clamping: fromTicks), delay)
        let end = Swift.min(toTicks, trackEnd)
        guard start < end else { return nil }
        // start ≥ fromTicks and start ≥ 0: the difference is the delay before the track shows.
        guard case (let gap, false) = Int64(clamping: start).subtractingReportingOverflow(fromTicks), gap >= 0 else {
            throw fail("the cut's start does not fit the timescale")
        }
        let outputDelay = UInt64(gap)
        // Media times of the cut, in the input's media time line (pts, no edits applied).
        let mediaFrom = mediaStart + (start - delay)  // start - delay < length: within the media.
        let mediaTo = mediaStart + (end - delay)
        guard let pFrom = Int64(exactly: mediaFrom), let pTo = Int64(exactly: mediaTo) else {
            throw fail("its media times pass 2^63")
        }

        // The sample shown at `from`; when none covers it (a gap before a B-frame's
        // composition offset), the first decoded at or after it.
        let target = samples.index(presentingAt: pFrom) ?? samples.index(decodingAt: mediaFrom) ?? 0
        var first = target
        var beforeSync = false
        switch preRoll {
        case .syncSample:
            if let sync = samples.syncIndex(atOrBefore: target) {
                first = sync
            } else {
                first = 0
                beforeSync = !samples.isSync(0)
            }
        case .packets(let n):
            first = Swift.max(0, target - Swift.max(0, n))
        case .ticks(let ticks):
            let targetTime = samples[target].decodeTime
            while first > 0 && targetTime - samples[first].decodeTime < ticks { first -= 1 }
        case .reservoir(let bytes):
            first = Swift.max(0, target - 1)
            var held = 0
            var i = first
            while i < target { held += Int(samples[i].size); i += 1 }
            while first > 0 && held < bytes {
                first -= 1
                held += Int(samples[first].size)
            }
        }
        // The last sample in decode order presented before `to`. Decode times only grow, and
        // pts ≥ dts + the smallest composition offset: past that bound nothing more is.
        let lowestOffset = samples.compositionOffsetRange.lowerBound
        var last = target
        var iterator = samples.makeIterator(from: first)
        var i = first
        while let sample = iterator.next() {
            let (earliest, o) = Int64(clamping: sample.decodeTime).addingReportingOverflow(lowestOffset)
            if !o && earliest >= pTo { break }
            if sample.presentationTime < pTo { last = Swift.max(last, i) }
            i += 1
        }
        // Every copied sample decoded from `first` on: the edit's media time counts from it.
        let base = samples[first].decodeTime
        guard mediaFrom >= base else {
            throw fail("the frame at the cut is presented before the sample decoding starts at")
        }
        let presented = end - start
        guard let segment = rescale(presented, from: timescale, to: outputMovieTimescale),
              let delaySegment = rescale(outputDelay, from: timescale, to: outputMovieTimescale),
              let mediaTime = Int64(exactly: mediaFrom - base) else {
            throw fail("the cut's times do not fit the movie timescale")
        }
        var written: [EditListBox.Entry] = []
        var exact: [EditListBox.Entry] = []
        if delaySegment > 0 {
            written.append(EditListBox.Entry(segmentDuration: delaySegment, mediaTime: -1))
            exact.append(EditListBox.Entry(segmentDuration: outputDelay, mediaTime: -1))
        }
        written.append(EditListBox.Entry(segmentDuration: segment, mediaTime: mediaTime))
        exact.append(EditListBox.Entry(segmentDuration: presented, mediaTime: mediaTime))
        editRounding = worstEditRounding(of: written, in: outputMovieTimescale, from: exact, in: timescale)
        self.samples = first..<(last + 1)
        self.edits = written
        firstPresented = target
        presentedTicks = presented
        startsBeforeFirstSync = beforeSync
    }

    /// Moves the start of a video cut back to a sample its bitstream says is a key frame,
    /// where the container's sync marks are wrong (a phone's H.263 lists P-pictures in
    /// `stss`; a Smooth Streaming track marks every sample sync): from the sample the plan
    /// starts at, while `isKeyFrame` says false, the start moves one sample back in decode
    /// order. `isKeyFrame` answers from the sample's bytes (``KeyFrameProbe``); nil (cannot
    /// tell) trusts the container. The edit's media time moves with the start, so the same
    /// frames are presented. O(samples walked back), each one call of `isKeyFrame`.
    ///
    /// - Returns: the samples the container marked sync that the bitstream refused, in the
    ///   order met (empty when the start stands).
    public mutating func startAtKeyFrame(in samples: SampleIndex,
                                         isKeyFrame: (Int) throws -> Bool?) rethrows -> [Int] {
        var first = self.samples.lowerBound
        guard first < samples.count else { return [] }
        var refused: [Int] = []
        while try isKeyFrame(first) == false {
            if samples.isSync(first) { refused.append(first) }
            guard first > 0 else {
                startsBeforeFirstSync = true
                break
            }
            first -= 1
        }
        guard first != self.samples.lowerBound else { return refused }
        // Decode times grow with the sample number: the old first decodes no earlier.
        let shift = samples[self.samples.lowerBound].decodeTime - samples[first].decodeTime
        for index in edits.indices where !edits[index].isEmpty {
            edits[index].mediaTime = edits[index].mediaTime &+ Int64(clamping: shift)  // Below 2^63: real times.
        }
        self.samples = first..<self.samples.upperBound
        return refused
    }

    /// The sample group assignments (`sbgp`) of the copied samples `samples`: each run of
    /// `groups` cut to them, so the groups count the samples as they are copied.
    public static func slice(_ groups: [SampleToGroupBox], to samples: Range<Int>) -> [SampleToGroupBox] {
        groups.map { group in
            var cut = group
            cut.entries = []
            var position = 0
            for entry in group.entries {
                let count = Int(entry.sampleCount)
                let lower = Swift.max(position, samples.lowerBound)
                let upper = Swift.min(position + count, samples.upperBound)
                if lower < upper {
                    cut.entries.append(SampleToGroupBox.Entry(sampleCount: UInt32(upper - lower),
                                                              groupDescriptionIndex: entry.groupDescriptionIndex))
                }
                position += count
                if position >= samples.upperBound { break }
            }
            return cut
        }
    }
}
