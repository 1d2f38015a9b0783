// The structure-aware mutator (libFuzzer's LLVMFuzzerCustomMutator and
// LLVMFuzzerCustomCrossOver): parses the input as a box tree, changes sizes, counts, nesting
// and table entries, and writes it back with consistent parent sizes. Deterministic from
// libFuzzer's seed. See Fuzz/README.md for the list of mutations.

@_silgen_name("LLVMFuzzerMutate")
func LLVMFuzzerMutate(_ data: UnsafeMutablePointer<UInt8>, _ size: Int, _ maxSize: Int) -> Int

/// SplitMix64: small, fast and deterministic from libFuzzer's seed.
struct Random {
    var state: UInt64
    init(seed: UInt32) { state = UInt64(seed) &* 0x9E37_79B9_7F4A_7C15 &+ 0x1234_5678 }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// 0..<bound (bound > 0).
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(max(bound, 1))) }
    mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
    mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }
}

/// Values that break arithmetic: edges of the unsigned and signed ranges, and the ones the
/// issue names (0xFFFFFC00, 2^31).
let boundary32: [UInt32] = [0, 1, 2, 0x7F, 0xFF, 0x400, 0xFFFF, 0x1_0000, 0x7FFF_FFFF, 0x8000_0000,
                            0xFFFF_FC00, 0xFFFF_FFFE, 0xFFFF_FFFF]
let boundary64: [UInt64] = [0, 1, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF, 0x1_0000_0000,
                            300_000_000_000_000_000, 0x7FFF_FFFF_FFFF_FFFF, 0x8000_0000_0000_0000,
                            0xFFFF_FFFF_FFFF_FFFF, UInt64(bitPattern: -2), UInt64(bitPattern: -1024)]

extension Random {
    mutating func value32() -> UInt32 {
        chance(75) ? pick(boundary32) : UInt32(truncatingIfNeeded: next()) >> UInt32(below(32))
    }
    mutating func value64() -> UInt64 {
        chance(75) ? pick(boundary64) : next() >> UInt64(below(64))
    }
}

/// The layout of the tables the mutator knows: where the entry count is (offset into the
/// payload, after version and flags) and how many bytes one entry takes.
func tableLayout(_ node: Node) -> (countOffset: Int, entrySize: Int, fieldSize: Int)? {
    let version = node.prefix.first ?? 0
    switch node.typeName {
    case "stts", "ctts", "stss", "stco": return (4, node.typeName == "stss" || node.typeName == "stco" ? 4 : 8, 4)
    case "stsc": return (4, 12, 4)
    case "co64": return (4, 8, 8)
    case "stsz": return (8, 4, 4)
    case "elst": return (4, version == 1 ? 20 : 12, version == 1 ? 8 : 4)
    case "sbgp": return (version == 1 ? 8 : 4, 8, 4)
    case "trun": return (4, trunEntrySize(node), 4)
    case "dref", "stsd": return (4, 0, 4)
    default: return nil
    }
}

func trunEntrySize(_ node: Node) -> Int {
    guard node.prefix.count >= 4 else { return 0 }
    let flags = Int(node.prefix[1]) << 16 | Int(node.prefix[2]) << 8 | Int(node.prefix[3])
    return [0x100, 0x200, 0x400, 0x800].filter { flags & $0 != 0 }.count * 4
}

let fullBoxes: Set<String> = [
    "mvhd", "tkhd", "mdhd", "hdlr", "elst", "stts", "ctts", "stsc", "stsz", "stz2", "stco", "co64",
    "stss", "trun", "tfhd", "tfdt", "mfhd", "trex", "mehd", "sidx", "sgpd", "sbgp", "smhd", "dref",
    "stsd", "esds", "meta", "elng", "dac4", "dOps",
]

struct Mutator {
    var random: Random
    var tree: BoxTree
    let maxSize: Int

    /// Every node with its parent (the root excluded).
    var nodes: [(node: Node, parent: Node)] {
        var all: [(Node, Node)] = []
        tree.root.walk { node, parent, _ in if let parent { all.append((node, parent)) } }
        return all
    }
    var containers: [Node] { [tree.root] + nodes.map(\.node).filter(\.isContainer) }
    func named(_ names: Set<String>) -> [Node] { nodes.map(\.node).filter { names.contains($0.typeName) } }

