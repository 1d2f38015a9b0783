/// Random access to the bytes of a file or buffer: the only way the parser touches input.
///
/// The parser reads box headers and the boxes it needs (never `mdat` payloads), so a source
/// backed by a file is read in a few small `pread`s, however large the file.
public protocol ByteSource {
    /// The number of bytes in the source.
    var length: UInt64 { get }

    /// Fills `buffer` with the bytes starting at `offset`.
    ///
    /// Throws when fewer than `buffer.count` bytes can be read (a source that shrank, or an
    /// I/O error); callers check `offset + buffer.count <= length` first.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws

    /// What messages call the source: a file's path; `"input"` by default.
    var name: String { get }

    /// The open file behind the source, where it is one: a capability for sinks that can copy
    /// from it inside the kernel (``ByteSink/copy(from:at:count:)``). Nil by default.
    var fileDescriptor: Int32? { get }

    /// Says that `range` will be read soon, so that a file can read it ahead in one sweep.
    /// Advisory; does nothing by default.
    func willNeed(_ range: Range<UInt64>)
}

extension ByteSource {
    /// `"input"`: a source that is not a named file.
    public var name: String { "input" }
    /// Nil: the bytes are not one open file.
    public var fileDescriptor: Int32? { nil }
    /// Does nothing: a source that cannot read ahead.
    public func willNeed(_ range: Range<UInt64>) {}
}

extension ByteSource {
    /// Reads `count` bytes at `offset` into a new array.
    public func bytes(at offset: UInt64, count: Int) throws -> [UInt8] {
        guard count > 0 else { return [] }
        return try [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            try read(into: UnsafeMutableRawBufferPointer(buffer), at: offset)
            initialized = count
        }
    }
}

/// A source over bytes in memory, for tests and for callers that already hold a file.
public struct MemoryByteSource: ByteSource, Sendable {
    /// The bytes read; offset 0 is `data[0]`.
    public let data: [UInt8]

    /// A source over `data`.
    public init(_ data: [UInt8]) {
        self.data = data
    }

    public var length: UInt64 { UInt64(data.count) }

    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws {
        guard let start = Int(exactly: offset), start <= data.count, buffer.count <= data.count - start else {
            throw ISOBMFFError(.truncated, "read of \(buffer.count) bytes past the end of the data",
                               path: "", offset: offset)
        }
        data.withUnsafeBytes { bytes in
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[start..<(start + buffer.count)]))
        }
    }
}

/// Where output bytes go, in order: a file, or memory.
public protocol ByteSink {
    /// Appends `bytes`; throws when they cannot all be written.
    mutating func write(_ bytes: UnsafeRawBufferPointer) throws

    /// Appends up to `count` bytes of `source` at `offset` without passing them through
    /// memory, where the sink and the source (its ``ByteSource/fileDescriptor``) allow it:
    /// returns how many were copied (the sink then holds them), or nil where it cannot (the
    /// caller copies through memory instead). Nil by default.
    mutating func copy(from source: some ByteSource, at offset: UInt64, count: Int) throws -> Int?
}

extension ByteSink {
    /// Nil: the caller copies through memory.
    public mutating func copy(from source: some ByteSource, at offset: UInt64, count: Int) throws -> Int? { nil }
}

extension ByteSink {
    /// Appends the bytes of an array (box headers, a serialized `moov`).
    public mutating func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try write($0) }
    }
}

/// A sink that collects everything in memory, for tests and for apps that store the
/// result themselves.
public struct MemoryByteSink: ByteSink, Sendable {
    /// Everything written so far, in order.
    public private(set) var data: [UInt8] = []

    /// An empty sink.
    public init() {}

    public mutating func write(_ bytes: UnsafeRawBufferPointer) throws {
        data.append(contentsOf: bytes)
    }
}
