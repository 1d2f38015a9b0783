import ISOBMFF

/// How a seam between two independently encoded parts is made of whole packets, for the
/// music of ``BackgroundMusic`` and the joins of ``Concatenation`` alike: the one model of
/// what a decoder plays across a seam, and the one way of choosing among the layouts.
///
/// The model (transform codecs: AAC, Opus, AC-3, MP3). A packet's inverse transform spans
/// its own frame and the next, overlapped with its neighbours; a decoder outputs, for each
/// packet, the second half of the packet before it plus the first half of this one. So at a
/// seam the first frame of the next part (B) is a crossfade: the previous part (A) fading out
/// — the sound A would have played in the frame after its last kept packet — and B fading in
/// without its own pre-roll. A's fade stays more than 20 dB down for ``fadeOut`` ticks at the
/// crossfade's end, B's for ``fadeIn`` ticks at its start (``Fades``: the codec's figures,
/// measured on FFmpeg's and GStreamer's decoders). The dip is then:
/// - from where A's sound stops (its sound's end, or `frame − fadeOut` into the crossfade
///   when it runs on past it)
/// - to where B's starts (its priming left in the kept packets when the first kept packet
///   is wholly priming and so gives B its pre-roll; else not before `fadeIn` into the
///   crossfade).
///
/// Measured against that model with FFmpeg's `aac` (3 s + 5 s tones, 204 samples of sound
/// in the 3 s part's last packet; dips in ms, 20 dB under the 100 ms around the seam):
///
/// | A's packets dropped | B's priming dropped | model | FFmpeg |
/// |---|---|---|---|
/// | 0 | 0 | 41.8 | 42.0 |
/// | 0 | 1 | 29.2 | 29.2 |
/// | 1 | 0 | 18.6 | 18.8 |
/// | 1 | 1 | 6.0 | 6.0 |
/// | 2 | 0 | 10.6 | 10.6 |
/// | 2 | 1 | 0 | 0 |
///
/// HE-AAC (SBR) decodes each packet's 1024 core samples to 2048 output samples through a QMF
/// bank that delays both parts alike (963 samples in FFmpeg 5.1, whose decoder GStreamer
/// 1.22's `avdec_aac` is). B's fade-in lasts the share of the frame it lasts in AAC LC (914–941
/// of 2048 samples measured, tones and pink noise); A's fade-out is shorter (261–520 after a
/// packet with a long window). Dropping A's last packet and B's priming packet (FFmpeg's
/// `aac` cores at 22.05 kHz with SBR signalled; dips in ms, 20 dB under the 250 ms around
/// the seam, which hold the whole gap; by A's sound in its last packet):
///
/// | A's sound in its last packet (core samples) | model | tone | pink noise |
/// |---|---|---|---|
/// | 18 | 20.9 | 15.2 | 20.7 |
/// | 128 | 16.0 | 11.0 | 14.1 |
/// | 260 | 10.0 | 5.6 | 6.6 |
/// | 415 | 2.9 | 2.1 | 0 |
/// | 481 and more | 0 | 0 | 0 |
///
/// Not modelled: the window shape of A's last kept packet. An encoder that meets an abrupt
/// end switches to short windows, with a start window two packets before the end, whose
/// second half ends in 448 core samples of zeros; A's fade-out after that packet is as long as
/// B's fade-in (931 samples measured). Keeping it as A's last (two packets left out) the model
/// predicts 11.6 ms where a tone into a tone measured 21 ms (pink noise: 0 ms, B's pre-echo
/// fills it).
///
/// Codecs whose packets decode alone to exactly their samples (ALAC, FLAC) are joined by
/// butting every packet: no seam to plan.
struct SeamRule: Sendable, Equatable {
    /// What a seam may do.
    enum Policy: Sendable, Equatable {
        /// `concat`: every packet at most once and never repeated; at most ``maximumDrops``
        /// packets left out per seam.
        case joining
        /// `mux`: the music is laid out, not joined: packets of the previous part may be
        /// repeated (at most ``maximumRepeats`` per seam) to win time back.
        case laying
    }

    var policy: Policy
    /// Ticks at the start of a crossfade where B, fading in without its pre-roll, is more
    /// than 20 dB down.
    var fadeIn: UInt64
    /// Ticks at the end of a crossfade where A, fading out, is more than 20 dB down.
    var fadeOut: UInt64
    /// The longest dip the rule accepts before it trades start error for it (ticks).
    var dipLimit: UInt64
    /// The start error a seam may leave, measured from where the part belongs (ticks): the
    /// error is never carried from seam to seam beyond it.
    var errorBound: UInt64
    /// Whether a part's start error is chosen before its dip (a video join keeps audio and
    /// video of each part together first).
    var syncFirst = false
    /// Whether packets are butted as they are (exact codecs).
    var butts = false
    /// The most packets a joining seam leaves out: the previous part's last, mostly
    /// padding, packets and the next part's priming packets together.
    static let maximumDrops = 2
    /// The most packets of the previous part a laying seam repeats.
    static let maximumRepeats = 2

