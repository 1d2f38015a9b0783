import Foundation
import ISOBMFF
import TestSupport
import XCTest

/// The tag model against other readers and writers: what we write, mutagen, AtomicParsley
/// and ffprobe read as the same values; what they write, we read as the values they were
/// given. The oracles decide, not our parser.
final class TagOracleTests: XCTestCase {
    let directory = TemporaryDirectory()

    override func tearDown() {
        directory.remove()
    }

    /// An AAC file from FFmpeg, `moov` after `mdat` (FFmpeg's default), so that a new `moov`
    /// moves no sample.
    func makeAudio(_ name: String, metadata: [String] = []) throws -> String {
        let path = directory.file(name)
        let run = try runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "sine=d=0.5", "-c:a", "aac"]
                              + metadata + ["-y", path])
        XCTAssertEqual(run.status, 0, run.stderr)
        return path
    }

    /// The file's `moov/udta`, or nil.
    static func userData(_ bytes: [UInt8]) -> [UInt8]? {
        var file = ByteReader(bytes)
        while let (box, payload) = try? file.readBox(depth: 1) {
            guard box.type == "moov" else { continue }
            var children = payload
            while let (child, _) = try? children.readBox(depth: 2) {
                if child.type == "udta" { return children.bytes(of: child) }
            }
        }
        return nil
    }

    /// Writes `list` into the file, whose `moov` must be its last box (no offset moves).
    static func write(_ list: ItemList, into path: String) throws {
        let bytes = readFile(path)
        var file = ByteReader(bytes)
        var output: [UInt8] = []
        while let (box, payload) = try file.readBox(depth: 1) {
            guard box.type == "moov" else {
                output += file.bytes(of: box)
                continue
            }
            XCTAssertEqual(file.remaining, 0, "moov must be last")
            var w = BoxWriter()
            var children = payload
            var udta: [UInt8]?
            w.box("moov") { moov in
                while let (child, _) = try? children.readBox(depth: 2) {
                    if child.type == "udta" { udta = children.bytes(of: child) } else { moov.write(bytes: children.bytes(of: child)) }
                }
                if let new = list.userData(replacingIn: udta) { moov.write(bytes: new) }
            }
            output += w.bytes
        }
        try Data(output).write(to: URL(fileURLWithPath: path))
    }

    /// mutagen's view of the file's tags as JSON-ready values: text lists, numbers, pairs as
    /// lists, flags, covers as format and SHA-256, freeform values as their data format and text.
    static let mutagenDump = """
        import sys, json, hashlib
        from mutagen.mp4 import MP4, MP4Cover, MP4FreeForm
        tags = MP4(sys.argv[1]).tags or {}
        out = {}
        for key, value in tags.items():
            def conv(v):
                if isinstance(v, MP4Cover):
                    return {"format": "JPEG" if v.imageformat == MP4Cover.FORMAT_JPEG else "PNG",
                            "sha256": hashlib.sha256(bytes(v)).hexdigest()}
                if isinstance(v, MP4FreeForm):
                    return {"dataformat": v.dataformat, "text": bytes(v).decode("utf-8", "replace")}
                if isinstance(v, tuple):
                    return list(v)
                return v
            out[key] = [conv(v) for v in value] if isinstance(value, list) else conv(value)
        print(json.dumps(out, sort_keys=True))
        """

    static let mutagenWrite = """
        import sys
        from mutagen.mp4 import MP4, MP4Cover, MP4FreeForm
        f = MP4(sys.argv[1])
        f["\\xa9nam"] = ["Mutagen title"]
        f["\\xa9ART"] = ["Ärtist"]
        f["trkn"] = [(4, 9)]
        f["disk"] = [(2, 3)]
        f["tmpo"] = [99]
        f["cpil"] = True
        f["\\xa9gen"] = ["Ambient"]
        f["covr"] = [MP4Cover(open(sys.argv[2], "rb").read(), MP4Cover.FORMAT_PNG)]
        f["----:com.example:MOOD"] = [MP4FreeForm(b"calm")]
        f.save()
        """

    func mutagen(_ arguments: [String]) throws -> OracleRun {
        let run = try runTool("python3", arguments)
        XCTAssertEqual(run.status, 0, "mutagen (python3-mutagen, or pip install mutagen): \(run.stderr)")
        return run
    }

    func json(_ text: String) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] ?? [:]
    }

    // Whole images (a cover must be one): FFmpeg's 16×16 test pattern (Fixtures/README.md).
    static let jpeg = readFile(fixture("images/cover.jpg"))
    static let png = readFile(fixture("images/cover.png"))

    static func sha256Hex(_ bytes: [UInt8], in directory: TemporaryDirectory) throws -> String {
        let path = directory.write("hash-\(bytes.count)", bytes)
        return String(try runTool("sha256sum", [path]).stdout.prefix(64))
    }

    /// Each friendly key with a value and what mutagen, ffprobe and AtomicParsley show for it.
    static let friendlyValues: [(key: String, value: String, mutagen: String, ffprobe: (String, String)?)] = [
        ("title", "Tïtle ✓", "[\"Tïtle ✓\"]", ("title", "Tïtle ✓")),
        ("artist", "Artist", "[\"Artist\"]", ("artist", "Artist")),
        ("album", "Album", "[\"Album\"]", ("album", "Album")),
        ("album_artist", "Band", "[\"Band\"]", ("album_artist", "Band")),
        ("date", "2024-05-01", "[\"2024-05-01\"]", ("date", "2024-05-01")),
        ("genre", "Synthwave", "[\"Synthwave\"]", ("genre", "Synthwave")),
        ("track", "3/12", "[[3, 12]]", ("track", "3/12")),
        ("disc", "1/2", "[[1, 2]]", ("disc", "1/2")),
        ("comment", "A comment", "[\"A comment\"]", ("comment", "A comment")),
        ("composer", "Composer", "[\"Composer\"]", ("composer", "Composer")),
        ("lyrics", "la la", "[\"la la\"]", ("lyrics", "la la")),
        ("grouping", "Group", "[\"Group\"]", ("grouping", "Group")),
        ("bpm", "128", "[128]", nil),
        ("compilation", "true", "true", ("compilation", "1")),
        ("gapless", "true", "true", ("gapless_playback", "1")),
        ("podcast", "true", "true", ("podcast", "1")),
        ("sort_title", "Title, The", "[\"Title, The\"]", ("sort_name", "Title, The")),
        ("sort_artist", "Artist, The", "[\"Artist, The\"]", ("sort_artist", "Artist, The")),
        ("sort_album", "Album, The", "[\"Album, The\"]", ("sort_album", "Album, The")),
        ("sort_album_artist", "Band, The", "[\"Band, The\"]", ("sort_album_artist", "Band, The")),
        ("sort_composer", "Composer, The", "[\"Composer, The\"]", ("sort_composer", "Composer, The")),
        ("copyright", "© 2024", "[\"© 2024\"]", ("copyright", "© 2024")),
        ("encoder", "extract-audio", "[\"extract-audio\"]", ("encoder", "extract-audio")),
        ("description", "Short", "[\"Short\"]", ("description", "Short")),
        ("long_description", "Long text", "[\"Long text\"]", ("synopsis", "Long text")),
        ("media_kind", "1", "[1]", ("media_type", "1")),
        ("rating", "2", "[2]", ("rating", "2")),
        ("show", "Show", "[\"Show\"]", ("show", "Show")),
        ("season", "2", "[2]", ("season_number", "2")),
        ("episode", "5", "[5]", ("episode_sort", "5")),
        ("episode_id", "E05", "[\"E05\"]", ("episode_id", "E05")),
        ("network", "Net", "[\"Net\"]", ("network", "Net")),
    ]

    func testValuesWeWriteReadBackInMutagenFFprobeAndAtomicParsley() throws {
        let path = try makeAudio("ours.m4a")
        var list = ItemList()
        for entry in Self.friendlyValues {
            let key = try TagKey.parse(entry.key)
            list.set(try TagValue(parsing: entry.value, for: key), for: key)
        }
        list.set(.images([TagImage(format: .jpeg, bytes: Self.jpeg), TagImage(format: .png, bytes: Self.png)]),
                 for: .code("covr"))
        list.set(.text(["freeform ✓"]), for: .freeform(mean: "com.apple.iTunes", name: "MOOD"))
        try Self.write(list, into: path)

        let tags = try json(try mutagen(["-c", Self.mutagenDump, path]).stdout)
        for entry in Self.friendlyValues {
            let code = try TagKey.parse(entry.key).description
            let value = try JSONSerialization.jsonObject(with: Data(entry.mutagen.utf8), options: .fragmentsAllowed)
            let expected = try JSONSerialization.data(withJSONObject: ["v": value], options: .sortedKeys)
            let found = try JSONSerialization.data(withJSONObject: ["v": tags[code] ?? NSNull()], options: .sortedKeys)
            XCTAssertEqual(String(decoding: found, as: UTF8.self), String(decoding: expected, as: UTF8.self), entry.key)
        }
        let covers = tags["covr"] as? [[String: String]] ?? []
        XCTAssertEqual(covers.map { $0["format"] }, ["JPEG", "PNG"])
        XCTAssertEqual(covers.map { $0["sha256"] ?? "" },
                       [try Self.sha256Hex(Self.jpeg, in: directory), try Self.sha256Hex(Self.png, in: directory)])
        let mood = tags["----:com.apple.iTunes:MOOD"] as? [[String: Any]]
        XCTAssertEqual(mood?.first?["text"] as? String, "freeform ✓")
        XCTAssertEqual(mood?.first?["dataformat"] as? Int, 1)

        let probe = try runTool("ffprobe", ["-v", "error", "-show_format", "-of", "json", path])
        let format = (try json(probe.stdout)["format"] as? [String: Any])?["tags"] as? [String: String] ?? [:]
        for entry in Self.friendlyValues {
            guard let (key, value) = entry.ffprobe else { continue }
            XCTAssertEqual(format[key], value, "ffprobe \(key)")
        }
        XCTAssertEqual(format["MOOD"], "freeform ✓", "ffprobe shows a freeform item by its name")

        let parsley = try runTool("AtomicParsley", [path, "-t"]).stdout
        for entry in Self.friendlyValues {
            let code = try TagKey.parse(entry.key).description
            XCTAssertTrue(parsley.contains("Atom \"\(code)\" contains: "), "AtomicParsley -t lacks \(code)")
        }
        for line in ["Atom \"©nam\" contains: Tïtle ✓", "Atom \"trkn\" contains: 3 of 12", "Atom \"disk\" contains: 1 of 2",
                     "Atom \"tmpo\" contains: 128", "Atom \"cpil\" contains: true", "Atom \"©gen\" contains: Synthwave",
                     "Atom \"covr\" contains: 2 piece", "Atom \"aART\" contains: Band",
                     "Atom \"----\" [com.apple.iTunes;MOOD] contains: freeform ✓"] {
            XCTAssertTrue(parsley.contains(line), "AtomicParsley -t lacks \(line):\n\(parsley)")
        }
    }

    func testTagsWrittenByMutagenReadAsTheValuesGiven() throws {
        let path = try makeAudio("mutagen.m4a")
        let png = directory.write("cover.png", Self.png)
        _ = try mutagen(["-c", Self.mutagenWrite, path, png])
        let list = ItemList(userData: Self.userData(readFile(path)) ?? [])
        XCTAssertEqual(list.warnings, [])
        XCTAssertEqual(list[.code("©nam")], .text(["Mutagen title"]))
        XCTAssertEqual(list[.code("©ART")], .text(["Ärtist"]))
        XCTAssertEqual(list[.code("trkn")], .pair(number: 4, total: 9))
        XCTAssertEqual(list[.code("disk")], .pair(number: 2, total: 3))
        XCTAssertEqual(list[.code("tmpo")], .integer(99))
        XCTAssertEqual(list[.code("cpil")], .flag(true))
        XCTAssertEqual(list[.code("©gen")], .text(["Ambient"]))
        XCTAssertEqual(list[.code("covr")], .images([TagImage(format: .png, bytes: Self.png)]))
        XCTAssertEqual(list[.freeform(mean: "com.example", name: "MOOD")], .text(["calm"]))
    }

    func testTagsWrittenByAtomicParsleyReadAsTheValuesGiven() throws {
        let path = try makeAudio("parsley.m4a")
        let jpeg = directory.write("cover.jpg", Self.jpeg)
        let run = try runTool("AtomicParsley", [path, "--title", "AP title", "--artist", "AP artist",
                                                "--tracknum", "5/10", "--disk", "1/1", "--genre", "Jazz",
                                                "--bpm", "90", "--compilation", "true", "--artwork", jpeg,
                                                "--overWrite"])
        XCTAssertEqual(run.status, 0, run.stderr)
        let list = ItemList(userData: Self.userData(readFile(path)) ?? [])
        XCTAssertEqual(list[.code("©nam")], .text(["AP title"]))
        XCTAssertEqual(list[.code("©ART")], .text(["AP artist"]))
        XCTAssertEqual(list[.code("trkn")], .pair(number: 5, total: 10))
        XCTAssertEqual(list[.code("disk")], .pair(number: 1, total: 1))
        XCTAssertEqual(list[.code("©gen")], .text(["Jazz"]), "AtomicParsley writes a standard genre as gnre")
        XCTAssertEqual(list[.code("tmpo")], .integer(90))
        XCTAssertEqual(list[.code("cpil")], .flag(true))
        XCTAssertEqual(list[.code("covr")], .images([TagImage(format: .jpeg, bytes: Self.jpeg)]))
    }

    func testTagsWrittenByFFmpegReadAsTheValuesGiven() throws {
        let path = try makeAudio("ffmpeg.m4a", metadata: [
            "-metadata", "title=FF title", "-metadata", "artist=FF artist", "-metadata", "album=FF album",
            "-metadata", "track=7/8", "-metadata", "disc=2/2", "-metadata", "genre=Drone",
            "-metadata", "date=1999", "-metadata", "comment=Made by FFmpeg", "-metadata", "album_artist=FF band",
        ])
        let list = ItemList(userData: Self.userData(readFile(path)) ?? [])
        XCTAssertEqual(list[.code("©nam")], .text(["FF title"]))
        XCTAssertEqual(list[.code("©ART")], .text(["FF artist"]))
        XCTAssertEqual(list[.code("©alb")], .text(["FF album"]))
        XCTAssertEqual(list[.code("aART")], .text(["FF band"]))
        XCTAssertEqual(list[.code("trkn")], .pair(number: 7, total: 8))
        XCTAssertEqual(list[.code("disk")], .pair(number: 2, total: 2))
        XCTAssertEqual(list[.code("©gen")], .text(["Drone"]))
        XCTAssertEqual(list[.code("©day")], .text(["1999"]))
        XCTAssertEqual(list[.code("©cmt")], .text(["Made by FFmpeg"]))
        guard case .text(let encoder)? = list[.code("©too")] else { return XCTFail("no ©too") }
        XCTAssertTrue(encoder.first?.hasPrefix("Lavf") == true)
    }
}

