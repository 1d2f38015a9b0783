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
}
