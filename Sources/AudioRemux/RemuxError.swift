import ISOBMFF

/// Why an extraction failed. ``code`` is stable (programs and tests match on it); the
/// message is one line for a person, naming the file, box path and byte offset when the
/// input is at fault.
public struct RemuxError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, for programs to match on: stable across versions. The command-line
    /// tool maps each code to an exit status (see the README).
    public enum Code: String, Sendable {
        /// The input's boxes or sample tables are malformed (see ``parseError``).
        case invalidInput
        /// The input ends early: a box or the sample data runs past the end of the file.
        case truncatedInput
        /// The input cannot be opened or is not a regular file.
        case cannotOpenInput
        /// The input has no audio track, or not the one asked for.
        case noAudioTrack
        /// The video file given to the muxer has no video track.
        case noVideoTrack
        /// Music clips whose coding differs (codec, sample rate, channels, configuration)
        /// cannot share one track.
        case incompatibleClips
        /// The audio codec cannot be copied into an M4A (yet).
        case unsupportedCodec
        /// The input uses a feature this version cannot extract from (fragments, external
        /// data references, encryption).
        case unsupportedInput
        /// The destination exists and overwriting was not asked for.
        case destinationExists
        /// The destination's directory is missing or not writable.
        case cannotCreateOutput
        /// Input and output name the same file.
        case sameFile
        /// An option's value does not fit this input (a music offset past the video's end):
        /// the caller asked for something impossible, the files are fine.
        case invalidArgument
        /// Reading or writing failed (disk full, I/O error, the input changed meanwhile).
        case ioError
        /// The caller cancelled (Swift task cancellation); nothing was left behind.
        case cancelled
        /// Another edit holds the file, or it was replaced or changed while being edited; it
        /// was not written. Try again.
        case fileBusy
        /// The output is complete and in place, but the system could not confirm it is on
        /// disk (syncing its folder after the rename failed): after a crash the old file, or
        /// none, may be back.
        case notSynced
    }

    /// What kind of failure it is.
    public let code: Code
    /// One line for a person, naming the file, and the box path and byte offset when the
    /// input is at fault; it may change between versions.
    public let message: String
    /// The parser's error, with box path and offset, when the input is malformed.
    public let parseError: ISOBMFFError?
    /// For a ``Code/truncatedInput`` error whose whole samples before the cut can be
    /// extracted: what ``ExtractionOptions/salvage`` would recover. nil otherwise; match on
    /// this rather than on the message.
    public let salvageable: SalvageReport?

    /// An error of kind `code`; pass the parser's error when the input is at fault, so that
    /// ``boxPath`` and ``byteOffset`` can say where.
    public init(_ code: Code, _ message: String, parseError: ISOBMFFError? = nil,
                salvageable: SalvageReport? = nil) {
        self.code = code
        self.message = message
        self.parseError = parseError
        self.salvageable = salvageable
    }

    /// Wraps a parser error: a file cut short gets its own code, everything else is
    /// invalid input.
    init(_ error: ISOBMFFError) {
        let truncated = error.code == .endOfFile
        self.init(truncated ? .truncatedInput : .invalidInput, error.description, parseError: error)
    }

    public var description: String { message }

    /// The same error, its message led by `file` unless it names it already: every error a
    /// recipe throws about its input names that file (issue 30).
    func naming(_ file: String) -> RemuxError {
        guard !file.isEmpty, !message.containsBytes(of: file) else { return self }
        return prefixed(file)
    }

    /// The same error, its message led by `subject` ("music clip 2 (b.m4a): …").
    func prefixed(_ subject: String) -> RemuxError {
        RemuxError(code, "\(subject): \(message)", parseError: parseError, salvageable: salvageable)
    }

    /// The box path where a malformed input is at fault, such as `moov/trak[1]/mdia/minf/stbl/stsz`.
    /// Nil where no box applies (an argument, the file as a whole).
    public var boxPath: String? { parseError.flatMap { $0.path.isEmpty ? nil : $0.path } }

    /// The byte offset in the input where it is at fault.
    public var byteOffset: UInt64? { parseError?.offset }
}

/// Runs `body`, naming `file` in any ``RemuxError`` it throws (``RemuxError/naming(_:)``);
/// other errors, such as a caller's own from a closure it passed, are rethrown unchanged.
func naming<T>(_ file: String, _ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as RemuxError {
        throw error.naming(file)
    }
}