/// MediaInfo, the fourth reader of the README's key table.
extension TagOracleTests {
    /// What MediaInfo (`--Output=JSON`, its General track, `extra` included) shows for each
    /// friendly key written with `friendlyValues`' value: its fields (several joined by `/`,
    /// their values likewise) and what it shows; nil where it shows nothing.
    static let mediaInfoFields: [String: (field: String, value: String)?] = [
        "title": ("Title", "Tïtle ✓"), "artist": ("Performer", "Artist"), "album": ("Album", "Album"),
        "album_artist": ("Album_Performer", "Band"), "date": ("Recorded_Date", "2024-05-01"),
        "genre": ("Genre", "Synthwave"), "track": ("Track_Position/Track_Position_Total", "3/12"),
        "disc": ("Part_Position/Part_Position_Total", "1/2"), "comment": ("Comment", "A comment"),
        "composer": ("Composer", "Composer"), "lyrics": ("Lyrics", "la la"), "grouping": ("Grouping", "Group"),
        "bpm": ("BPM", "128"), "compilation": ("Compilation", "Yes"), "gapless": nil,
        "podcast": ("Podcast", "Yes"), "sort_title": ("Title_Sort", "Title, The"),
        "sort_artist": ("Performer_Sort", "Artist, The"), "sort_album": ("Album_Sort", "Album, The"),
        "sort_album_artist": ("Album_Performer_Sort", "Band, The"),
        "sort_composer": ("Composer_Sort", "Composer, The"), "copyright": ("Copyright", "© 2024"),
        "encoder": ("Encoded_Application", "extract-audio"), "description": ("Description", "Short"),
        "long_description": ("LongDescription", "Long text"), "media_kind": ("ContentType", "Music"),
        "rating": ("Rating", "Clean"), "show": ("Collection", "Show"), "season": ("Season", "2"),
        "episode": ("Part", "5"), "episode_id": ("Part_ID", "E05"), "network": ("TVNetworkName", "Net"),
    ]

