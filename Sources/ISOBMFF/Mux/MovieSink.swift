/// One step of writing a movie, in file order: ``MovieWriter`` plans the file as a stream of
/// these and a ``MovieSink`` performs them.
public enum MuxOperation: Sendable, Equatable {
    /// Write these bytes: boxes the writer built, or sample bytes appended in memory.
    case write(ArraySlice<UInt8>)
    /// Copy `count` bytes at `offset` of the source numbered `source` (the index given
    /// when the samples were appended).
    case copy(source: Int, offset: UInt64, count: UInt64)

    /// The number of bytes the operation adds to the file.
    public var byteCount: UInt64 {
        switch self {
        case .write(let bytes): UInt64(bytes.count)
        case .copy(_, _, let count): count
        }
    }
}

/// Where a written movie goes: performs ``MuxOperation``s in order. AudioRemux's file sink
/// reads with `pread` and copies in the kernel where it can; ``MemoryMovieSink`` gathers
/// the file in memory, for tests and small files.
public protocol MovieSink {
    /// Performs one operation: appends its bytes to the output.
    mutating func perform(_ operation: MuxOperation) throws
}

/// A sink that builds the file in memory, copying from ``ByteSource``s.
public struct MemoryMovieSink: MovieSink {
    /// The sources that ``MuxOperation/copy(source:offset:count:)`` numbers refer to.
    public var sources: [any ByteSource]
    /// The file so far.
    public private(set) var bytes: [UInt8] = []

    /// A sink that copies from `sources`, numbered from 0.
    public init(sources: [any ByteSource] = []) {
        self.sources = sources
    }

    public mutating func perform(_ operation: MuxOperation) throws {
        switch operation {
        case .write(let data):
            bytes.append(contentsOf: data)
        case let .copy(source, offset, count):
            guard sources.indices.contains(source), let length = Int(exactly: count) else {
                throw ISOBMFFError(.invalidValue, "copy from source \(source) of \(count) bytes: no such source",
                                   path: "", offset: offset)
            }
            bytes.append(contentsOf: try sources[source].bytes(at: offset, count: length))
        }
    }
}