    /// One structural mutation; false when none applied (the input has nothing it needs).
    mutating func mutate() -> Bool {
        switch random.below(22) {
        case 0, 1: return mutateSizeField()
        case 2: return duplicate()
        case 3: return delete()
        case 4: return move()
        case 5: return swapSiblings()
        case 6, 7: return nestChain()
        case 8: return insertTrackShape()
        case 9: return mutateVersionAndFlags()
        case 10, 11, 12: return mutateTable()
        case 13: return makeStz2()
        case 14: return makeEditList()
        case 15: return makeHugeDeltas()
        case 16: return makeFragments()
        case 17: return pointChapterAtAnotherTrack()
        case 18: return appendZeroSizeBox()
        case 19: return mutateHeaderFields()
        default: return false  // a byte mutation of one leaf's payload, done by the caller
        }
    }

    // MARK: Sizes and shape

    mutating func mutateSizeField() -> Bool {
        guard let (node, _) = nodes.randomElement(using: &random) else { return false }
        switch random.below(7) {
        case 0: node.sizeField = .toEnd
        case 1: node.sizeField = .large
        case 2: node.sizeField = .off(random.pick([-9, -8, -4, -1, 1, 2, 4, 8, 16, 4096]))
        case 3: node.sizeField = .fixed(random.pick([0xFFFF_FFFF, 0x8000_0000, 0x7FFF_FFFF, 1, 7, 9]))
        case 4: node.sizeField = .fixedLarge(random.pick([0, 7, 15, 16, 0x7FFF_FFFF_FFFF_FFFF,
                                                          0xFFFF_FFFF_FFFF_FFFF, 0x1_0000_0008]))
        default: node.sizeField = .exact
        }
        return true
    }

    mutating func duplicate() -> Bool {
        guard let (node, parent) = nodes.randomElement(using: &random),
              let index = parent.children?.firstIndex(where: { $0 === node }) else { return false }
        let copies = random.chance(80) ? 1 : random.below(64) + 2
        for _ in 0..<copies { parent.children?.insert(node.copy(), at: index + 1) }
        return true
    }

    mutating func delete() -> Bool {
        guard let (node, parent) = nodes.randomElement(using: &random) else { return false }
        parent.children?.removeAll { $0 === node }
        return true
    }

    mutating func move() -> Bool {
        guard let (node, parent) = nodes.randomElement(using: &random) else { return false }
        // Not into itself or its own descendants.
        var inside: [ObjectIdentifier] = []
        node.walk { descendant, _, _ in inside.append(ObjectIdentifier(descendant)) }
        let targets = containers.filter { !inside.contains(ObjectIdentifier($0)) }
        guard let target = targets.randomElement(using: &random) else { return false }
        parent.children?.removeAll { $0 === node }
        let count = target.children?.count ?? 0
        target.children?.insert(node, at: random.below(count + 1))
        return true
    }

    mutating func swapSiblings() -> Bool {
        let parents = containers.filter { ($0.children?.count ?? 0) >= 2 }
        guard let parent = parents.randomElement(using: &random), let count = parent.children?.count else { return false }
        parent.children?.swapAt(random.below(count), random.below(count))
        return true
    }

    /// Wraps a box (or a fresh leaf) in a chain of 2–60 containers, inside `udta`, `meta`,
    /// `ilst`, an audio sample entry or anywhere.
    mutating func nestChain() -> Bool {
        let preferred = named(["udta", "meta", "ilst", "mp4a", "wave", "enca", "alac", "trak", "moov"])
        let host = random.chance(85) ? preferred.randomElement(using: &random) : containers.randomElement(using: &random)
        guard let host else { return false }
        let depth = random.pick([2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 16, 24, 30, 60])
        let names = random.pick([["udta"], ["meta"], ["ilst"], ["wave"], ["trak"], ["moov"], ["edts"],
                                 ["udta", "meta"], ["free"], ["abcd"], ["mdia", "minf", "stbl"]])
        var inner = Node(random.pick(["free", "data", "name", "©nam"]), [0, 0, 0, 1, 0x41, 0x42])
        if random.chance(30), let existing = nodes.randomElement(using: &random)?.node { inner = existing.copy() }
        for level in 0..<depth {
            let name = names[level % names.count]
            inner = Node(name, name == "meta" ? [0, 0, 0, 0] : [], children: [inner])
        }
        host.children?.append(inner)
        return true
    }

