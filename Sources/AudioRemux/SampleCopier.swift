import ISOBMFF

/// Copies a track's samples from the input to the output in sample order, through one
/// reused buffer. Chunks that follow each other in the input are read as one range, so a
/// track stored contiguously is copied in a few large reads; other tracks' bytes (the
/// video) are never read.
struct SampleCopier {
    let bufferSize: Int

    func copy(_ table: SampleTable, from source: some ByteSource, to sink: inout some ByteSink) throws {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bufferSize, alignment: 4096)
        defer { buffer.deallocate() }
        var pending: Range<UInt64>?
        var failure: Error?
        table.forEachChunk { chunk in
            guard chunk.byteCount > 0 else { return true }
            let range = chunk.offset..<(chunk.offset + chunk.byteCount)  // Validated inside the file.
            if let current = pending, current.upperBound == range.lowerBound {
                pending = current.lowerBound..<range.upperBound
                return true
            }
            do {
                if let current = pending { try copyRange(current, from: source, to: &sink, through: buffer) }
            } catch {
                failure = error
                return false
            }
            pending = range
            return true
        }
        if let failure { throw failure }
        if let current = pending { try copyRange(current, from: source, to: &sink, through: buffer) }
    }

    private func copyRange(_ range: Range<UInt64>, from source: some ByteSource, to sink: inout some ByteSink,
                           through buffer: UnsafeMutableRawBufferPointer) throws {
        (source as? InputFile)?.willNeed(offset: range.lowerBound, length: range.upperBound - range.lowerBound)
        var offset = range.lowerBound
        while offset < range.upperBound {
            let count = Int(min(UInt64(buffer.count), range.upperBound - offset))
            let slice = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count])
            try source.read(into: slice, at: offset)
            try sink.write(UnsafeRawBufferPointer(slice))
            offset += UInt64(count)
        }
    }
}
