/// The item list of a `moov/udta` box and the `udta` rebuilt around a changed one.
///
/// Tags live in `udta/meta/ilst` (QuickTime File Format, "Metadata"; `meta` with an `mdir`
/// handler, a full box in ISO files and a plain one in some QuickTime files). Everything
/// else in `udta` (`chpl`, `©xyz`, other `meta` boxes) and in that `meta` (`hdlr`, `free`)
/// is kept byte for byte, in order.
extension ItemList {
    /// The items of the `ilst` in the first `meta` of `userData` (a whole `udta` box, header
    /// included); an empty list when there is none.
    ///
    /// A child of `udta` or of that `meta` whose size does not fit its parent hides what
    /// follows it: the list then says where (``unreadableFrom``, with a warning), so that it
    /// is never written back as if the file had no more tags.
    public init(userData: [UInt8]) {
        self.init()
        guard let udta = UserDataBox(parsing: userData) else { return }
        // Every child of udta and of its first meta is read, as ``userData(replacingIn:)``
        // copies them all: damage anywhere there would be written back as the end. The first
        // readable `meta` is the one written back; damage in it hides the rest of udta.
        let meta = udta.firstMetadataChildren
        if let list = meta?.itemList { self = ItemList(parsing: list) }
        if let damage = meta?.damage ?? udta.damage {
            warnings.append("the \(damage.parent) is damaged at byte \(damage.offset) of its udta (\(damage.reason)): "
                            + "its tags cannot all be read")
            unreadableFrom = unreadableFrom ?? damage.offset
        }
    }

    /// `userData` (a whole `udta` box, or nil for none) with its first `meta/ilst` replaced
    /// by this list; a `meta` (full box, `mdir` handler as iTunes writes it) and an `ilst`
    /// are added where missing. Nil when there was no `udta` and the list is empty.
    public func userData(replacingIn userData: [UInt8]?) -> [UInt8]? {
        if userData == nil && items.isEmpty { return nil }
        let udta = userData.flatMap(UserDataBox.init(parsing:)) ?? UserDataBox()
        var replaced = false
        return udta.bytes({ child in
            guard child.type == "meta", !replaced, let meta = MetadataBox(reading: child.payload, items: false) else {
                return child.bytes
            }
            replaced = true
            return self.meta(replacingIn: meta)
        }, appending: {
            guard !replaced else { return [] }
            var w = BoxWriter()
            w.fullBox("meta", version: 0, flags: 0) { meta in
                var handler = HandlerBox(handlerType: "mdir", name: "")
                // iTunes' manufacturer field, `appl`: some readers look for it.
                handler.reserved = FourCC("appl").bytes + [UInt8](repeating: 0, count: 8)
                handler.name = [0]
                handler.write(to: &meta)
                write(to: &meta)
            }
            return [w.bytes]
        })
    }

    /// A `meta` box with its `ilst` replaced (added after the rest when it has none).
    private func meta(replacingIn meta: MetadataBox) -> [UInt8] {
        var w = BoxWriter()
        var replaced = false
        w.box("meta") { box in
            if meta.isFullBox { box.write(UInt32(0)) }
            for child in meta.children {
                if child.type == "ilst" {
                    if !replaced { write(to: &box) }
                    replaced = true
                } else {
                    box.write(bytes: child.bytes)
                }
            }
            if !replaced { write(to: &box) }
        }
        return w.bytes
    }
}

/// A key or value a user gave that cannot be written.
public struct TagError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong: stable, for programs and tests.
    public enum Code: String, Sendable {
        /// Neither a friendly key, nor four characters, nor `----:mean:name`.
        case unknownKey
        /// A value the key's type cannot hold (text for a number, a track above 65535).
        case invalidValue
        /// Image bytes that are neither JPEG nor PNG.
        case unsupportedImage
    }

    /// The kind of problem.
    public let code: Code
    /// One line for a person.
    public let message: String

    /// An error with its code and message.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}

extension TagKey {
    /// Reads a key as ``init(parsing:)`` does, throwing ``TagError/Code/unknownKey`` with the
    /// friendly names listed.
    public static func parse(_ text: String) throws(TagError) -> TagKey {
        guard let key = TagKey(parsing: text) else {
            throw TagError(.unknownKey, "unknown key \"\(text)\": use a four-character code (©nam), "
                           + "----:mean:name, or one of " + friendlyKeys.map(\.name).joined(separator: ", "))
        }
        return key
    }
}

extension TagValue {
    /// Reads `text` as a value for `key`: text as it is; a pair as `3` or `3/12` (each 0…65535);
    /// an integer in its code's width (`bpm` 0…65535, `media_kind` and `rating` 0…255); a
    /// flag as true/false, yes/no or 1/0; `gnre` as a genre number or an ID3v1 name.
    public init(parsing text: String, for key: TagKey) throws(TagError) {
        func bad(_ what: String) -> TagError {
            TagError(.invalidValue, "\(key.friendlyName ?? key.description): \"\(text)\" is not \(what)")
        }
        switch key.kind {
        case .text:
            self = .text([text])
        case .integer(let bytes):
            let limit = bytes >= 8 ? Int64.max : (Int64(1) << (8 * Int64(bytes) - 1)) - 1
            guard let number = Int64(text), number >= 0, number <= limit else {
                throw bad("a whole number from 0 to \(limit)")
            }
            self = .integer(number)
        case .flag:
            switch text.lowercased() {
            case "true", "yes", "1": self = .flag(true)
            case "false", "no", "0": self = .flag(false)
            default: throw bad("true or false")
            }
        case .pair:
            let parts = text.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count <= 2, let number = UInt16(parts[0]),
                  let total = parts.count == 2 ? UInt16(parts[1]) : 0 else {
                throw bad("a number or number/total, each from 0 to 65535")
            }
            self = .pair(number: number, total: total)
        case .genreNumber:
            if let number = UInt16(text), TagValue.genreName(number) != nil {
                self = .genreNumber(number)
            } else if let index = TagValue.id3Genres.firstIndex(where: { $0.lowercased() == text.lowercased() }) {
                self = .genreNumber(UInt16(index + 1))
            } else {
                throw bad("an ID3v1 genre (a name or 1 to 80)")
            }
        case .images:
            throw TagError(.invalidValue, "cover: images are given as files, not as a text value")
        }
    }
}

extension ByteReader {
    /// The bytes of a child box as ``bytes(of:)`` gives them, but for a size of 0 ("to the end
    /// of its parent"), written as the size it stands for: boxes added after it (a new `udta`,
    /// `meta` or `ilst`) would otherwise be inside it for every reader.
    func bytesWithSize(of header: BoxHeader) -> [UInt8] {
        var bytes = self.bytes(of: header)
        if header.extendsToEnd, let size = UInt32(exactly: header.size), bytes.count >= 4 {
            bytes.replaceSubrange(0..<4, with: [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: size >> $0) })
        }
        return bytes
    }
}
