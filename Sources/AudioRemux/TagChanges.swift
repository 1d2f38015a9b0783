import ISOBMFF

/// Tag changes to make, in this order: remove everything, remove keys, remove the covers,
/// set items (in order), set the covers. ``TagFile/edit(_:dryRun:_:)-(_,_,(ItemList)->Void)`` takes them through
/// ``apply(to:)``; extraction, remux and mux apply them to their output
/// (``ExtractionOptions/tags``, ``RemuxOptions/tags``, ``MuxOptions/tags``), after
/// `keepMetadata` has kept or dropped the input's tags.
public struct TagChanges: Sendable, Equatable {
    /// Remove every item first but `----:com.apple.iTunes:iTunSMPB`, the encoder delay and
    /// padding players need for gapless playback (not a tag the user sees; ``removals`` can
    /// still name it).
    public var removingAll = false
    /// The one item ``removingAll`` keeps.
    static let gaplessKey = TagKey.freeform(mean: "com.apple.iTunes", name: "iTunSMPB")
    /// Keys to remove.
    public var removals: [TagKey] = []
    /// Remove the cover images.
    public var removingCovers = false
    /// Items to set, in order: each replaces the items of its key.
    public var settings: [ItemList.Item] = []
    /// Cover images that replace any others, in order; none to leave the covers alone.
    public var covers: [TagImage] = []
    /// Chapters that replace the file's (both forms: the QuickTime chapter track and Nero's
    /// `chpl`, see ``TagFile/edit(_:applying:dryRun:rewritingLinkedFiles:)-3tyg1``); nil to leave them alone.
    public var chapters: [Chapter]?
    /// Remove the chapters (both forms).
    public var removingChapters = false

    /// No changes.
    public init() {}

    /// Sets `key` (a friendly key such as `title`, a four-character code such as `©nam`, or
    /// `----:MEAN:NAME`) to `value`, parsed for the key's type (`track` takes `3/12`,
    /// `compilation` takes `true`), after the settings before it.
    ///
    /// Throws `.invalidArgument` naming the key or value when either cannot be parsed:
    /// nothing is turned into a default.
    public mutating func set(_ key: String, to value: String) throws(RemuxError) {
        do throws(TagError) {
            let parsed = try TagKey.parse(key)
            settings.append(ItemList.Item(key: parsed, value: try TagValue(parsing: value, for: parsed)))
        } catch {
            throw RemuxError(.invalidArgument, error.message)
        }
    }

    /// Adds the JPEG or PNG image at `path` to the covers the edit writes (they replace the
    /// file's). The image is checked whole (JPEG markers to SOS and EOI, PNG chunks with
    /// their CRCs) through a fixed buffer, and stays in its file: ``TagFile`` copies it as it
    /// writes, so a cover costs no memory of its size.
    ///
    /// Throws `.unsupportedInput` for a file that is neither, or not whole, or larger than
    /// ``maximumCoverSize``; the errors of opening it otherwise.
    public mutating func addCover(contentsOf path: String) throws(RemuxError) {
        try bridged {
            covers.append(try Self.cover(at: path, streamed: true))
        }
    }

    /// Adds the cover image `bytes` (a JPEG or a PNG in memory, as an app holds one), checked
    /// as ``addCover(contentsOf:)`` checks a file.
    ///
    /// Throws `.unsupportedInput` for bytes that are neither (the message says what they
    /// start with), or not a whole image, or larger than ``maximumCoverSize``.
    public mutating func addCover(_ bytes: [UInt8]) throws(RemuxError) {
        let name = "the cover image"
        guard UInt64(bytes.count) <= Self.maximumCoverSize else {
            throw RemuxError(.unsupportedInput, "\(name) of \(bytes.count) bytes is too large (at most 64 MiB)")
        }
        guard let image = TagImage(bytes: bytes) else { throw Self.notAnImage(name, starting: bytes) }
        if let problem = image.structuralProblem { throw Self.notWhole(name, image.format, problem) }
        covers.append(image)
    }

