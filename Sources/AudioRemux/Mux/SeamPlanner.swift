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
    /// Per seam, the dip the seam rule predicts, in ticks (``SeamRule``).
    var seamDips: [UInt64]
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
///   whole packets, chosen by the one ``SeamRule``: among the layouts (how many of the
///   previous clip's last packets are kept, and for the music how many times its last kept
///   packet is repeated; how many of the next clip's priming packets are left out), the one
///   whose predicted dip is within the rule's limit and whose start error is within its
///   bound, the shortest dip first. "Where it belongs" is the sum of the presented lengths
///   of all clips before it (or the `places` the caller gives), so the error of one seam is
///   never carried into the next.
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
                     exactSeams: Bool, maximumPasses: Int = SeamPlanner.maximumPasses,
                     rule: SeamRule? = nil, places: [Int64]? = nil) -> MusicLayout {
        var clips = clips
        let rule = rule ?? SeamRule(policy: .laying, codec: .aac, timescale: 44100,
                                    frame: clips.first?.durations.first ?? 1024)
        if !exactSeams && !rule.butts {
            for i in clips.indices { clips[i].durations = clips[i].decodedDurations }
        }
        var layout = MusicLayout(pieces: [], edits: [], seamErrors: [], seamDips: [], musicTicks: 0, mediaTicks: 0,
                                 plays: Array(repeating: 0, count: clips.count), durations: clips.map(\.durations))
        if offset > 0 { layout.edits.append(.init(segmentDuration: offset, mediaTime: -1)) }
        guard !clips.isEmpty, needed > 0 else { return layout }
        if exactSeams {
            planExact(clips, needed: needed, loop: loop, maximumPasses: maximumPasses, into: &layout)
        } else {
            planPacketSeams(clips, needed: needed, loop: loop, maximumPasses: maximumPasses, rule: rule,
                            places: places, into: &layout)
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
            if k > 0 {
                layout.seamErrors.append(0)
                layout.seamDips.append(0)
            }
            layout.plays[k % clips.count] += 1
            layout.mediaTicks += ticks
            layout.musicTicks += take
            left -= take
            k += 1
        }
    }

    private static func planPacketSeams(_ clips: [ClipTiming], needed: UInt64, loop: Bool, maximumPasses: Int,
                                        rule: SeamRule, places: [Int64]?, into layout: inout MusicLayout) {
        // Times on the music's timeline: 0 is the first clip's first presented sample. Signed,
        // as the first clip's priming packets start before it.
        let target = Int64(clamping: needed)  // A claimed length past 2^63 ticks is never reached.
        var ideal: Int64 = 0  // Where the current clip's first presented sample belongs.
        var start = -Int64(clips[0].priming)  // Where the current piece's first packet starts.
        var first = 0  // The current piece's first packet.
        var mediaBeforeFirst: UInt64 = 0  // The current clip's media ticks before `first`.
        // A join (no loop, no repeats) is planned over all its seams at once.
        let planned = rule.policy == .joining && !loop && !rule.butts
            ? joinChoices(clips, durations: layout.durations, rule: rule, places: places) : nil
        var k = 0
        while true {
            let index = k % clips.count
            let clip = clips[index]
            let durations = layout.durations[index]
            layout.plays[index] += 1
            let soundEnd = clip.priming + clip.presented  // In the clip's own media.
            let contentEnd = start + Int64(soundEnd) - Int64(mediaBeforeFirst)
            if contentEnd >= target || (!loop && k == clips.count - 1) || k + 1 >= maximumPasses {
                // The last piece: cut at the video's end, or where the music runs out.
                let end = min(target, contentEnd)
                let (count, ticks) = covering(durations, from: first, until: UInt64(max(end - start, 0)))
                layout.pieces.append(.init(clip: index, packets: first..<(first + max(count, 1))))
                layout.mediaTicks += count > 0 ? ticks : UInt64(durations[first])
                layout.musicTicks = UInt64(max(end, 0))
                break
            }
            let nextIndex = (k + 1) % clips.count
            let nextIdeal = places.map { $0[k + 1] } ?? ideal + Int64(clip.presented)
            let side = SeamRule.Side(durations: durations, first: first, start: start,
                                     mediaBeforeFirst: mediaBeforeFirst, soundEnd: soundEnd)
            var choice = rule.choose(after: side, next: clips[nextIndex], nextDurations: layout.durations[nextIndex],
                                     place: nextIdeal)
            if let planned = planned?[k], let forced = rule.candidates(
                after: side, next: clips[nextIndex], nextDurations: layout.durations[nextIndex], place: nextIdeal
            ).first(where: { $0.trailing == planned.trailing && $0.dropped == planned.dropped && $0.repeats == 0 }) {
                choice = forced
            }
            var kept: Int64 = 0
            for i in first..<(first + choice.kept) { kept += Int64(durations[i]) }
            layout.pieces.append(.init(clip: index, packets: first..<(first + choice.kept)))
            let last = first + choice.kept - 1
            for _ in 0..<choice.repeats {
                layout.pieces.append(.init(clip: index, packets: last..<(last + 1)))
                kept += Int64(durations[last])
            }
            layout.mediaTicks += UInt64(kept)
            layout.seamErrors.append(choice.error)
            layout.seamDips.append(choice.dip)
            start += kept
            first = choice.dropped
            mediaBeforeFirst = 0
            for i in 0..<choice.dropped { mediaBeforeFirst += UInt64(layout.durations[nextIndex][i]) }
            ideal = nextIdeal
            k += 1
        }
        layout.edits.append(.init(segmentDuration: layout.musicTicks, mediaTime: Int64(clips[0].priming)))
    }

    /// The layout of every seam of a join, chosen together: a choice at one seam moves every
    /// part after it, and whole packets move a part late only on padding or priming, which
    /// most seams cannot afford under the dip limit. So the seams are planned as a shortest
    /// path over the parts' accumulated start error (a seam's choice adds the same error
    /// whatever came before; values within 3 error bounds of where the seam rule alone would
    /// take the best path so far): fewest seams over the dip limit, then the least error past the
    /// bound summed over the parts (the other way round with ``SeamRule/syncFirst``), then
    /// the least dip in all, then the least error in all.
    /// Nil (each seam then chosen alone) when no path stays within the range.
    ///
    /// Work: seams × (6 × error bound + 1) × at most 9 layouts; memory: one byte per seam
    /// and error value (6.7 MB for 1,000 seams of 44.1 kHz AAC).
    static func joinChoices(_ clips: [ClipTiming], durations: [[UInt32]], rule: SeamRule,
                            places: [Int64]?) -> [SeamRule.Choice]? {
        let seams = clips.count - 1
        guard seams > 0 else { return [] }
        // Error values within `cap` of a centre that follows the best path so far: wide
        // enough for every path worth taking, even where the parts force a long drift.
        let cap = Int64(max(rule.errorBound, 1)) * 3
        let width = Int(2 * cap + 1)
        struct Cost: Comparable {
            var first: UInt64, second: UInt64, dips: UInt64, errors: UInt64
            static func < (a: Cost, b: Cost) -> Bool {
                (a.first, a.second, a.dips, a.errors) < (b.first, b.second, b.dips, b.errors)
            }
        }
        let unreached = Cost(first: .max, second: .max, dips: .max, errors: .max)
        var cost = [Cost](repeating: unreached, count: width)
        cost[Int(cap)] = Cost(first: 0, second: 0, dips: 0, errors: 0)
        var centres: [Int64] = [0]  // Per seam boundary: the error at the middle of the window.
        var options: [[SeamRule.Choice]] = []
        var back = [UInt8](repeating: 0, count: seams * width)
        for k in 0..<seams {
            let a = clips[k]
            let side = SeamRule.Side(durations: durations[k], first: 0, start: -Int64(a.priming), mediaBeforeFirst: 0,
                                     soundEnd: a.priming + a.presented)
            let place = places.map { $0[k + 1] - $0[k] } ?? Int64(a.presented)
            // Leave at least one packet of each part whatever its neighbours leave out.
            let limit = durations[k].count - 1 - SeamRule.maximumDrops - 1
            let seamOptions = Array(rule.candidates(after: side, next: clips[k + 1], nextDurations: durations[k + 1],
                                                    place: place).filter { $0.trailing <= max(limit, 0) }.prefix(255))
            options.append(seamOptions)
            // The next window is centred where the best state so far goes by the seam rule alone.
            let centre = centres[k]
            guard let bestState = cost.indices.min(by: { cost[$0] < cost[$1] }), cost[bestState] != unreached,
                  !seamOptions.isEmpty else { return nil }
            let bestError = centre + Int64(bestState) - cap
            var greedy = seamOptions[0]
            for option in seamOptions.dropFirst() {
                var shifted = option
                shifted.error += bestError
                var current = greedy
                current.error += bestError
                if rule.key(shifted).lexicographicallyPrecedes(rule.key(current)) { greedy = option }
            }
            let nextCentre = bestError + greedy.error
            centres.append(nextCentre)
            var next = [Cost](repeating: unreached, count: width)
            for state in 0..<width where cost[state] != unreached {
                let error = centre + Int64(state) - cap
                for (j, option) in seamOptions.enumerated() {
                    let landed = error + option.error
                    let target = landed - nextCentre + cap
                    guard target >= 0, target < Int64(width) else { continue }
                    let overDip: UInt64 = option.dip > rule.dipLimit ? 1 : 0
                    // How far past the bound the part starts: far excursions cost more than near ones.
                    let overError = landed.magnitude > rule.errorBound ? landed.magnitude - rule.errorBound : 0
                    var c = cost[state]
                    if rule.syncFirst {
                        c.first += overError
                        c.second += overDip
                    } else {
                        c.first += overDip
                        c.second += overError
                    }
                    c.dips += option.dip
                    c.errors += landed.magnitude
                    if c < next[Int(target)] {
                        next[Int(target)] = c
                        back[k * width + Int(target)] = UInt8(j)
                    }
                }
            }
            cost = next
        }
        guard var state = cost.indices.min(by: { cost[$0] < cost[$1] }), cost[state] != unreached else { return nil }
        var choices = [SeamRule.Choice](repeating: options[0][0], count: seams)
        for k in stride(from: seams - 1, through: 0, by: -1) {
            let option = options[k][Int(back[k * width + state])]
            choices[k] = option
            // The state before the seam, in the window of seam k.
            let landed = centres[k + 1] + Int64(state) - cap
            state = Int(landed - option.error - centres[k] + cap)
        }
        return choices
    }
}