    /// A box of track shape (`trak`, `moov`, `mdat`, a whole `mdia`) copied inside
    /// `udta`/`meta` (created under `moov` or a `trak` when there is none).
    mutating func insertTrackShape() -> Bool {
        let shapes = named(["trak", "moov", "mdat", "mdia", "stbl", "moof"])
        guard let shape = shapes.randomElement(using: &random) else { return false }
        var hosts = named(["udta", "meta"])
        if hosts.isEmpty || random.chance(30) {
            guard let owner = named(["moov", "trak"]).randomElement(using: &random) else { return false }
            let udta = Node("udta", children: [])
            owner.children?.append(udta)
            hosts = [udta]
        }
        guard let host = hosts.randomElement(using: &random) else { return false }
        let copy = shape.copy()
        if copy.typeName == "mdat", copy.prefix.count > 4096 { copy.prefix = Array(copy.prefix.prefix(4096)) }
        host.children?.append(copy)
        return true
    }

    mutating func mutateVersionAndFlags() -> Bool {
        let full = nodes.map(\.node).filter { fullBoxes.contains($0.typeName) && $0.prefix.count >= 4 }
        guard let node = full.randomElement(using: &random) else { return false }
        if random.chance(50) {
            node.prefix[0] = random.pick([0, 1, 2, 3, 0xFF])
        } else {
            let flags = random.pick([0, 1, 2, 4, 5, 0x100, 0x200, 0x300, 0x400, 0x800, 0xF05, 0xFFFFFF,
                                     0x01_0000, 0x02_0000, Int(random.next() & 0xFFFFFF)])
            node.prefix[1] = UInt8(flags >> 16 & 0xFF)
            node.prefix[2] = UInt8(flags >> 8 & 0xFF)
            node.prefix[3] = UInt8(flags & 0xFF)
        }
        return true
    }

    // MARK: Tables

    mutating func mutateTable() -> Bool {
        let tables = nodes.map(\.node).filter { $0.children == nil && tableLayout($0) != nil }
        guard let node = tables.randomElement(using: &random), let layout = tableLayout(node),
              node.prefix.count >= layout.countOffset + 4 else { return false }
        let entriesStart = layout.countOffset + 4 + (node.typeName == "trun" ? trunPrefixSize(node) : 0)
        switch random.below(5) {
        case 0:
            // The count, to a boundary value (the entries stay as they are).
            write32(&node.prefix, layout.countOffset, random.value32())
        case 1, 2:
            // One field of one entry.
            guard layout.entrySize > 0, node.prefix.count >= entriesStart + layout.entrySize else { return false }
            let entries = (node.prefix.count - entriesStart) / layout.entrySize
            let entry = entriesStart + random.below(entries) * layout.entrySize
            let field = random.below(max(layout.entrySize / 4, 1)) * 4
            if layout.fieldSize == 8, field + 8 <= layout.entrySize, random.chance(60) {
                write64(&node.prefix, entry + (field / 8) * 8, random.value64())
            } else {
                write32(&node.prefix, entry + field, random.value32())
            }
        case 3:
            // Grow the table with copies of boundary entries, count kept consistent.
            guard layout.entrySize > 0 else { return false }
            let extra = random.pick([1, 2, 16, 1000, 20000])
            guard node.prefix.count + extra * layout.entrySize < maxSize / 2 else { return false }
            var entry: [UInt8] = []
            for _ in 0..<(layout.entrySize / 4) { entry += bigEndian32(random.value32()) }
            for _ in 0..<extra { node.prefix += entry }
            let count = readUInt32(node.prefix[...], layout.countOffset)
            write32(&node.prefix, layout.countOffset, count &+ UInt32(extra))
        default:
            // Truncate the entries, count unchanged (claims more than is there) or fixed.
            guard node.prefix.count > entriesStart else { return false }
            node.prefix.removeLast(random.below(node.prefix.count - entriesStart) + 1)
            if random.chance(50) {
                let left = layout.entrySize > 0 ? (node.prefix.count - entriesStart) / layout.entrySize : 0
                write32(&node.prefix, layout.countOffset, UInt32(left))
            }
        }
        return true
    }

    func trunPrefixSize(_ node: Node) -> Int {
        let flags = node.prefix.count >= 4 ? Int(node.prefix[3]) : 0
        return (flags & 1 != 0 ? 4 : 0) + (flags & 4 != 0 ? 4 : 0)
    }

    /// An audio (or any) track's `stbl`, preferring audio.
    mutating func someSampleTable() -> Node? {
        let audio = named(["trak"]).filter { trak in
            trak.find("hdlr").contains { $0.prefix.count >= 12 && Array($0.prefix[8..<12]) == Array("soun".utf8) }
        }
        let trak = random.chance(80) ? audio.randomElement(using: &random) : named(["trak"]).randomElement(using: &random)
        return trak?.find("stbl").first
    }