    /// The README's MediaInfo cell for a key: its fields, and the value when MediaInfo shows
    /// another than the one written (`Yes` for `true`, a name for a number); `no` for none.
    static func mediaInfoCell(_ shown: (field: String, value: String)?, written: String) -> String {
        guard let shown else { return "no" }
        let fields = shown.field.split(separator: "/").map { "`\($0)`" }.joined(separator: "/")
        return shown.value == written ? fields : "\(fields) (`\(shown.value)`)"
    }

    func testValuesWeWriteReadBackInMediaInfo() throws {
        let path = try makeAudio("mediainfo.m4a")
        var list = ItemList()
        for entry in Self.friendlyValues {
            let key = try TagKey.parse(entry.key)
            list.set(try TagValue(parsing: entry.value, for: key), for: key)
        }
        list.set(.images([TagImage(format: .jpeg, bytes: Self.jpeg)]), for: .code("covr"))
        list.set(.text(["freeform ✓"]), for: .freeform(mean: "com.apple.iTunes", name: "MOOD"))
        try Self.write(list, into: path)

        let run = try runTool("mediainfo", ["--Output=JSON", path])
        XCTAssertEqual(run.status, 0, run.stderr)
        let tracks = (try json(run.stdout)["media"] as? [String: Any])?["track"] as? [[String: Any]] ?? []
        var general: [String: String] = [:]
        for (name, value) in tracks.first(where: { $0["@type"] as? String == "General" }) ?? [:] {
            if let text = value as? String { general[name] = text }
            if name == "extra", let extra = value as? [String: String] { general.merge(extra) { a, _ in a } }
        }
        XCTAssertFalse(general.isEmpty, "MediaInfo printed no General track: \(run.stdout)")

        let readme = documentationText  // The key table is in docs/cli.md.
        var cells: [String: String] = [:]
        for line in readme.split(separator: "\n") where line.hasPrefix("| `") {
            let columns = line.split(separator: "|", omittingEmptySubsequences: false)
                .map { $0.trimmingCharacters(in: .whitespaces) }
            guard columns.count == 8 else { continue }  // | key | code | mutagen | AP | ffprobe | MediaInfo |
            cells[columns[1]] = columns[6]
        }
        for entry in Self.friendlyValues {
            guard let shown = Self.mediaInfoFields[entry.key] else {
                XCTFail("no MediaInfo entry for \(entry.key)")
                continue
            }
            if let (field, value) = shown {
                let got = field.split(separator: "/").map { general[String($0)] ?? "(none)" }.joined(separator: "/")
                XCTAssertEqual(got, value, "MediaInfo \(field) for \(entry.key)")
            } else {
                XCTAssertFalse(general.keys.contains { $0.lowercased().contains(entry.key) },
                               "MediaInfo shows \(entry.key) after all: \(general)")
            }
            XCTAssertEqual(cells["`\(entry.key)`"], Self.mediaInfoCell(shown, written: entry.value),
                           "the README's MediaInfo cell for \(entry.key)")
        }
        XCTAssertEqual(general["Cover"], "Yes")
        XCTAssertEqual(cells["`cover` (`--cover`)"], "`Cover` (`Yes`)")
        XCTAssertEqual(general["MOOD"], "freeform ✓", "MediaInfo shows a freeform item by its name")
        XCTAssertEqual(cells["`----:MEAN:NAME`"], "`NAME`")
    }
}
