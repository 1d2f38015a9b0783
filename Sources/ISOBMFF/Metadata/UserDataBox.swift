/// A child of a box read as a list of boxes (`udta`, `meta`), kept as it was read: its
/// header and payload, and its bytes on demand (no copy is made until they are asked for).
public struct ChildBox: Sendable, Equatable {
    /// The child's header; its offset counts from the start of the bytes it was read from.
    public let header: BoxHeader
    /// A reader over the child's payload.
    public let payload: ByteReader

    /// The child's box type.
    public var type: FourCC { header.type }

    /// The child box, header included, byte for byte; a size of 0 ("to the end of its
    /// parent") is written as the size it stands for, so that a box written after it in a
    /// rebuilt parent is not inside it. O(n) in the box's size.
    public var bytes: [UInt8] { payload.bytesWithSize(of: header) }

    /// Two children are equal when their headers and bytes are.
    public static func == (lhs: ChildBox, rhs: ChildBox) -> Bool {
        lhs.header == rhs.header && lhs.bytes == rhs.bytes
    }
}

/// Where a list of child boxes stops being readable: a child whose size runs past its
/// parent (or nests too deep) hides whatever follows it.
public struct ChildBoxDamage: Sendable, Equatable {
    /// The offset of the damaged child, counted as the children's offsets are.
    public var offset: UInt64
    /// The parent whose list is damaged, as a path below `moov` (`udta`, `udta/meta`).
    public var parent: String
    /// Why the child could not be read, with its box path and offset.
    public var reason: String
}

extension ChildBox {
    /// Reads every child box of `list` (the payload of a container), at `depth`, in order;
    /// the children before a damaged one, and the damage (nil when all were read).
    static func children(of list: ByteReader, depth: Int) -> ([ChildBox], ChildBoxDamage?) {
        let parent = list.path.hasPrefix("moov/") ? String(list.path.dropFirst(5)) : list.path
        var reader = list
        var children: [ChildBox] = []
        while true {
            do {
                guard let (header, payload) = try reader.readBox(depth: depth) else { return (children, nil) }
                children.append(ChildBox(header: header, payload: payload))
            } catch {
                return (children, ChildBoxDamage(offset: reader.fileOffset, parent: parent, reason: "\(error)"))
            }
        }
    }
}

/// `moov/udta` (ISO/IEC 14496-12 § 8.10.1, a container of user-data boxes) read once: its
/// children in order, each kept as it was read, with typed views of the ones tools read —
/// the `meta` boxes of iTunes-style tags (``MetadataBox``, ``ItemList``) and Nero's `chpl`
/// (``NeroChapters``) — and where the list is damaged, if it is.
///
/// Every reader and editor of `udta` goes through this one walk, so that a damaged child is
/// seen the same way everywhere: what follows it cannot be told apart and is not read (an
/// editor that writes the list back must refuse, or say that it drops it).
public struct UserDataBox: Sendable {
    /// The children that could be read, in file order.
    public var children: [ChildBox]
    /// Where the children stop being readable; nil when all of them were read.
    public var damage: ChildBoxDamage?

    /// An empty `udta`.
    public init() {
        children = []
    }

    /// Reads a whole `udta` box (header included; offsets count from its first byte). Nil
    /// when the bytes do not hold one box.
    public init?(parsing userData: [UInt8]) {
        var reader = ByteReader(userData, path: "moov")
        guard let (_, payload) = try? reader.readBox(depth: 2) else { return nil }
        (children, damage) = ChildBox.children(of: payload, depth: 3)
    }

    /// The `meta` children (QuickTime File Format, "Metadata"), in order, those too short to
    /// be one left out.
    public var metadata: [MetadataBox] {
        children.compactMap { $0.type == "meta" ? MetadataBox(reading: $0.payload) : nil }
    }

    /// The first readable `meta`, its items left unread (``ItemList`` reads them itself).
    var firstMetadataChildren: MetadataBox? {
        children.lazy.compactMap { $0.type == "meta" ? MetadataBox(reading: $0.payload, items: false) : nil }.first
    }

    /// The first `chpl` that parses (Nero's chapters); nil without one.
    public var neroChapters: NeroChapters? {
        for child in children where child.type == "chpl" {
            if let parsed = try? NeroChapters(parsing: child.payload) { return parsed }
        }
        return nil
    }

    /// A `udta` box, header included, holding `children` (each a whole box) in order.
    public static func bytes(holding children: [[UInt8]]) -> [UInt8] {
        var w = BoxWriter()
        w.box("udta") { udta in
            for child in children { udta.write(bytes: child) }
        }
        return w.bytes
    }

    /// This `udta` rebuilt: each child as `transform` gives it (its ``ChildBox/bytes`` to
    /// keep it, other bytes to replace it, nil to drop it), then what `appending` gives once
    /// every child has been seen. A damaged tail (``damage``) is not written.
    public func bytes(_ transform: (ChildBox) -> [UInt8]?, appending: () -> [[UInt8]] = { [] }) -> [UInt8] {
        Self.bytes(holding: children.compactMap(transform) + appending())
    }
}