    /// `stz2` with 4-, 8- or 16-bit fields and many (often zero-size) samples, with `stts`,
    /// `stsc` and `stco` made to agree or not. Up to ~2 samples per free byte of `maxSize`.
    mutating func makeStz2() -> Bool {
        guard let stbl = someSampleTable(), let size = Optional(tree.serialized().count), size < maxSize else { return false }
        let fieldSize: UInt8 = random.pick([4, 4, 4, 8, 16])
        let room = max(maxSize - size - 256, 16)
        let fitting = fieldSize == 4 ? room * 2 : fieldSize == 8 ? room : room / 2
        let count = random.chance(70) ? min(random.pick([200_000, 150_000, 131_073, 100_000, 65_537, 1000]), fitting)
            : random.below(fitting) + 1
        var payload: [UInt8] = [0, 0, 0, 0, 0, 0, 0, fieldSize] + bigEndian32(UInt32(count))
        let bytes = fieldSize == 4 ? (count + 1) / 2 : count * Int(fieldSize / 8)
        if random.chance(70) {
            payload += [UInt8](repeating: 0, count: bytes)
        } else {
            for _ in 0..<bytes { payload.append(random.chance(90) ? 0 : UInt8(truncatingIfNeeded: random.next())) }
        }
        if random.chance(20) { write32(&payload, 8, random.value32()) }  // count that disagrees
        stbl.children?.removeAll { $0.typeName == "stsz" || $0.typeName == "stz2" }
        stbl.children?.append(Node("stz2", payload))
        if random.chance(70) {
            let delta = random.chance(80) ? 1024 : random.value32()
            replace(in: stbl, "stts", [0, 0, 0, 0, 0, 0, 0, 1] + bigEndian32(UInt32(count)) + bigEndian32(delta))
            replace(in: stbl, "stsc", [0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1] + bigEndian32(UInt32(count)) + [0, 0, 0, 1])
            if let stco = stbl.first("stco"), stco.prefix.count >= 12 {
                stco.prefix = Array(stco.prefix.prefix(12))
                write32(&stco.prefix, 4, 1)
            }
        }
        return true
    }

    /// An `elst` (version 1 or 0) with one or a few entries of boundary durations and
    /// media times (negative ones too), in an audio track.
    mutating func makeEditList() -> Bool {
        guard let trak = someSampleTable().flatMap({ stbl in named(["trak"]).first { $0.find("stbl").contains { $0 === stbl } } })
        else { return false }
        let version: UInt8 = random.chance(70) ? 1 : 0
        let entries = random.pick([1, 1, 1, 2, 3])
        var payload: [UInt8] = [version, 0, 0, 0] + bigEndian32(UInt32(entries))
        for _ in 0..<entries {
            if version == 1 {
                payload += bigEndian64(random.chance(50) ? 300_000_000_000_000_000 : random.value64())
                payload += bigEndian64(random.chance(40) ? 0x7FFF_FFFF_FFFF_FFFF : random.value64())
            } else {
                payload += bigEndian32(random.value32()) + bigEndian32(random.value32())
            }
            payload += bigEndian32(random.chance(80) ? 0x0001_0000 : random.value32())
        }
        trak.children?.removeAll { $0.typeName == "edts" }
        let position = min(1, trak.children?.count ?? 0)
        trak.children?.insert(Node("edts", children: [Node("elst", payload)]), at: position)
        return true
    }

    /// `stts` deltas of 0xFFFFFFFF, 0xFFFFFC00, 2^31 (one entry or all), and `mdhd`/`mvhd`
    /// durations and timescales at the edges.
    mutating func makeHugeDeltas() -> Bool {
        let tables = named(["stts"]).filter { $0.prefix.count >= 16 }
        guard let stts = tables.randomElement(using: &random) else { return false }
        let entries = (stts.prefix.count - 8) / 8
        let delta = random.pick([0xFFFF_FFFF, 0xFFFF_FC00, 0x8000_0000, 0x7FFF_FFFF, 0] as [UInt32])
        if random.chance(50) {
            write32(&stts.prefix, 8 + random.below(entries) * 8 + 4, delta)
        } else {
            for entry in 0..<entries { write32(&stts.prefix, 8 + entry * 8 + 4, delta) }
        }
        return true
    }

