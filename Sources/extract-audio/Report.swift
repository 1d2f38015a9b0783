import AudioRemux

/// The `--json` object of a failure.
func errorJSON(input: String?, output: String?, code: String, status: ExitStatus, message: String,
               path: String? = nil, offset: UInt64? = nil, reason: String? = nil) -> String {
    var error: [(String, JSON)] = [("code", .string(code)), ("exit_status", .int(Int(status.rawValue))),
                                   ("message", .string(message))]
    if let reason { error.append(("reason", .string(reason))) }
    let memory: JSON = .optional(System.peakMemoryKiB())
    if let path { error.append(("box_path", .string(path))) }
    if let offset { error.append(("byte_offset", .int(Int(clamping: offset)))) }
    return JSON.object([("input", .optional(input)), ("output", .optional(output)), ("status", .string("error")),
                        ("error", .object(error)), ("peak_memory_kib", memory)]).compactText
}

/// The library's message with what only the command line knows: the file it is about when
/// the message does not name it (a batch is unreadable otherwise), and the option that
/// would help. The library itself never mentions command-line flags.
func cliMessage(_ error: RemuxError, about files: [String], salvaging: Bool) -> String {
    var message = error.message
    if let subject = files.first, !files.contains(where: { message.containsBytes(of: $0) }) {
        message = "\(subject): \(message)"
    }
    if error.code == .destinationExists {
        message += " (use --overwrite to replace it)"
    } else if error.salvageable != nil && !salvaging {
        message += " (use --salvage)"
    }
    return message
}

/// Prints a failure as one line on stderr (or a JSON object on `jsonTo`) and gives its status.
func report(_ error: Error, input: String?, output: String?, json: Bool, about files: [String] = [],
            salvaging: Bool = false, jsonTo descriptor: Int32 = 1) -> ExitStatus {
    guard let error = error as? RemuxError else {
        Terminal.error("\(input.map { "\($0): " } ?? "")\(error)")
        return .ioError
    }
    let status = ExitStatus(error.code)
    let message = cliMessage(error, about: files.isEmpty ? [input, output].compactMap { $0 } : files,
                             salvaging: salvaging)
    if json {
        Terminal.write(errorJSON(input: input, output: output, code: error.code.rawValue, status: status,
                                 message: message, path: error.boxPath, offset: error.byteOffset,
                                 reason: error.parseError?.code.rawValue) + "\n", to: descriptor)
    } else {
        Terminal.error(message)
    }
    return status
}
