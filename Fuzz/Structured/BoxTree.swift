// A tolerant ISO-BMFF box tree for the structure-aware mutator: parses whatever bytes it
// is given (a mutated file may be malformed), keeps what does not parse as opaque bytes,
// and writes the tree back with every parent's size recomputed from its children, so that
// a mutation deep in the tree does not fail the header check of every box above it.
// Independent of the library's parser on purpose: the fuzzer must not inherit its blind spots.

/// How a box's 32-bit size field is written.
enum SizeField: Equatable {
    /// The real size (8-byte header; 16 bytes with a largesize when it does not fit 32 bits).
    case exact
    /// `size = 1` and a 64-bit largesize holding the real size.
    case large
    /// `size = 0`: the box claims to extend to the end of its parent (or the file).
    case toEnd
    /// The real size plus `delta` (may be negative; clamped to 0...UInt32.max).
    case off(Int)
    /// A fixed value written as is (`UInt32.max`, 2^31, ...).
    case fixed(UInt32)
    /// `size = 1` with a fixed largesize (2^63 - 1, 2^64 - 1, ...).
    case fixedLarge(UInt64)
}

final class Node {
    /// The four-character type.
    var type: [UInt8]
    /// The bytes after the header and before the children: a full box's version and
    /// flags, `stsd`'s entry count, a sample entry's fixed fields. Whole payload of a leaf.
    var prefix: [UInt8]
    /// The child boxes; `nil` for a leaf.
    var children: [Node]?
    /// Bytes after the last child that did not parse as a box.
    var trailer: [UInt8] = []
    var sizeField: SizeField = .exact

    init(type: [UInt8], prefix: [UInt8], children: [Node]? = nil) {
        self.type = type
        self.prefix = prefix
        self.children = children
    }

    convenience init(_ type: String, _ payload: [UInt8] = [], children: [Node]? = nil) {
        self.init(type: Array(type.utf8), prefix: payload, children: children)
    }

    var typeName: String { String(decoding: type, as: UTF8.self) }
    var isContainer: Bool { children != nil }

    func copy() -> Node {
        let node = Node(type: type, prefix: prefix, children: children?.map { $0.copy() })
        node.trailer = trailer
        node.sizeField = sizeField
        return node
    }

    /// This node and every descendant, depth first, with each one's parent.
    func walk(parent: Node? = nil, depth: Int = 0, _ body: (Node, Node?, Int) -> Void) {
        body(self, parent, depth)
        for child in children ?? [] { child.walk(parent: self, depth: depth + 1, body) }
    }

    func first(_ name: String) -> Node? { children?.first { $0.typeName == name } }

    func find(_ name: String) -> [Node] {
        var found: [Node] = []
        walk { node, _, _ in if node.typeName == name { found.append(node) } }
        return found
    }
}

/// The root: top-level boxes, then whatever trailing bytes did not parse.
struct BoxTree {
    var root: Node

    init(parsing bytes: [UInt8]) {
        root = Node(type: [0, 0, 0, 0], prefix: [])
        let (children, trailer) = BoxTree.parseBoxes(bytes[...], depth: 0)
        root.children = children
        root.trailer = trailer
    }

    func serialized() -> [UInt8] {
        var out: [UInt8] = []
        for child in root.children ?? [] { BoxTree.write(child, into: &out) }
        out += root.trailer
        return out
    }

    // MARK: Parsing

    static let maximumDepth = 64

    static func parseBoxes(_ bytes: ArraySlice<UInt8>, depth: Int) -> ([Node], [UInt8]) {
        var nodes: [Node] = []
        var at = bytes.startIndex
        while bytes.endIndex - at >= 8 {
            let size32 = readUInt32(bytes, at)
            let type = Array(bytes[(at + 4)..<(at + 8)])
            var header = 8
            var size: Int
            switch size32 {
            case 0:
                size = bytes.endIndex - at
            case 1:
                guard bytes.endIndex - at >= 16 else { return (nodes, Array(bytes[at...])) }
                let large = readUInt64(bytes, at + 8)
                guard large <= UInt64(bytes.endIndex - at) else { return (nodes, Array(bytes[at...])) }
                size = Int(large)
                header = 16
            default:
                size = Int(size32)
            }
            guard size >= header, size <= bytes.endIndex - at else { return (nodes, Array(bytes[at...])) }
            let payload = bytes[(at + header)..<(at + size)]
            let node = parseBox(type: type, payload: payload, depth: depth)
            if size32 == 0 { node.sizeField = .toEnd }
            nodes.append(node)
            at += size
        }
        return (nodes, Array(bytes[at...]))
    }

    static func parseBox(type: [UInt8], payload: ArraySlice<UInt8>, depth: Int) -> Node {
        let name = String(decoding: type, as: UTF8.self)
        guard depth < maximumDepth, !leafTypes.contains(name), let skip = containerPrefix(name, payload) else {
            return Node(type: type, prefix: Array(payload))
        }
        let body = payload.dropFirst(skip)
        let (children, trailer) = parseBoxes(body, depth: depth + 1)
        // An unknown type is taken for a container only when its whole payload is boxes
        // with printable types.
        if !knownContainers.contains(name) && !sampleEntries.contains(name)
            && (!trailer.isEmpty || children.isEmpty || !children.allSatisfy(\.hasPrintableType)) {
            return Node(type: type, prefix: Array(payload))
        }
        let node = Node(type: type, prefix: Array(payload.prefix(skip)), children: children)
        node.trailer = trailer
        return node
    }

