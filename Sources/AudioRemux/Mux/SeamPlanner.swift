import ISOBMFF

/// The timing of one music clip, all the seam planner needs: its packets' durations, the
/// priming its edit list skips, and the ticks it presents after the priming.
struct ClipTiming: Sendable, Equatable {
    /// Each packet's duration in the track's timescale, in decode order.
    var durations: [UInt32]
    /// Samples of priming at the start (the clip's first edit's media time).
    var priming: UInt64
    /// The ticks the clip presents after its priming; more than 0.
    var presented: UInt64

    /// The packets' durations as decoded: a decoder outputs a whole frame for every packet,
    /// but muxers shorten the last packet's `stts` duration so that the media ends where
    /// the clip's audio does (FFmpeg does). Inside the music that packet lasts what it
    /// decodes to, the duration of the packet before it.
    var decodedDurations: [UInt32] {
        guard durations.count > 1, let last = durations.last, last < durations[durations.count - 2] else {
            return durations
        }
        var decoded = durations
        decoded[decoded.count - 1] = durations[durations.count - 2]
        return decoded
    }
}

/// Where the packets of the music track come from and how they are presented.
struct MusicLayout: Sendable, Equatable {
    /// A run of packets of one clip, in track order.
    struct Piece: Sendable, Equatable {
        /// The clip (index into the planner's clips).
        var clip: Int
        /// The clip's packets placed, by index.
        var packets: Range<Int>
    }

    var pieces: [Piece]
    /// The music track's edit list: durations in the track's timescale (the output movie's).
    var edits: [EditListBox.Entry]
    /// Per seam, in ticks: where the next clip's first presented sample lands on the music's
    /// timeline minus where it belongs (the presented lengths of the clips before it). Zero
    /// for exact seams.
    var seamErrors: [Int64]
    /// The music presented, in ticks (the offset not included).
    var musicTicks: UInt64
    /// The ticks of media the track holds (its packets' durations).
    var mediaTicks: UInt64
    /// How many times each clip is placed.
    var plays: [Int]
    /// Per clip, the duration each of its packets gets in the music track: the decoded
    /// durations for packet seams, the clip's own for exact seams.
    var durations: [[UInt32]]
}

/// Plans the music track: the clips back to back, the last one cut where the video ends.
///
/// Two layouts:
/// - **Packet seams** (the default): one edit for the whole music. Each seam is made of
///   whole packets: the next clip's priming packets are dropped, and the previous clip
///   keeps as many of its last packets as puts the next clip's first presented sample
///   nearest to where it belongs. "Where it belongs" is the sum of the presented lengths
///   of all clips before it, so the error of one seam is never carried into the next: the
///   music never drifts, and every seam is within half a packet of the ideal. Where the
///   next clip has a whole priming packet, its last one is kept in place of the previous
///   clip's last packet: the same timing, and it decodes to the previous clip fading out
///   while giving the next clip's first frame its pre-roll (without it that frame decodes
///   to about 5 ms of near silence).
/// - **Exact seams**: one edit per clip, skipping each clip's priming and cutting it to the
///   sample. Exact, but most players other than AVFoundation/QuickTime stop or gap at the
///   second edit.
enum SeamPlanner {
    /// Plans `needed` ticks of music (fewer when the clips, not looped, run out) after an
    /// empty edit of `offset` ticks.
    ///
    /// Preconditions (checked by the caller's clip reader): every clip has packets, presents
    /// more than 0 ticks, and its priming plus presented ticks fit in its packets. The work is
    /// one step per packet placed (bounded by the caller against ``Limits/maximumMusicPackets``).
    static func plan(_ clips: [ClipTiming], filling needed: UInt64, offset: UInt64, loop: Bool,
                     exactSeams: Bool, maximumPasses: Int = SeamPlanner.maximumPasses) -> MusicLayout {
        var clips = clips
        if !exactSeams {
            for i in clips.indices { clips[i].durations = clips[i].decodedDurations }
        }
        var layout = MusicLayout(pieces: [], edits: [], seamErrors: [], musicTicks: 0, mediaTicks: 0,
                                 plays: Array(repeating: 0, count: clips.count), durations: clips.map(\.durations))
        if offset > 0 { layout.edits.append(.init(segmentDuration: offset, mediaTime: -1)) }
        guard !clips.isEmpty, needed > 0 else { return layout }
        if exactSeams {
            planExact(clips, needed: needed, loop: loop, maximumPasses: maximumPasses, into: &layout)
        } else {
            planPacketSeams(clips, needed: needed, loop: loop, maximumPasses: maximumPasses, into: &layout)
        }
        return layout
    }

    /// Packet count and ticks of the first packets of `durations` (from `first`) that reach
    /// `time` ticks or the end.
    static func covering(_ durations: [UInt32], from first: Int = 0, until time: UInt64) -> (count: Int, ticks: UInt64) {
        var ticks: UInt64 = 0
        var index = first
        while index < durations.count && ticks < time {
            ticks += UInt64(durations[index])
            index += 1
        }
        return (index - first, ticks)
    }

