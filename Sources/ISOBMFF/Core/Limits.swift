/// Caps that keep hostile input from steering the parser into deep recursion or huge
/// allocations. Every allocation sized by file contents is also checked against the bytes
/// the box really holds; these caps bound what even a real (huge) box may ask for.
public enum Limits {
    /// How deep boxes may nest. Real files stay below 12 (`moov/trak/mdia/minf/stbl/stsd/
    /// mp4a/wave/esds` is 9).
    public static let maximumDepth = 24

    /// The largest `moov` this package loads into memory (it holds every sample table).
    /// A 10-hour AAC track needs about 8 MiB.
    public static let maximumMovieBoxSize: UInt64 = 1 << 30

    /// The largest `ftyp` accepted; real ones are a few dozen bytes.
    public static let maximumFileTypeBoxSize: UInt64 = 1 << 16

    /// Initial capacity reserved for any table before its entries are read.
    public static let initialTableCapacity = 1 << 16

    /// The largest `moof` read into memory. Real fragments are a few kilobytes.
    public static let maximumFragmentBoxSize: UInt64 = 64 << 20

    /// The largest sample count of one track (about 1,600 hours of 48 kHz AAC).
    public static let maximumSampleCount = 1 << 30

    /// How many samples beyond one per byte of the file a fragmented track may hold: every
    /// real sample takes at least a byte, and the slack leaves room for a few empty ones.
    public static let fragmentSampleSlack: UInt64 = 1 << 16

    /// How far (in seconds) an edit may run past the end of the media before the fitting
    /// is worth a warning; real files round their edits by a few milliseconds.
    public static let editOverrunTolerance: UInt64 = 1

    /// How many empty (size 0) samples the fragments of one track may hold. They take no
    /// bytes, so the file's length does not bound them; each costs four bytes of `stsz`.
    public static let maximumEmptyFragmentSamples: UInt64 = 1 << 16

    /// The most packets `mux` repeats into a music track (more only when the clips really
    /// hold more): 2^19, about 3 hours of 48 kHz AAC (1024 samples a packet). `--loop`
    /// repeats the clips for as long as the video claims to last, so the count is computed
    /// and checked against this before anything is built. Measured: 2^20 packets peak at
    /// 55 MiB resident, too close to the 64 MiB a mux of inputs under 100 MB may take.
    public static let maximumMusicPackets = 1 << 19

    /// The longest an audio packet may last, in seconds: real codecs stay far below (AAC
    /// 1024 samples, AC-3 1536, FLAC at most 65535, 8.2 s at 8 kHz). A clip whose timing
    /// claims more cannot be placed on a timeline without decoding it.
    public static let maximumAudioPacketSeconds: UInt64 = 10

    /// The most sample bytes ``MovieWriter`` puts in one fragment: a `trun` addresses its
    /// data with a signed 32-bit offset from the `moof`, so a fragment must stay below 2 GiB;
    /// a fragment reaching this is cut early, even between sync samples.
    public static let maximumFragmentPayload: UInt64 = 1 << 30
}

extension Limits {
    /// The deepest a box copied into an output (metadata, sample entry children) may end up,
    /// counting `moov` as 1, in the levels FFmpeg's `mov_read_default` counts: it refuses a
    /// file ("Atoms too deeply nested") past 11 of its own levels, the file's root included,
    /// and it does not count `stsd` (sample entries are read by `mov_read_stsd`). Measured
    /// with FFmpeg 5.1: `moov/udta` + 8 levels reads, + 9 does not; `trak/udta` + 7 / + 8;
    /// inside `mp4a` + 4 / + 5. A sample entry therefore counts as depth 6 here.
    public static let maximumCopiedDepth = 10

    /// The depth a sample entry is counted at for ``maximumCopiedDepth`` (see there: FFmpeg
    /// does not count `stsd`).
    public static let sampleEntryDepth = 6

    /// The most chapters (samples of a chapter track) an output carries; a chapter track
    /// declaring more is not copied. Real chapter lists have dozens.
    public static let maximumChapterCount = 4096

    /// The largest chapter-track sample copied as it is (a 16-bit length, the title and an
    /// `encd` box); a larger one is rebuilt from its title, cut to ``maximumChapterTitleBytes``.
    public static let maximumChapterSampleSize = 2048

    /// The longest chapter title kept, in bytes of UTF-8.
    public static let maximumChapterTitleBytes = 1024

    /// The most metadata items `probe` lists from one `ilst`.
    public static let maximumMetadataItems = 4096

    /// The most top-level boxes a tag edit walks (a fragmented file has two per fragment):
    /// their headers are held in memory to plan the rewrite.
    public static let maximumTopLevelBoxes = 1 << 21
}

extension Limits {
    /// The most bytes ``KeyFrameProbe`` scans for a start code or unescapes (H.264 SEI
    /// messages) in one sample. A picture header comes within the first few hundred bytes
    /// in real streams; x264's first SEI, its version string, takes about 700.
    public static let keyFrameProbeScanBytes = 8192

    /// The most NAL units, OBUs or start codes ``KeyFrameProbe`` walks in one sample before
    /// giving up: an access unit puts its delimiters, parameter sets and SEI before the
    /// first slice, a handful in practice.
    public static let keyFrameProbeUnits = 64
}
