extension UserDataBox {
    /// Where a `moov`'s cover images are, found from box headers alone
    /// (``BoxWalker/children(in:filling:limit:)``): the first box of each type on the path
    /// `moov/udta/meta/ilst/covr` (a `meta` read as a plain box when `hdlr` comes first, as
    /// QuickTime writes it, else as a full box, ISO/IEC 14496-12 § 8.11.1) and the `data`
    /// boxes of that `covr` item (QuickTime File Format, "Metadata").
    ///
    /// The one rule for the covers a tag edit leaves in the file: the `moov` read without
    /// their bytes (`TagFile.Layout`) and the new `moov` with them spliced back
    /// (``TagRewritePlan/splicing(_:images:)``) find the same boxes, whose sizes count them.
    /// Those boxes have a 32-bit size (no 64-bit or size-0 header), so that their sizes can be
    /// changed in place; their siblings may have any header (a `uuid`, a 64-bit size).
    public struct CoverBoxes: Sendable, Equatable {
        /// `moov`, `udta`, `meta`, `ilst` and `covr`, outermost first: the boxes whose sizes
        /// count the images inside them.
        public var path: [BoxHeader]
        /// The `data` boxes of the `covr` item, in order (other children left out).
        public var dataBoxes: [BoxHeader]

        /// The cover boxes of the `moov` at `moov` in `source`; nil when there is no `covr`
        /// item on that path or a box there is not as described above.
        public init?(movie moov: BoxHeader, in source: some ByteSource) throws {
            /// The children of `box` from `start`; nil when they do not fill it.
            func children(of box: BoxHeader, from start: UInt64) throws -> [BoxHeader]? {
                try BoxWalker.children(in: source, filling: start..<box.end)
            }
            /// A size field of 32 bits, which can be patched in place (these types are no `uuid`).
            func hasSmallSize(_ box: BoxHeader) -> Bool { box.headerSize == 8 && !box.extendsToEnd }
            guard moov.type == "moov",
                  let udta = try children(of: moov, from: moov.payloadOffset)?.first(where: { $0.type == "udta" }),
                  let meta = try children(of: udta, from: udta.payloadOffset)?.first(where: { $0.type == "meta" }),
                  meta.size >= 16 else { return nil }
            let start = try source.bytes(at: meta.payloadOffset, count: 8)
            let fields = start[4...].elementsEqual("hdlr".utf8) ? 0 : 4 as UInt64  // version and flags
            guard let ilst = try children(of: meta, from: meta.payloadOffset + fields)?
                      .first(where: { $0.type == "ilst" }),
                  let covr = try children(of: ilst, from: ilst.payloadOffset)?.first(where: { $0.type == "covr" }),
                  let inCovr = try children(of: covr, from: covr.payloadOffset) else { return nil }
            path = [moov, udta, meta, ilst, covr]
            dataBoxes = inCovr.filter { $0.type == "data" }
            guard path.allSatisfy(hasSmallSize), dataBoxes.allSatisfy(hasSmallSize) else { return nil }
        }
    }
}
