import ISOBMFF

/// A cut's audio track retimed from a media timescale other than its sample rate (a Smooth
/// Streaming track's 10 MHz) to the sample rate, where every copied packet lasts a whole
/// number of samples in it.
///
/// Why: FFmpeg 5.1 (libavformat/mov.c, `mov_fix_index`) skips the first edit's media time
/// of an audio track as that many *samples* at the start of decoding (its `skip_samples`),
/// counting in the media timescale: a cut of a 10 MHz track whose edit starts 247619 ticks
/// (24.8 ms, 1092 samples) into the copy lost 247619 samples, 5.6 s, and FFmpeg decoded
/// nothing of a 2.5 s cut (GStreamer decoded it). In the sample rate the media time counts
/// samples, as FFmpeg reads it. A Smooth Streaming muxer rounds each packet's duration to
/// its 10 MHz clock (1024 samples at 44100 Hz are 232199.55 ticks: 232199 or 232200), so
/// each duration is converted to the nearest whole number of samples where it lies within
/// one media tick of it (ISO/IEC 14496-12 § 8.6.1.2: the timescale is the track's choice;
/// nothing else about the samples changes). Otherwise (a duration that is no whole number
/// of samples, composition offsets) the track keeps its timescale.
struct SampleRateTimescale: Equatable {
    /// The sample rate, the new media timescale.
    var rate: UInt32
    /// The copied packets' durations in it.
    var durations: [UInt32]
    /// The copied packets' durations in the track's own timescale, to map times.
    var original: [UInt32]
    /// The track's own timescale.
    var timescale: UInt32

    /// The retiming of packets lasting `durations` ticks of `timescale` to `rate`; nil where
    /// the timescale is already the rate, a rate or timescale is 0, or some duration is not
    /// within one tick of a whole number of samples. O(packets).
    init?(durations: [UInt32], timescale: UInt32, rate: UInt32) {
        guard rate > 0, timescale > 0, rate != timescale, !durations.isEmpty else { return nil }
        var converted: [UInt32] = []
        converted.reserveCapacity(durations.count)
        for duration in durations {
            guard let samples = rescale(UInt64(duration), from: timescale, to: rate),
                  let count = UInt32(exactly: samples), let back = rescale(samples, from: rate, to: timescale)
            else { return nil }
            // Within one tick of the track's clock: what rounding to that clock can do.
            let error = back > UInt64(duration) ? back - UInt64(duration) : UInt64(duration) - back
            guard error <= 1, count > 0 || duration == 0 else { return nil }
            converted.append(count)
        }
        self.rate = rate
        self.durations = converted
        self.original = durations
        self.timescale = timescale
    }

    /// The retiming of the packets `range` of `samples` (a cut's copy), counted in
    /// `timescale`, to `rate` (the rate the codec decodes to); nil as for
    /// ``init(durations:timescale:rate:)``, and where the track has composition offsets.
    /// O(packets in range).
    init?(copying range: Range<Int>, of samples: SampleIndex, timescale: UInt32, rate: Int) {
        guard let rate = UInt32(exactly: rate), samples.compositionOffsetRange == 0...0,
              range.lowerBound >= 0, range.upperBound <= samples.count else { return nil }
        var durations: [UInt32] = []
        durations.reserveCapacity(range.count)
        var iterator = samples.makeIterator(from: range.lowerBound)
        while durations.count < range.count, let sample = iterator.next() { durations.append(sample.duration) }
        self.init(durations: durations, timescale: timescale, rate: rate)
    }

    /// The note a cut gives where it retimes a track.
    func note(track: UInt32?) -> String {
        (track.map { "track \($0): " } ?? "") + "written in its sample rate's timescale (\(rate)), not \(timescale): "
            + "each packet lasts a whole number of samples"
    }

    /// `ticks` of the track's clock counted from the first copied packet, in samples: the
    /// packet it falls in keeps its place, the part of it after that packet's start is
    /// rescaled (rounded to the nearest sample). Nil past the packets' end.
    func samples(_ ticks: UInt64) -> UInt64? {
        var start: UInt64 = 0
        var converted: UInt64 = 0
        for (old, new) in zip(original, durations) {
            let end = start + UInt64(old)  // A sum of UInt32s over at most 2^31 packets: < 2^63.
            if ticks < end || (ticks == end && old == 0) {
                guard let inside = rescale(ticks - start, from: timescale, to: rate) else { return nil }
                return converted + Swift.min(inside, UInt64(new))
            }
            start = end
            converted += UInt64(new)
        }
        return ticks == start ? converted : nil
    }

    /// The track's edits with their media times in samples; nil where one does not map.
    func edits(_ edits: [EditListBox.Entry]) -> [EditListBox.Entry]? {
        var mapped: [EditListBox.Entry] = []
        for var edit in edits {
            if !edit.isEmpty {
                guard let ticks = UInt64(exactly: edit.mediaTime), let samples = samples(ticks),
                      let time = Int64(exactly: samples) else { return nil }
                edit.mediaTime = time
            }
            mapped.append(edit)
        }
        return mapped
    }
}
