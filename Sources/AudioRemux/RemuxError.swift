import ISOBMFF

/// Why a job of this library failed: the one error every public entry point of `AudioRemux`
/// throws (`throws(RemuxError)`), whatever the recipe — extract, cut/remux, mux, concat,
/// package, tags, probe. ``code`` is stable (programs and tests match on it); the message is
/// one line for a person, naming the file, and the box path and byte offset when the input is
/// at fault (``boxPath``, ``byteOffset``).
///
/// The errors of the layers beneath (ISOBMFF's `ISOBMFFError`, `TagError`, `MuxCancelled`,
/// `CutPlan.Failure`, `SegmentPlanner.Failure`) are turned into this one in one place,
/// ``init(bridging:)``. An error thrown by a closure the caller passes is rethrown unchanged
/// where the API says so (the closure of `TagFile.edit`); one thrown by the caller's own
/// `ByteSource` or `ByteSink` becomes ``Code/ioError`` and is kept in ``underlyingError``.
///
/// Cancellation is one outcome for every recipe: ``Code/cancelled`` (``cancelled``).
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
    /// The error a caller's own byte source, sink or other code threw, unchanged, when that is
    /// what stopped the job (the code is then ``Code/ioError``); nil otherwise. Not compared
    /// by `==`.
    public let underlyingError: (any Error)?

    /// An error of kind `code`; pass the parser's error when the input is at fault, so that
    /// ``boxPath`` and ``byteOffset`` can say where.
    public init(_ code: Code, _ message: String, parseError: ISOBMFFError? = nil,
                salvageable: SalvageReport? = nil) {
        self.init(code, message, parseError: parseError, salvageable: salvageable, underlying: nil)
    }

    init(_ code: Code, _ message: String, parseError: ISOBMFFError?, salvageable: SalvageReport?,
         underlying: (any Error)?) {
        self.code = code
        self.message = message
        self.parseError = parseError
        self.salvageable = salvageable
        self.underlyingError = underlying
    }

    /// The one cancellation outcome of every recipe (extract, remux/cut, mux, concat,
    /// package): code ``Code/cancelled``; nothing was left behind.
    public static var cancelled: RemuxError { RemuxError(.cancelled, "cancelled") }

    /// `error` as this library's public error — the one place where the errors of the layers
    /// beneath become a ``RemuxError``:
    ///
    /// - a `RemuxError` stays as it is;
    /// - `ISOBMFFError`: ``Code/truncatedInput`` when the file ends early, else
    ///   ``Code/invalidInput``, keeping it as ``parseError`` (box path, byte offset);
    /// - `MuxCancelled`: ``cancelled``;
    /// - `TagError` (a key, value or image the caller gave): ``Code/invalidArgument``;
    /// - `CutPlan.Failure`, `SegmentPlanner.Failure` (a track that cannot be cut or
    ///   segmented): ``Code/unsupportedInput``;
    /// - anything else (a caller's `ByteSource` or `ByteSink` failing): ``Code/ioError``,
    ///   keeping it as ``underlyingError``.
    public init(bridging error: any Error) {
        switch error {
        case let error as RemuxError:
            self = error
        case let error as ISOBMFFError:
            self.init(error)
        case is MuxCancelled:
            self = .cancelled
        case let error as TagError:
            self.init(.invalidArgument, error.message)
        case let failure as CutPlan.Failure:
            self.init(.unsupportedInput, failure.description)
        case let failure as SegmentPlanner.Failure:
            self.init(.unsupportedInput, "the segments cannot be planned: \(failure)")
        default:
            self.init(.ioError, "\(error)", parseError: nil, salvageable: nil, underlying: error)
        }
    }

    /// Equal when the code, message, parser error and salvage report are; ``underlyingError``
    /// (any type) is not compared.
    public static func == (lhs: RemuxError, rhs: RemuxError) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message && lhs.parseError == rhs.parseError
            && lhs.salvageable == rhs.salvageable
    }

    /// `error` bridged as ``init(bridging:)`` does, naming `file` when it comes from beneath: a
    /// ``RemuxError`` already says what it is about and stays as it is.
    init(bridging error: any Error, naming file: String) {
        if let error = error as? RemuxError {
            self = error
        } else {
            self = RemuxError(bridging: error).naming(file)
        }
    }

    /// Wraps a parser error (``init(bridging:)``): a file cut short gets its own code,
    /// everything else is invalid input.
    private init(_ error: ISOBMFFError) {
        let truncated = error.code == .endOfFile
        self.init(truncated ? .truncatedInput : .invalidInput, error.description, parseError: error)
    }

    public var description: String { message }

    /// The same error, its message led by `file` unless it names it already: every error a
    /// recipe throws about its input names that file (issue 30).
    func naming(_ file: String) -> RemuxError {
        guard !file.isEmpty, code != .cancelled, !message.containsBytes(of: file) else { return self }
        return prefixed(file)
    }

    /// The same error, its message led by `subject` ("music clip 2 (b.m4a): …").
    func prefixed(_ subject: String) -> RemuxError {
        RemuxError(code, "\(subject): \(message)", parseError: parseError, salvageable: salvageable,
                   underlying: underlyingError)
    }

    /// The box path where a malformed input is at fault, such as `moov/trak[1]/mdia/minf/stbl/stsz`.
    /// Nil where no box applies (an argument, the file as a whole).
    public var boxPath: String? { parseError.flatMap { $0.path.isEmpty ? nil : $0.path } }

    /// The byte offset in the input where it is at fault.
    public var byteOffset: UInt64? { parseError?.offset }
}

/// Runs `body`, turning what it throws into a ``RemuxError`` (``RemuxError/init(bridging:)``)
/// that names `file` (``RemuxError/naming(_:)``): how every public entry point throws.
func naming<T>(_ file: String, _ body: () throws -> T) throws(RemuxError) -> T {
    do {
        return try body()
    } catch {
        throw RemuxError(bridging: error).naming(file)
    }
}

/// Runs `body`, turning what it throws into a ``RemuxError`` (``RemuxError/init(bridging:)``).
func bridged<T>(_ body: () throws -> T) throws(RemuxError) -> T {
    do {
        return try body()
    } catch {
        throw RemuxError(bridging: error)
    }
}
