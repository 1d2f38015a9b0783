/// Reads big-endian bit fields, throwing when the bytes run out.
struct BitReader {
    struct Invalid: Error {}
    let bytes: [UInt8]
    var position = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    mutating func read(_ count: Int) throws -> Int {
        var value = 0
        for _ in 0..<count {
            let index = position >> 3
            guard index < bytes.count else { throw Invalid() }
            value = value << 1 | Int((bytes[index] >> (7 - UInt8(position & 7))) & 1)
            position += 1
        }
        return value
    }
}