    /// `mvex`/`trex` in `moov` and a `moof` (empty, or a `traf` whose `trun` claims a huge
    /// sample count with no per-sample fields) with an `mdat` after it.
    mutating func makeFragments() -> Bool {
        guard let moov = named(["moov"]).first, let root = tree.root.children else { return false }
        let trackID = named(["tkhd"]).first.flatMap { $0.prefix.count >= 16 ? readUInt32($0.prefix[...], $0.prefix[0] == 1 ? 20 : 12) : nil } ?? 1
        if moov.first("mvex") == nil || random.chance(20) {
            let trex = Node("trex", [0, 0, 0, 0] + bigEndian32(trackID) + bigEndian32(1)
                + bigEndian32(random.pick([0, 1, 1024])) + bigEndian32(random.pick([0, 1, 0xFFFF_FFFF])) + bigEndian32(0))
            moov.children?.append(Node("mvex", children: [trex]))
        }
        var moof = Node("moof", children: [])
        if random.chance(70) {
            let count = random.chance(60) ? random.pick([0xFFFF_FFFF, 0x8000_0000, 0x0100_0000, 1_000_000, 200_000] as [UInt32])
                : random.value32()
            let flags: UInt8 = random.pick([0, 1, 0, 5])
            var trun: [UInt8] = [0, 0, 0, flags] + bigEndian32(count)
            if flags & 1 != 0 { trun += bigEndian32(random.value32()) }
            if flags & 4 != 0 { trun += bigEndian32(0) }
            let tfhdFlags: UInt8 = random.pick([0x20, 0x38, 0x00, 0x02])
            var tfhd: [UInt8] = [0, 0x02, 0, tfhdFlags] + bigEndian32(trackID)
            if tfhdFlags & 0x08 != 0 { tfhd += bigEndian32(random.pick([0, 1, 0xFFFF_FFFF])) }
            if tfhdFlags & 0x10 != 0 { tfhd += bigEndian32(random.pick([0, 1])) }
            if tfhdFlags & 0x20 != 0 { tfhd += bigEndian32(0) }
            moof = Node("moof", children: [
                Node("mfhd", [0, 0, 0, 0, 0, 0, 0, 1]),
                Node("traf", children: [Node("tfhd", tfhd), Node("tfdt", [1, 0, 0, 0] + bigEndian64(random.value64())), Node("trun", trun)]),
            ])
        }
        tree.root.children = root + [moof, Node("mdat", [UInt8](repeating: 0, count: random.pick([0, 1, 16, 1024])))]
        return true
    }

    /// A `tref/chap` in an audio track naming another track (video, itself, a missing one).
    mutating func pointChapterAtAnotherTrack() -> Bool {
        let traks = named(["trak"])
        guard let audio = someSampleTable().flatMap({ stbl in traks.first { $0.find("stbl").contains { $0 === stbl } } })
        else { return false }
        let ids = traks.compactMap { trak in trak.first("tkhd").flatMap { $0.prefix.count >= 24 ? readUInt32($0.prefix[...], $0.prefix[0] == 1 ? 20 : 12) : nil } }
        var targets = ids.map { [$0] }
        targets += [[0], [0xFFFF_FFFF], ids + ids, [99]]
        let chap = Node("chap", random.pick(targets).flatMap(bigEndian32))
        audio.children?.removeAll { $0.typeName == "tref" }
        audio.children?.append(Node("tref", children: [chap]))
        return true
    }

    /// A size-0 box (`elng`, `free`, `udta`) as the last child of `mdia`, `trak`, `moov`,
    /// `udta` or an `mp4a` entry.
    mutating func appendZeroSizeBox() -> Bool {
        guard let host = named(["mdia", "trak", "moov", "udta", "mp4a", "minf", "stbl"]).randomElement(using: &random)
        else { return false }
        let box = Node(random.pick(["elng", "free", "udta", "skip"]), Array("en-US\0".utf8))
        box.sizeField = .toEnd
        host.children?.append(box)
        return true
    }

    /// A 32- or 64-bit field of `mvhd`/`mdhd`/`tkhd`/`tfhd`/`tfdt`/`trex`/`mehd`/`sidx`
    /// (timescales, durations, IDs) set to a boundary value.
    mutating func mutateHeaderFields() -> Bool {
        let headers = named(["mvhd", "mdhd", "tkhd", "tfhd", "tfdt", "trex", "mehd", "sidx", "esds", "mp4a"])
            .filter { $0.prefix.count >= 12 }
        guard let node = headers.randomElement(using: &random) else { return false }
        let offset = 4 + random.below((node.prefix.count - 8) / 4) * 4
        if random.chance(30), offset + 8 <= node.prefix.count {
            write64(&node.prefix, offset, random.value64())
        } else {
            write32(&node.prefix, offset, random.value32())
        }
        return true
    }