    /// How long a codec's fades stay more than 20 dB down at a seam, in 96ths of its frame
    /// (the decoded duration of a packet, in the track's ticks): the figures the dip model is
    /// made of, measured in FFmpeg 5.1's decoders (GStreamer 1.22 decodes AAC with the same
    /// one, `avdec_aac`).
    struct Fades: Sendable, Equatable {
        /// B's fade-in at the crossfade's start.
        var fadeIn: UInt64
        /// A's fade-out at the crossfade's end.
        var fadeOut: UInt64

        /// The figures for `codec`; `sbr`: AAC whose configuration signals SBR (HE-AAC).
        static func of(_ codec: AudioCodec.Kind, sbr: Bool = false) -> Fades {
            switch codec {
            // AAC LC: about 470 of 1024 samples at either end, for a tone, whose time-domain
            // aliasing cancels the most (the first table above).
            case .aac where !sbr: Fades(fadeIn: 45, fadeOut: 45)
            // HE-AAC: 960 and 512 of its 2048 samples (the second table above).
            case .aac: Fades(fadeIn: 45, fadeOut: 24)
            case .opus, .mp3, .mp2: Fades(fadeIn: 48, fadeOut: 48)
            case .ac3, .eac3: Fades(fadeIn: 16, fadeOut: 16)  // 256-sample blocks in a 1536-sample frame.
            case .alac, .flac: Fades(fadeIn: 0, fadeOut: 0)
            }
        }
    }

    /// The rule for `codec` at `timescale` with frames of `frame` ticks; `sbr` for AAC whose
    /// configuration signals SBR (HE-AAC), whose fades differ (``Fades``).
    ///
    /// - `joining`: dips up to 12 ms (about half an AAC frame at 44.1 kHz), start errors up
    ///   to a frame + 2 ms (issue 27's order: every packet once, then the dip, then the start).
    /// - `laying`: dips up to 2.5 ms, start errors up to half a frame (repeats win it back).
    init(policy: Policy, codec: AudioCodec.Kind, timescale: UInt32, frame: UInt32, sbr: Bool = false) {
        self.policy = policy
        let ticksPerMillisecond = UInt64(timescale) / 1000
        let frame = UInt64(max(frame, 1))
        let fades = Fades.of(codec, sbr: sbr)
        fadeIn = frame * fades.fadeIn / 96
        fadeOut = frame * fades.fadeOut / 96
        butts = codec == .alac || codec == .flac
        switch policy {
        case .joining:
            dipLimit = 12 * ticksPerMillisecond
            errorBound = frame + 2 * ticksPerMillisecond
        case .laying:
            dipLimit = ticksPerMillisecond * 5 / 2
            errorBound = frame / 2
        }
    }

    /// Whether a codec's packets all decode to a whole frame, whatever their `stts` delta
    /// says (a muxer shortens the last one to end with the audio): AAC, Opus, AC-3, MP3.
    static func decodesWholeFrames(_ codec: AudioCodec.Kind) -> Bool {
        codec != .alac && codec != .flac
    }

    /// One way to make a seam.
    struct Choice: Sendable, Equatable {
        /// Packets of the previous part kept, from the first of its piece.
        var kept: Int
        /// The previous part's last packets left out.
        var trailing: Int
        /// How many times its last kept packet is repeated (laying only).
        var repeats: Int
        /// The next part's first packets left out.
        var dropped: Int
        /// Where the next part's first presented sample lands minus where it belongs (ticks).
        var error: Int64
        /// The predicted dip (ticks).
        var dip: UInt64
    }

    /// The previous part A as the seam sees it.
    struct Side {
        /// A's packets' durations as written, in A's media order.
        var durations: [UInt32]
        /// A's first packet in this piece.
        var first: Int
        /// Where that packet starts on the output's timeline.
        var start: Int64
        /// A's media ticks before `first` (so that `first`'s start in A's own media is known).
        var mediaBeforeFirst: UInt64
        /// Where A's sound ends in its own media: priming + presented.
        var soundEnd: UInt64
    }

    /// The best seam between A and the next part `next` (whose first presented sample
    /// belongs at `place` on the output's timeline), by ``key(_:)``.
    func choose(after a: Side, next: ClipTiming, nextDurations: [UInt32], place: Int64) -> Choice {
        var best: (key: [UInt64], choice: Choice)?
        for choice in candidates(after: a, next: next, nextDurations: nextDurations, place: place) {
            let key = self.key(choice)
            if best == nil || key.lexicographicallyPrecedes(best!.key) { best = (key, choice) }
        }
        return best!.choice  // There is always one candidate at least: keep everything.
    }

