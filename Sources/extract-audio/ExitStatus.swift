import AudioRemux

/// The tool's exit statuses, in the spirit of sysexits(3). Documented in the README and
/// in `--help`; tests rely on them.
enum ExitStatus: Int32 {
    case success = 0
    /// EX_USAGE: wrong arguments, or input and output naming the same file.
    case usage = 64
    /// EX_DATAERR: the input is malformed or truncated.
    case dataError = 65
    /// EX_NOINPUT: the input cannot be opened.
    case noInput = 66
    /// EX_UNAVAILABLE: the codec or a feature of the input is not supported.
    case unsupported = 69
    /// EX_OSERR: the output is complete and in place, but syncing its folder failed.
    case notSynced = 71
    /// EX_CANTCREAT: the destination exists, or cannot be created.
    case cannotCreate = 73
    /// EX_IOERR: reading or writing failed.
    case ioError = 74
    /// EX_TEMPFAIL: another edit holds the file, or it changed meanwhile (tag); try again.
    case busy = 75
    /// The input has no audio track (or not the one asked for); for mux, also a video file
    /// without video.
    case noAudioTrack = 79
    /// Interrupted by SIGINT / SIGTERM (128 + signal number).
    case interrupted = 130
    case terminated = 143

    init(_ code: RemuxError.Code) {
        switch code {
        case .invalidInput, .truncatedInput: self = .dataError
        case .cannotOpenInput: self = .noInput
        case .noAudioTrack, .noVideoTrack: self = .noAudioTrack
        case .unsupportedCodec, .unsupportedInput, .incompatibleClips: self = .unsupported
        case .destinationExists, .cannotCreateOutput: self = .cannotCreate
        case .sameFile, .invalidArgument: self = .usage
        case .ioError: self = .ioError
        case .cancelled: self = .interrupted
        case .fileBusy: self = .busy
        case .notSynced: self = .notSynced
        }
    }
}

/// A status is thrown where a failure was already reported (one line, or a JSON object).
extension ExitStatus: Error {}
