/// The iTunes item list (`ilst`, QuickTime File Format "Metadata", as Apple's M4A files use
/// it inside `moov/udta/meta`), read and written: items in file order, each with its key
/// and typed value.
///
/// Items nobody changes are written back byte for byte (their original box is kept), so an
/// item this model does not understand survives any edit. Setting a key replaces its first
/// item where it stands and drops the others with that key; a new key goes at the end.
/// Bounded: at most ``Limits/maximumMetadataItems`` items and values per item.
public struct ItemList: Sendable, Equatable {
    /// One item.
    public struct Item: Sendable, Equatable {
        /// The item's code or freeform name.
        public var key: TagKey
        /// The typed value.
        public var value: TagValue
        /// The item box as read, header included; nil once changed. Written as it is.
        public var originalBytes: [UInt8]?
        /// An item whose box fits the `ilst` but whose inside could not be read (a `data`
        /// box that does not fit, a `----` without `mean` or `name`): its value is empty
        /// `.data`, and it is written back byte for byte (``originalBytes``) unless a change
        /// replaces or removes its key. Other readers may read more of it than this one.
        public var isDamaged = false

        /// A new item (written from its value).
        public init(key: TagKey, value: TagValue) {
            self.key = key
            self.value = value
            self.originalBytes = nil
        }
    }

    /// The items, in file order.
    public var items: [Item]
    /// One message per damaged item read (kept as it is, or where the list stopped).
    public var warnings: [String] = []
    /// Where the items stopped being readable (the file offset of an item whose size runs past
    /// the `ilst`, or of the first item past ``Limits/maximumMetadataItems``): the items after
    /// it cannot be told apart, so writing this list back would drop them. Nil when every
    /// item was read, or skipped alone.
    public var unreadableFrom: UInt64?

    /// An empty list.
    public init() {
        items = []
    }

    /// Reads the payload of an `ilst` box. A damaged item (a child box that does not fit,
    /// a `----` item without `mean` or `name`) is kept as it is (``Item/isDamaged``), with a
    /// warning.
    public init(parsing payload: ByteReader) {
        items = []
        var items: [Item] = []
        var warnings: [String] = []
        let stop = Self.readItems(payload) { header, list, read in
            var item: Item
            if let problem = read.problem {
                // Kept as it is: what this reader cannot read, another may (an edit must never
                // drop an item the file's other readers show).
                warnings.append("the ilst item \(header.type) is damaged (\(problem)): kept as it is")
                item = Item(key: .code(header.type), value: .data([]))
                item.isDamaged = true
            } else {
                let key = read.key(header.type)
                item = Item(key: key, value: TagValue(values: read.values, kind: key.kind))
            }
            // A size of 0 ("to the end of the ilst") is kept as the size it stands for,
            // so that an item added after this one is not inside it.
            item.originalBytes = list.bytesWithSize(of: header)
            items.append(item)
        }
        self.items = items
        self.warnings = warnings
        if let stop {
            self.warnings.append(stop.warning)
            unreadableFrom = stop.offset
        }
    }

    struct DamagedItem: Error, CustomStringConvertible {
        var description: String
    }

    /// An item's children as read: its `data` values (at most ``Limits/maximumMetadataItems``),
    /// a freeform item's `mean` and `name`, and the first problem met (a child that does not
    /// fit ends the item; a `data`, `mean` or `name` cut short is skipped).
    struct ReadItem {
        var values: [MetadataBox.Value] = []
        var mean: String?
        var name: String?
        var problem: (any Error)?

        /// The key of an item of box type `type`: its freeform name for `----`.
        func key(_ type: FourCC) -> TagKey {
            if type == "----", let mean, let name { return .freeform(mean: mean, name: name) }
            return .code(type)
        }
    }

    /// Reads the items of an `ilst` payload in order, at most ``Limits/maximumMetadataItems``,
    /// calling `visit` with each item's header, the list's reader (for the item's bytes) and
    /// its children (``readItem(_:)``). Returns where the items stopped being readable (an
    /// item whose size runs past the `ilst`, or the first past the limit) with a warning; nil
    /// when all were read. The one reader of `ilst` items, for tags and for `probe`.
    static func readItems(_ payload: ByteReader,
                          _ visit: (BoxHeader, ByteReader, ReadItem) -> Void) -> (offset: UInt64, warning: String)? {
        var list = payload
        var count = 0
        while list.remaining > 0 {
            guard count < Limits.maximumMetadataItems else {
                return (list.fileOffset, "\(payload.path): more than \(Limits.maximumMetadataItems) items; the rest is dropped")
            }
            do {
                guard let (header, body) = try list.readBox(depth: 1) else { break }
                visit(header, list, readItem(header.type, body))
                count += 1
            } catch {
                return (list.fileOffset, "skipped a damaged ilst item: \(error)")
            }
        }
        return nil
    }

