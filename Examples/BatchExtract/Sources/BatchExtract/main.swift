// Darwin review (issue 21). CI builds this file on Linux only; the calls below were checked
// line by line against Apple's manual pages (section in parentheses) for the Darwin branch:
//   - signal(3), _exit(2), mkdir(2) with EEXIST, isatty(3), strerror(3): the same
//     signatures on Darwin. Task.detached: macOS 10.15 / iOS 13, below the declared
//     platforms (Scripts/availability/check.py).
// Extracts the soundtrack of every .mp4, .mov and .m4v in a folder into another folder, as
// .m4a files, with the async API of AudioRemux. No Foundation: directory listing and
// terminal output go through the C library.
//
//   BatchExtract [--overwrite] INPUT-FOLDER OUTPUT-FOLDER
//
// Exit status: 0 when every movie was extracted, 1 when some failed, 2 on a usage error.

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import AudioRemux

var arguments = Array(CommandLine.arguments.dropFirst())
let overwrite = arguments.contains("--overwrite")
arguments.removeAll { $0 == "--overwrite" }
guard arguments.count == 2, !arguments[0].hasPrefix("-"), !arguments[1].hasPrefix("-") else {
    printError("usage: BatchExtract [--overwrite] INPUT-FOLDER OUTPUT-FOLDER")
    exit(2)
}
let (inputFolder, outputFolder) = (arguments[0], arguments[1])

let movies: [String]
do {
    movies = try Directory.files(in: inputFolder, withExtensions: ["mp4", "mov", "m4v"])
} catch {
    printError("BatchExtract: \(error)")
    exit(2)
}
if mkdir(outputFolder, 0o755) != 0 && errno != EEXIST {
    printError("BatchExtract: cannot create \(outputFolder): \(String(cString: strerror(errno)))")
    exit(2)
}

// Ctrl-C: remove the temporary file of the extraction in progress, then stop. The library
// keeps its temporary paths where a signal handler may read them.
signal(SIGINT) { _ in
    TemporaryFiles.removeAll()
    _exit(130)
}

let showProgress = isatty(STDERR_FILENO) == 1
var failures: [String] = []
var extractedSeconds = 0.0

for name in movies {
    let output = outputFolder + "/" + Directory.stem(of: name) + ".m4a"
    let options = ExtractionOptions(overwrite: overwrite)
    let line = showProgress ? ProgressLine(name: name) : nil
    do {
        // The async form honours task cancellation and reports progress as the samples are
        // copied; it does blocking I/O, so the work runs in a task of its own.
        let result = try await Task.detached {
            try await AudioExtractor.extract(from: inputFolder + "/" + name, to: output, options: options) { progress in
                line?.update(progress)
            }
        }.value
        line?.clear()
        print("ok    \(name) -> \(output)  \(result.codec), \(result.sampleRate) Hz, \(result.channelCount) ch, "
              + "\(result.sampleCount) packets")
        extractedSeconds += result.duration
    } catch {
        // The extractor throws only RemuxError (typed throws), a stable code and a one-line
        // message; the detached task's `value` forgets the type, and bridging gives it back.
        let error = RemuxError(bridging: error)
        line?.clear()
        print("fail  \(name) [\(error.code)]: \(error.message)")
        failures.append(name)
    }
}

print("\(movies.count - failures.count) of \(movies.count) extracted (\(Int(extractedSeconds.rounded())) s of audio), "
      + "\(failures.count) failed")
exit(failures.isEmpty ? 0 : 1)
