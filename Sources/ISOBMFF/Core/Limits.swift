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