    static let knownContainers: Set<String> = [
        "moov", "trak", "mdia", "minf", "stbl", "udta", "edts", "dinf", "mvex", "moof", "traf",
        "mfra", "tref", "ilst", "meta", "stsd", "dref", "wave", "sinf", "schi", "clip", "matt",
        "gmhd", "rinf", "sv3d", "proj", "ipro",
    ]
    static let leafTypes: Set<String> = [
        "mdat", "free", "skip", "wide", "ftyp", "stts", "stsz", "stz2", "stsc", "stco", "co64", "ctts",
        "stss", "elst", "mvhd", "tkhd", "mdhd", "hdlr", "smhd", "vmhd", "esds", "data", "trun", "tfhd",
        "tfdt", "mfhd", "trex", "mehd", "sidx", "sgpd", "sbgp", "chpl", "chap", "elng", "dac3", "dec3",
        "dOps", "dfLa", "avcC", "hvcC", "btrt", "pasp", "colr", "uuid", "keys", "name", "mean",
    ]
    static let sampleEntries: Set<String> = [
        "mp4a", "enca", "alac", "ac-3", "ec-3", "Opus", "fLaC", ".mp3", "samr", "sawb", "twos",
        "sowt", "lpcm", "ipcm", "fpcm", "mha1", "mhm1", "ac-4", "dtsc", "dtsh", "dtsl", "dtse",
        "avc1", "avc3", "hvc1", "hev1", "mp4v", "encv", "av01", "vp09", "tx3g", "text", "wvtt",
    ]
    static let visualEntries: Set<String> = [
        "avc1", "avc3", "hvc1", "hev1", "mp4v", "encv", "av01", "vp09",
    ]

    /// The bytes before a container's children, or `nil` when `name` is not taken for one.
    static func containerPrefix(_ name: String, _ payload: ArraySlice<UInt8>) -> Int? {
        switch name {
        case "stsd", "dref": return 8
        case "meta":
            // ISO meta is a full box; QuickTime's is not (its first child follows at once).
            if payload.count >= 8, Array(payload.dropFirst(4).prefix(4)) == Array("hdlr".utf8) { return 0 }
            return 4
        case _ where visualEntries.contains(name): return 78
        case "tx3g": return 38
        case "text", "wvtt": return 8
        case _ where sampleEntries.contains(name):
            guard payload.count >= 28 else { return nil }
            let version = Int(payload[payload.startIndex + 8]) << 8 | Int(payload[payload.startIndex + 9])
            return version == 1 ? 44 : version == 2 ? 64 : 28
        case _ where knownContainers.contains(name): return 0
        default:
            // Anything else may be a container (a udta child, a nested chain).
            return payload.count >= 8 ? 0 : nil
        }
    }

    // MARK: Writing

    static func write(_ node: Node, into out: inout [UInt8]) {
        var body: [UInt8] = node.prefix
        for child in node.children ?? [] { write(child, into: &body) }
        body += node.trailer
        let real = UInt64(body.count) + 8
        switch node.sizeField {
        case .exact where real <= UInt64(UInt32.max):
            appendUInt32(&out, UInt32(real))
            out += node.type
        case .exact, .large:
            appendUInt32(&out, 1)
            out += node.type
            appendUInt64(&out, real + 8)
        case .toEnd:
            appendUInt32(&out, 0)
            out += node.type
        case .off(let delta):
            appendUInt32(&out, UInt32(clamping: max(0, Int64(real) + Int64(delta))))
            out += node.type
        case .fixed(let value):
            appendUInt32(&out, value)
            out += node.type
        case .fixedLarge(let value):
            appendUInt32(&out, 1)
            out += node.type
            appendUInt64(&out, value)
        }
        out += body
    }
}

extension Node {
    var hasPrintableType: Bool { type.allSatisfy { $0 >= 0x20 && $0 < 0x7F } || type.first == 0xA9 }
}

// MARK: Big-endian helpers

func readUInt32(_ bytes: ArraySlice<UInt8>, _ at: Int) -> UInt32 {
    bytes[at..<(at + 4)].reduce(0) { $0 << 8 | UInt32($1) }
}

func readUInt64(_ bytes: ArraySlice<UInt8>, _ at: Int) -> UInt64 {
    bytes[at..<(at + 8)].reduce(0) { $0 << 8 | UInt64($1) }
}

func appendUInt32(_ out: inout [UInt8], _ value: UInt32) {
    out += [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
}

func appendUInt64(_ out: inout [UInt8], _ value: UInt64) {
    appendUInt32(&out, UInt32(value >> 32))
    appendUInt32(&out, UInt32(value & 0xFFFF_FFFF))
}

func bigEndian32(_ value: UInt32) -> [UInt8] {
    var out: [UInt8] = []
    appendUInt32(&out, value)
    return out
}

func bigEndian64(_ value: UInt64) -> [UInt8] {
    var out: [UInt8] = []
    appendUInt64(&out, value)
    return out
}