    func replace(in parent: Node, _ name: String, _ payload: [UInt8]) {
        if let existing = parent.first(name) {
            existing.prefix = payload
            existing.children = nil
        } else {
            parent.children?.append(Node(name, payload))
        }
    }
}

func write32(_ bytes: inout [UInt8], _ at: Int, _ value: UInt32) {
    guard at >= 0, at + 4 <= bytes.count else { return }
    bytes.replaceSubrange(at..<(at + 4), with: bigEndian32(value))
}

func write64(_ bytes: inout [UInt8], _ at: Int, _ value: UInt64) {
    guard at >= 0, at + 8 <= bytes.count else { return }
    bytes.replaceSubrange(at..<(at + 8), with: bigEndian64(value))
}

extension Array {
    func randomElement(using random: inout Random) -> Element? {
        isEmpty ? nil : self[random.below(count)]
    }
}

// MARK: libFuzzer entry points

@_cdecl("LLVMFuzzerCustomMutator")
public func customMutator(_ data: UnsafeMutablePointer<UInt8>, _ size: Int, _ maxSize: Int, _ seed: UInt32) -> Int {
    var random = Random(seed: seed)
    let input = [UInt8](UnsafeBufferPointer(start: data, count: size))
    let tree = BoxTree(parsing: input)
    // Plain byte mutation a quarter of the time, and whenever the input has no boxes.
    guard !(tree.root.children ?? []).isEmpty, random.chance(75) else { return LLVMFuzzerMutate(data, size, maxSize) }
    var mutator = Mutator(random: random, tree: tree, maxSize: maxSize)
    var applied = 0
    for _ in 0..<(mutator.random.chance(70) ? 1 : mutator.random.below(4) + 2) {
        if mutator.mutate() { applied += 1 } else if mutateOneLeaf(&mutator) { applied += 1 }
    }
    let output = mutator.tree.serialized()
    guard applied > 0, output.count <= maxSize, output != input else { return LLVMFuzzerMutate(data, size, maxSize) }
    output.withUnsafeBufferPointer { data.update(from: $0.baseAddress!, count: output.count) }
    return output.count
}

/// libFuzzer's byte mutation applied to one leaf's payload only, so that the boxes around
/// it keep their sizes.
func mutateOneLeaf(_ mutator: inout Mutator) -> Bool {
    let leaves = mutator.nodes.map(\.node).filter { !$0.isContainer && !$0.prefix.isEmpty && $0.prefix.count < 1 << 16 }
    guard let leaf = leaves.randomElement(using: &mutator.random) else { return false }
    var bytes = leaf.prefix + [UInt8](repeating: 0, count: 64)
    let count = bytes.withUnsafeMutableBufferPointer { LLVMFuzzerMutate($0.baseAddress!, leaf.prefix.count, $0.count) }
    leaf.prefix = Array(bytes.prefix(count))
    return true
}

/// Grafts a random subtree of the second input into a random container of the first.
@_cdecl("LLVMFuzzerCustomCrossOver")
public func customCrossOver(_ data1: UnsafePointer<UInt8>, _ size1: Int, _ data2: UnsafePointer<UInt8>, _ size2: Int,
                            _ out: UnsafeMutablePointer<UInt8>, _ maxOutSize: Int, _ seed: UInt32) -> Int {
    var random = Random(seed: seed)
    let first = BoxTree(parsing: [UInt8](UnsafeBufferPointer(start: data1, count: size1)))
    let second = BoxTree(parsing: [UInt8](UnsafeBufferPointer(start: data2, count: size2)))
    var donors: [Node] = []
    second.root.walk { node, parent, _ in if parent != nil { donors.append(node) } }
    var hosts: [Node] = []
    first.root.walk { node, _, _ in if node.isContainer { hosts.append(node) } }
    guard let donor = donors.randomElement(using: &random), let host = hosts.randomElement(using: &random) else { return 0 }
    let count = host.children?.count ?? 0
    host.children?.insert(donor.copy(), at: random.below(count + 1))
    let output = first.serialized()
    guard output.count <= maxOutSize else { return 0 }
    output.withUnsafeBufferPointer { out.update(from: $0.baseAddress!, count: output.count) }
    return output.count
}