    /// Every layout the rule allows at a seam, with its error and predicted dip.
    func candidates(after a: Side, next: ClipTiming, nextDurations: [UInt32], place: Int64) -> [Choice] {
        let all = a.durations.count - a.first  // ≥ 1
        if butts {
            let kept = sum(a.durations, a.first..<a.durations.count)
            let landing = a.start + Int64(kept) + Int64(next.priming)
            return [Choice(kept: all, trailing: 0, repeats: 0, dropped: 0, error: landing - place, dip: 0)]
        }
        // The next part's priming packets: those that start inside its priming.
        var primingPackets = 0
        var ticks: UInt64 = 0
        while primingPackets + 1 < nextDurations.count, ticks < next.priming {
            ticks += UInt64(nextDurations[primingPackets])
            primingPackets += 1
        }
        // A's packets wholly after its sound (an edit that ends early) go first, at no cost.
        var silentTail = 0
        var end = a.mediaBeforeFirst + sum(a.durations, a.first..<a.durations.count)
        while silentTail + 1 < all, end - UInt64(a.durations[a.durations.count - 1 - silentTail]) >= a.soundEnd {
            end -= UInt64(a.durations[a.durations.count - 1 - silentTail])
            silentTail += 1
        }
        let extra = policy == .joining ? (syncFirst ? 64 : Self.maximumDrops) : 4
        let minTrailing = policy == .laying ? max(silentTail - 1, 0) : silentTail
        let maxTrailing = min(all - 1, silentTail + extra)
        let maxRepeats = policy == .laying ? Self.maximumRepeats : 0
        let maxDropped = min(primingPackets, policy == .joining && !syncFirst ? Self.maximumDrops : 3)
        var choices: [Choice] = []
        // Prefix sums of A from its piece's first packet.
        var keptTicks = sum(a.durations, a.first..<a.durations.count)
        for trailing in 0...maxTrailing {
            if trailing > 0 { keptTicks -= UInt64(a.durations[a.durations.count - trailing]) }
            if trailing < minTrailing { continue }
            let kept = all - trailing
            let lastDuration = UInt64(a.durations[a.first + kept - 1])
            let keptEnd = a.mediaBeforeFirst + keptTicks  // In A's own media.
            for repeats in 0...maxRepeats {
                var droppedTicks: UInt64 = 0
                for dropped in 0...maxDropped {
                    if dropped > 0 { droppedTicks += UInt64(nextDurations[dropped - 1]) }
                    if policy == .joining && !syncFirst && trailing - silentTail + dropped > Self.maximumDrops { break }
                    let residual = Int64(next.priming) - Int64(droppedTicks)
                    let seamStart = a.start + Int64(keptTicks) + Int64(repeats) * Int64(lastDuration)
                    let error = seamStart + residual - place
                    var dip = self.dip(soundEnd: a.soundEnd, keptEnd: keptEnd, frame: lastDuration,
                                       residual: residual, firstKept: UInt64(nextDurations[dropped]))
                    if repeats > 0 {
                        // A repeated packet is itself a crossfade: A's sound after the packet
                        // fading out, the packet's own fading in.
                        dip = max(dip, self.dip(soundEnd: a.soundEnd, keptEnd: keptEnd, frame: lastDuration,
                                                residual: 0, firstKept: 1))
                    }
                    choices.append(Choice(kept: kept, trailing: trailing, repeats: repeats, dropped: dropped,
                                          error: error, dip: dip))
                }
            }
        }
        return choices
    }

    /// The order of preference: within the limits first, then the shortest dip, the smallest
    /// error, the fewest repeated and left-out packets.
    func key(_ choice: Choice) -> [UInt64] {
        let overDip: UInt64 = choice.dip > dipLimit ? 1 : 0
        let overError: UInt64 = choice.error.magnitude > errorBound ? 1 : 0
        let packets = UInt64(choice.repeats) + UInt64(choice.dropped)
        if syncFirst {
            return [overError, overDip, choice.dip, choice.error.magnitude, packets]
        }
        return [overDip, overError, choice.dip, choice.error.magnitude, packets]
    }

    /// The predicted dip at a seam (see the type's comment), in ticks.
    /// - Parameters:
    ///   - soundEnd, keptEnd: where A's sound and A's kept packets end, in A's media.
    ///   - frame: the duration of A's last kept packet (the crossfade's length).
    ///   - residual: B's priming left in its kept packets (negative when its first kept
    ///     packet starts inside its sound).
    ///   - firstKept: the duration of B's first kept packet.
    func dip(soundEnd: UInt64, keptEnd: UInt64, frame: UInt64, residual: Int64, firstKept: UInt64) -> UInt64 {
        // Times relative to the start of the crossfade (B's first kept packet).
        let fadeIn = Int64(min(self.fadeIn, frame))
        let fadeOut = Int64(min(self.fadeOut, frame))
        let aEnd: Int64 = soundEnd <= keptEnd ? -Int64(keptEnd - soundEnd)
            : min(Int64(min(soundEnd - keptEnd, frame)), Int64(frame) - fadeOut)
        let bStart: Int64 = residual >= Int64(firstKept) ? residual : max(residual, fadeIn)
        return UInt64(max(bStart - aEnd, 0))
    }

    private func sum(_ durations: [UInt32], _ range: Range<Int>) -> UInt64 {
        var total: UInt64 = 0
        for i in range { total += UInt64(durations[i]) }
        return total
    }
}