    /// The children of an item of box type `type`; see ``ReadItem``.
    static func readItem(_ type: FourCC, _ payload: ByteReader) -> ReadItem {
        var item = ReadItem()
        var children = payload
        while true {
            let box: (header: BoxHeader, payload: ByteReader)?
            do { box = try children.readBox(depth: 2) } catch {
                item.problem = item.problem ?? error
                break
            }
            guard let (child, body) = box else { break }
            var reader = body
            do {
                switch child.type {
                case "data":
                    guard item.values.count < Limits.maximumMetadataItems else { continue }
                    let dataType = try reader.readUInt32()
                    let locale = try reader.readUInt32()
                    item.values.append(MetadataBox.Value(dataType: dataType, locale: locale,
                                                         bytes: reader.readRemainingBytes()))
                case "mean", "name":
                    try reader.skip(4)
                    let text = String(decoding: reader.readRemainingBytes(), as: UTF8.self)
                    if child.type == "mean" { item.mean = text } else { item.name = text }
                default:
                    break  // Kept through the item's bytes.
                }
            } catch {
                item.problem = item.problem ?? error
            }
        }
        if type == "----" && (item.mean == nil || item.name == nil) {
            item.problem = item.problem ?? DamagedItem(description: "a ---- item without mean or name")
        }
        return item
    }

    // MARK: Reading and changing

    /// The value of the first item with `key`; for `©gen` without one, a `gnre` number's
    /// genre as text (how mutagen and FFmpeg show it).
    public subscript(key: TagKey) -> TagValue? {
        if let item = items.first(where: { $0.key == key }) { return item.value }
        if key == .code("©gen"),
           case .genreNumber(let number)? = items.first(where: { $0.key == .code("gnre") })?.value,
           let name = TagValue.genreName(number) {
            return .text([name])
        }
        return nil
    }

    /// Sets `key` to `value`: its first item takes the new value where it stands, other
    /// items with that key go; a key not present is added at the end. Setting `©gen`
    /// removes `gnre` (one genre, as text).
    public mutating func set(_ value: TagValue, for key: TagKey) {
        if key == .code("©gen") { items.removeAll { $0.key == .code("gnre") } }
        var new = Item(key: key, value: value)
        new.originalBytes = nil
        if let index = items.firstIndex(where: { $0.key == key }) {
            items[index] = new
            var seen = false
            items.removeAll { item in
                guard item.key == key else { return false }
                defer { seen = true }
                return seen
            }
        } else {
            items.append(new)
        }
    }

    /// Removes every item with `key`; `©gen` takes `gnre` with it.
    public mutating func remove(_ key: TagKey) {
        items.removeAll { $0.key == key || (key == .code("©gen") && $0.key == .code("gnre")) }
    }

    // MARK: Writing

    /// The `ilst` box, header included.
    public var bytes: [UInt8] {
        var w = BoxWriter()
        write(to: &w)
        return w.bytes
    }

    /// Writes the `ilst` box: unchanged items byte for byte, the others from their values.
    public func write(to w: inout BoxWriter) {
        w.box("ilst") { ilst in
            for item in items {
                if let original = item.originalBytes {
                    ilst.write(bytes: original)
                } else {
                    Self.write(item, to: &ilst)
                }
            }
        }
    }

    static func write(_ item: Item, to w: inout BoxWriter) {
        let values = dataValues(item.value, kind: item.key.kind)
        switch item.key {
        case .code(let code):
            w.box(code) { box in writeData(values, to: &box) }
        case .freeform(let mean, let name):
            w.box("----") { box in
                box.fullBox("mean", version: 0, flags: 0) { $0.write(bytes: Array(mean.utf8)) }
                box.fullBox("name", version: 0, flags: 0) { $0.write(bytes: Array(name.utf8)) }
                writeData(values, to: &box)
            }
        }
    }

    static func writeData(_ values: [MetadataBox.Value], to w: inout BoxWriter) {
        for value in values {
            // The type indicator's top byte is the data box's version, 0; the rest its flags.
            w.fullBox("data", version: 0, flags: value.dataType & 0x00FF_FFFF) { data in
                data.write(value.locale)
                data.write(bytes: value.bytes)
            }
        }
    }

    /// The `data` boxes of a value, in the widths and types iTunes and mutagen write.
    static func dataValues(_ value: TagValue, kind: TagKey.Kind) -> [MetadataBox.Value] {
        func bigEndian(_ value: UInt64, _ width: Int) -> [UInt8] {
            (0..<width).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
        }
        switch value {
        case .text(let strings):
            return strings.map { MetadataBox.Value(dataType: 1, bytes: Array($0.utf8)) }
        case .integer(let number):
            var width = 8
            if case .integer(let bytes) = kind {
                width = bytes
            } else if let smallest = [1, 2, 4].first(where: { bytes in
                let limit = Int64(1) << (bytes * 8 - 1)
                return number >= -limit && number < limit
            }) {
                width = smallest
            }
            return [MetadataBox.Value(dataType: 21, bytes: bigEndian(UInt64(bitPattern: number), width))]
        case .flag(let on):
            return [MetadataBox.Value(dataType: 21, bytes: [on ? 1 : 0])]
        case .pair(let number, let total):
            var bytes: [UInt8] = [0, 0] + bigEndian(UInt64(number), 2) + bigEndian(UInt64(total), 2)
            if case .pair(6) = kind {} else { bytes += [0, 0] }
            return [MetadataBox.Value(dataType: 0, bytes: bytes)]
        case .genreNumber(let number):
            return [MetadataBox.Value(dataType: 0, bytes: bigEndian(UInt64(number), 2))]
        case .images(let images):
            return images.map { MetadataBox.Value(dataType: $0.format.dataType, bytes: $0.bytes) }
        case .data(let values):
            return values
        }
    }
}
