/// An error found in a file's box structure, with where it was found.
///
/// ``code`` is stable and meant for programs and tests; ``message`` is for people. ``path``
/// names the box (`moov/trak[2]/mdia/minf/stbl/stsz`, `trak` counted from 1 in file order)
/// and ``offset`` is the absolute byte offset in the file where the problem lies.
public struct ISOBMFFError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of problem: stable across versions, for programs and tests to match on.
    public enum Code: String, Sendable {
        /// A box too short for its fields.
        case truncated
        /// The file ends before a box does: the file was cut short.
        case endOfFile
        /// A box size that cannot be right: below its header, or a 64-bit size that overflows.
        case invalidBoxSize
        /// A box that ends past its parent or past the end of the file.
        case boxOutsideParent
        /// Boxes nested deeper than ``Limits/maximumDepth``.
        case nestingTooDeep
        /// A table whose entry count needs more bytes than its box has.
        case countExceedsBox
        /// A field value the specification does not allow, or one this package refuses.
        case invalidValue
        /// A mandatory box is missing.
        case missingBox
        /// A box that may appear once appears again.
        case duplicateBox
        /// A box version this package does not know.
        case unsupportedVersion
        /// Sample tables that contradict one another or point outside the file.
        case invalidSampleTable
        /// Something that exceeds one of the ``Limits``.
        case limitExceeded
    }

    /// What kind of problem it is.
    public let code: Code
    /// One line for a person, such as `entry count 5000 needs 5000 × 12 bytes, the box has 96`;
    /// it may change between versions.
    public let message: String
    /// The box path, such as `moov/trak[2]/mdia/minf/stbl/stsz`; empty for the file as a whole.
    public let path: String
    /// The absolute byte offset where the problem lies; nil when it lies in no one place (a
    /// box that is missing altogether).
    public let offset: UInt64?

    /// An error of kind `code`, found in the box at `path` at byte `offset`.
    public init(_ code: Code, _ message: String, path: String, offset: UInt64?) {
        self.code = code
        self.message = message
        self.path = path
        self.offset = offset
    }

    /// `moov/trak[1]/mdia at byte 40: message`; where no box applies, `at byte 0: message`;
    /// and the message alone where neither does (a value such as a time given as text).
    public var description: String {
        switch (path.isEmpty, offset) {
        case (true, nil): message
        case (true, let offset?): "at byte \(offset): \(message)"
        case (false, nil): "\(path): \(message)"
        case (false, let offset?): "\(path) at byte \(offset): \(message)"
        }
    }
}