    /// The most clip passes a plan makes by default. Every pass places at least one packet
    /// and the caller refuses plans of more than ``Limits/maximumMusicPackets`` packets, so a
    /// real plan stays below this; clips whose packets last (almost) nothing would otherwise
    /// loop without reaching the video's end, one piece per pass (a fuzzer found 2 GB of
    /// pieces). Callers pass the tighter bound they know: the packets the music needs.
    static let maximumPasses = Limits.maximumMusicPackets

    private static func planExact(_ clips: [ClipTiming], needed: UInt64, loop: Bool, maximumPasses: Int,
                                  into layout: inout MusicLayout) {
        var left = needed
        var k = 0
        while left > 0 && (loop || k < clips.count) && k < maximumPasses {
            let clip = clips[k % clips.count]
            let take = min(clip.presented, left)
            let (count, ticks) = covering(clip.durations, until: clip.priming + take)
            layout.pieces.append(.init(clip: k % clips.count, packets: 0..<count))
            // mediaTicks sums at most maximumMusicPackets packets of at most a few seconds each.
            layout.edits.append(.init(segmentDuration: take, mediaTime: Int64(layout.mediaTicks + clip.priming)))
            if k > 0 { layout.seamErrors.append(0) }
            layout.plays[k % clips.count] += 1
            layout.mediaTicks += ticks
            layout.musicTicks += take
            left -= take
            k += 1
        }
    }

    private static func planPacketSeams(_ clips: [ClipTiming], needed: UInt64, loop: Bool, maximumPasses: Int,
                                        into layout: inout MusicLayout) {
        // Times on the music's timeline: 0 is the first clip's first presented sample. Signed,
        // as the first clip's priming packets start before it.
        let target = Int64(clamping: needed)  // A claimed length past 2^63 ticks is never reached.
        var ideal: Int64 = 0  // Where the current clip's first presented sample belongs.
        var start = -Int64(clips[0].priming)  // Where the current piece's first packet starts.
        var first = 0  // The current piece's first packet.
        var residual = Int64(clips[0].priming)  // Priming left in the current piece's packets.
        var k = 0
        while true {
            let index = k % clips.count
            let clip = clips[index]
            layout.plays[index] += 1
            let contentEnd = start + residual + Int64(clip.presented)
            if contentEnd >= target || (!loop && k == clips.count - 1) || k + 1 >= maximumPasses {
                // The last piece: cut at the video's end, or where the music runs out.
                let end = min(target, contentEnd)
                let (count, ticks) = covering(clip.durations, from: first, until: UInt64(max(end - start, 0)))
                layout.pieces.append(.init(clip: index, packets: first..<(first + max(count, 1))))
                layout.mediaTicks += count > 0 ? ticks : UInt64(clip.durations[first])
                layout.musicTicks = UInt64(max(end, 0))
                break
            }
            // The next clip: its whole priming packets are dropped (keeping at least one packet).
            let next = clips[(k + 1) % clips.count]
            var dropped = 0
            var droppedTicks: UInt64 = 0
            while dropped + 1 < next.durations.count, droppedTicks + UInt64(next.durations[dropped]) <= next.priming {
                droppedTicks += UInt64(next.durations[dropped])
                dropped += 1
            }
            var nextResidual = Int64(next.priming - droppedTicks)
            let nextIdeal = ideal + Int64(clip.presented)
            // Keep m ≥ 1 packets of this clip: the seam lands at start + ticks(m) + nextResidual,
            // nearest to where it belongs (a tie goes early: it cuts rather than pauses).
            var bestCount = 1
            var bestError = Int64.max
            var end = start
            var m = 0
            while first + m < clip.durations.count {
                end += Int64(clip.durations[first + m])
                m += 1
                let error = end + nextResidual - nextIdeal
                if error.magnitude < bestError.magnitude || (error.magnitude == bestError.magnitude && error < 0) {
                    bestError = error
                    bestCount = m
                }
                if error > 0 { break }  // Later ends only move further away.
            }
            var kept: Int64 = 0
            for i in first..<(first + bestCount) { kept += Int64(clip.durations[i]) }
            // Dropping every priming packet of the next clip would decode its first frame
            // without pre-roll (measured: about 5 ms near silence at a tone's seam). So this
            // clip's last packet goes and the next clip's last priming packet stays instead:
            // the same timing when they last as long, no silence (the priming packet decodes
            // to this clip fading out), and the next clip's first frame has its pre-roll.
            if bestCount > 1, dropped > 0 {
                bestCount -= 1
                kept -= Int64(clip.durations[first + bestCount])
                dropped -= 1
                nextResidual += Int64(next.durations[dropped])
                bestError = start + kept + nextResidual - nextIdeal
            }
            layout.pieces.append(.init(clip: index, packets: first..<(first + bestCount)))
            layout.mediaTicks += UInt64(kept)
            layout.seamErrors.append(bestError)
            start += kept
            first = dropped
            residual = nextResidual
            ideal = nextIdeal
            k += 1
        }
        layout.edits.append(.init(segmentDuration: layout.musicTicks, mediaTime: Int64(clips[0].priming)))
    }
}