    /// The error for a cover (`name`: its path, or how to call it) that is neither a JPEG nor
    /// a PNG: it says what the bytes start with.
    static func notAnImage(_ name: String, starting head: [UInt8]) -> RemuxError {
        let start = head.prefix(4).map { $0.hexDigits(uppercase: true) }.joined(separator: " ")
        return RemuxError(.unsupportedInput, "\(name) is neither a JPEG nor a PNG image (it starts with "
                          + "\(start.isEmpty ? "nothing: it is empty" : start)); covers must be one of those")
    }

    /// The error for a cover that starts like an image of `format` but is not a whole one.
    static func notWhole(_ name: String, _ format: TagImage.Format, _ problem: String) -> RemuxError {
        RemuxError(.unsupportedInput, "\(name) is not a whole \(format.rawValue) image (\(problem)); covers must be")
    }

    /// The largest cover accepted: 64 MiB. Not a limit of ours (a cover costs no memory of
    /// its size) but of the readers: mutagen, AtomicParsley and FFmpeg hold a whole `covr`
    /// item in memory, and iTunes-era readers cap artwork well below this; a larger image
    /// makes a file most players choke on.
    public static let maximumCoverSize: UInt64 = 64 << 20

    /// The checked cover at `path` (as ``addCover(contentsOf:)`` checks it): left in its file
    /// when `streamed` (only ``TagFile`` copies such an image as it writes), else read into
    /// memory (for extraction, remux and mux, whose writer takes bytes).
    public static func cover(at path: String, streamed: Bool) throws(RemuxError) -> TagImage {
        try bridged {
            let file = try InputFile(path: path)
            guard file.length <= maximumCoverSize else {
                throw RemuxError(.unsupportedInput, "\(path): a cover image of \(file.length) bytes is too large "
                                 + "(at most 64 MiB)")
            }
            let head = try file.bytes(at: 0, count: Int(min(file.length, 8)))
            guard let format = TagImage(bytes: head)?.format else { throw notAnImage(path, starting: head) }
            if let problem = try TagFile.imageProblem(in: file, format: format) {
                throw notWhole(path, format, problem)
            }
            return streamed
                ? TagImage(format: format, streamed: TagImage.Streamed(path: path, count: file.length))
                : TagImage(format: format, bytes: try file.bytes(at: 0, count: Int(file.length)))
        }
    }

    /// Whether there is nothing to change.
    public var isEmpty: Bool {
        !removingAll && removals.isEmpty && !removingCovers && settings.isEmpty && covers.isEmpty && chapters == nil
            && !removingChapters
    }

    /// Makes the changes to `tags`.
    public func apply(to tags: inout ItemList) {
        if removingAll { tags.items.removeAll { $0.key != Self.gaplessKey } }
        for key in removals { tags.remove(key) }
        if removingCovers { tags.remove(.code("covr")) }
        for item in settings { tags.set(item.value, for: item.key) }
        if !covers.isEmpty { tags.set(.images(covers), for: .code("covr")) }
    }

    /// `userData` (a whole `udta`, or nil) with the changes made; unchanged when there are none.
    /// Streamed covers (`TagImage.Streamed`) are read into memory here: only
    /// ``TagFile/edit(_:applying:dryRun:rewritingLinkedFiles:)-3tyg1`` copies them from their files as it writes.
    func userData(_ userData: [UInt8]?) throws -> [UInt8]? {
        guard !isEmpty else { return userData }
        var changes = self
        for (n, image) in covers.enumerated() {
            guard let streamed = image.streamed else { continue }
            let file = try InputFile(path: streamed.path)
            guard file.length == streamed.count, let count = Int(exactly: file.length) else {
                throw RemuxError(.ioError, "\(streamed.path) changed since it was checked")
            }
            changes.covers[n] = TagImage(format: image.format, bytes: try file.bytes(at: 0, count: count))
            if let problem = changes.covers[n].structuralProblem {
                throw RemuxError(.unsupportedInput, "\(streamed.path) is not a whole \(image.format.rawValue) image "
                                 + "(\(problem)); covers must be")
            }
        }
        var tags = ItemList(userData: userData ?? [])
        changes.apply(to: &tags)
        return tags.userData(replacingIn: userData)
    }
}
