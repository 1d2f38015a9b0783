#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ISOBMFF
import TestSupport
import XCTest

/// Tag edits that other runs, other programs and other names of the file cannot turn into
/// damage (issue 28): the edit's lock, the file kept as it is (mode, owner, links), removed
/// values gone from the bytes, damaged tag boxes refused rather than read as "no tags".
final class TagSafetyTests: XCTestCase {
    let directory = TemporaryDirectory()

    override func tearDown() {
        directory.remove()
    }

    func copy(_ name: String, as target: String? = nil) -> String {
        directory.write(target ?? name, readFile(fixture(name)))
    }

    func status(_ path: String) -> stat {
        var status = stat()
        XCTAssertEqual(stat(path, &status), 0, path)
        return status
    }

    /// A second run while one holds the file's lock exits 75 and writes nothing.
    func testAnEditWhileAnotherHoldsTheFileIsRefused() throws {
        let path = copy("meta-itunes.m4a")
        let before = readFile(path)
        let fd = open(path, O_RDONLY)
        XCTAssertGreaterThanOrEqual(fd, 0)
        XCTAssertEqual(flock(fd, LOCK_EX), 0)
        let run = try runCLI(["tag", "--set", "title=Second", path])
        XCTAssertEqual(run.status, 75, run.stderr)
        XCTAssertTrue(run.stderr.contains("being edited by another run"), run.stderr)
        XCTAssertEqual(readFile(path), before)
        XCTAssertEqual(names(), ["meta-itunes.m4a"], "no temporary file left")
        close(fd)
        XCTAssertEqual(try runCLI(["tag", "--set", "title=Second", path]).status, 0, "free once the lock is gone")
        // Listing takes no lock.
        XCTAssertEqual(flock(open(path, O_RDONLY), LOCK_EX), 0)
        XCTAssertEqual(try runCLI(["tag", path]).status, 0)
    }

    /// A hundred pairs of runs at once on one padded file: each run either edits or is refused
    /// with 75; the file always reads whole, with one of the titles.
    func testSimultaneousEditsNeverDamageTheFile() throws {
        let path = copy("meta-itunes.m4a")
        XCTAssertEqual(try runCLI(["tag", "--set", "title=Start", path]).status, 0)  // Leaves padding.
        for trial in 0..<100 {
            let group = DispatchGroup()
            let results = Locked([Int32]())
            for side in ["A", "B"] {
                group.enter()
                DispatchQueue.global().async {
                    let run = try? runCLI(["tag", "--set", "title=\(side)\(trial)", "--set", "comment=\(side)", path])
                    results.withLock { $0.append(run?.status ?? -1) }
                    group.leave()
                }
            }
            group.wait()
            let statuses = results.withLock { $0 }
            XCTAssertTrue(statuses.allSatisfy { $0 == 0 || $0 == 75 }, "\(statuses)")
            XCTAssertTrue(statuses.contains(0), "\(statuses)")
            let listed = try runCLI(["tag", "--json", path])
            XCTAssertEqual(listed.status, 0, listed.stderr)
            XCTAssertTrue(listed.stdout.contains("A\(trial)") || listed.stdout.contains("B\(trial)"), listed.stdout)
            XCTAssertNoThrow(try Movie(reading: MemoryByteSource(readFile(path))))
        }
    }

    /// A rewrite keeps the file's mode exactly, its owner and group (run as root), and the
    /// copy is never readable by more than the original while it is written.
    func testARewriteKeepsModeAndOwner() throws {
        let path = copy("meta-itunes.m4a")
        XCTAssertEqual(chmod(path, 0o640), 0)
        let root = geteuid() == 0
        if root { XCTAssertEqual(chown(path, 1234, 5678), 0) }
        let run = try runCLI(["tag", "--set", "title=Kept", path])
        XCTAssertEqual(run.status, 0, run.stderr)
        let after = status(path)
        XCTAssertEqual(after.st_mode & 0o7777, 0o640)
        if root {
            XCTAssertEqual(after.st_uid, 1234)
            XCTAssertEqual(after.st_gid, 5678)
        }
    }

    /// A rewrite keeps the file's extended attributes (a user attribute, as a Finder tag or
    /// a download's origin is kept). Python's os.setxattr sets and reads them (Glibc's Swift
    /// module has no xattr calls).
    func testARewriteKeepsExtendedAttributes() throws {
        let path = copy("meta-itunes.m4a")
        let set = try runTool("python3", ["-c", """
            import os, sys
            try:
                os.setxattr(sys.argv[1], 'user.extract-audio-test', b'kept across the rewrite')
            except OSError as error:
                print('unsupported', error)
            """, path])
        if set.stdout.hasPrefix("unsupported") {
            throw XCTSkip("this file system takes no user extended attributes: \(set.stdout)")
        }
        let run = try runCLI(["tag", "--json", "--set", "title=With attributes", path])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stdout.contains("rewrite"), run.stdout)
        let read = try runTool("python3", ["-c", """
            import os, sys
            print(os.getxattr(sys.argv[1], 'user.extract-audio-test').decode())
            """, path])
        XCTAssertEqual(read.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "kept across the rewrite",
                       read.stderr)
    }

    /// A file with two names is never split: with --no-link-rewrite a rewrite is refused
    /// (73) and both names keep the old bytes; without it the file is rewritten and copied
    /// back (both names show the new tags to mutagen, one inode); an edit that fits the
    /// padding is made in place, the names still one file.
    func testHardLinkedFilesAreEditedInPlaceOrLeftAlone() throws {
        let path = copy("meta-itunes.m4a")
        let other = directory.file("other-name.m4a")
        XCTAssertEqual(link(path, other), 0)
        let before = readFile(path)
        let refused = try runCLI(["tag", "--no-link-rewrite", "--set", "title=Split?", path])
        XCTAssertEqual(refused.status, 73, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("hard links"), refused.stderr)
        XCTAssertEqual(readFile(path), before)
        XCTAssertEqual(status(path).st_ino, status(other).st_ino)

        let copied = try runCLI(["tag", "--json", "--set", "title=Copied back", path])
        XCTAssertEqual(copied.status, 0, copied.stderr)
        XCTAssertTrue(copied.stdout.contains("copied_back"), copied.stdout)
        XCTAssertEqual(status(path).st_ino, status(other).st_ino)
        XCTAssertEqual(status(other).st_nlink, 2)
        XCTAssertEqual(directory.contents.filter { $0.hasPrefix(".") }, [], "a temporary left behind")
        let read = try runTool("python3", ["-c", "import mutagen.mp4, sys; "
                                           + "print(mutagen.mp4.MP4(sys.argv[1]).tags['\\u00a9nam'][0])", other])
        XCTAssertEqual(read.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "Copied back", read.stderr)

        // Padded by the rewrite: in place.
        let inPlace = try runCLI(["tag", "--json", "--set", "title=Both", path])
        XCTAssertEqual(inPlace.status, 0, inPlace.stderr)
        XCTAssertTrue(inPlace.stdout.contains("in_place"), inPlace.stdout)
        XCTAssertEqual(status(path).st_ino, status(other).st_ino)
        XCTAssertEqual(status(other).st_nlink, 2)
        XCTAssertTrue(try runCLI(["tag", other]).stdout.contains("Both"))
    }

    /// After an in-place removal the removed value's bytes are nowhere in the file.
    func testRemovedValuesAreGoneFromTheBytes() throws {
        let path = copy("meta-itunes.m4a")
        let marker = "QX7-removed-value-marker"
        XCTAssertEqual(try runCLI(["tag", "--set", "comment=\(marker)", path]).status, 0)  // Rewrite: padding.
        XCTAssertTrue(contains(readFile(path), marker))
        let removed = try runCLI(["tag", "--json", "--remove", "comment", path])
        XCTAssertEqual(removed.status, 0, removed.stderr)
        XCTAssertTrue(removed.stdout.contains("in_place"), removed.stdout)
        XCTAssertFalse(contains(readFile(path), marker), "the removed comment is still in the file")
        // And over a second in-place edit, the value set first is not left in the padding.
        XCTAssertEqual(try runCLI(["tag", "--set", "title=\(marker)-2", path]).status, 0)
        XCTAssertEqual(try runCLI(["tag", "--set", "title=Other", path]).status, 0)
        XCTAssertFalse(contains(readFile(path), "\(marker)-2"))
    }

    /// A `meta` or `ilst` whose size runs past its parent hides the items after it: the
    /// write is refused (65) and the file left as it was, the listing warns.
    func testDamagedTagBoxesAreRefusedNotReadAsEmpty() throws {
        for box in ["meta", "ilst"] {
            let path = copy("meta-itunes.m4a", as: "damaged-\(box).m4a")
            var bytes = readFile(path)
            let type = Array(box.utf8)
            guard let at = (4..<(bytes.count - 4)).first(where: { Array(bytes[$0..<($0 + 4)]) == type }) else {
                return XCTFail("no \(box) in the fixture")
            }
            let size = Int(bytes[at - 4]) << 24 | Int(bytes[at - 3]) << 16 | Int(bytes[at - 2]) << 8 | Int(bytes[at - 1])
            let wrong = size + 4096
            bytes[at - 4] = UInt8(wrong >> 24 & 0xFF)
            bytes[at - 3] = UInt8(wrong >> 16 & 0xFF)
            bytes[at - 2] = UInt8(wrong >> 8 & 0xFF)
            bytes[at - 1] = UInt8(wrong & 0xFF)
            _ = directory.write("damaged-\(box).m4a", bytes)
            let run = try runCLI(["tag", "--set", "title=Only this", path])
            XCTAssertEqual(run.status, 65, "\(box): \(run.stderr)")
            XCTAssertTrue(run.stderr.contains("damaged"), run.stderr)
            XCTAssertEqual(readFile(path), bytes, "\(box): the file changed")
            let listed = try runCLI(["tag", path])
            XCTAssertTrue(listed.stderr.contains("damaged"), "\(box): \(listed.stdout) \(listed.stderr)")
        }
    }

    /// A cover must be a whole image: bytes that only start like a JPEG, a PNG cut short or
    /// with a chunk's CRC wrong are refused (69) before the file is touched.
    func testCoversMustBeWholeImages() throws {
        let path = copy("meta-itunes.m4a")
        let before = readFile(path)
        let jpeg = readFile(fixture("images/cover.jpg"))
        let png = readFile(fixture("images/cover.png"))
        var badCRC = png
        badCRC[40] ^= 0x01  // Inside IHDR's or the next chunk's data.
        let cases: [(String, [UInt8], String)] = [
            ("fake.jpg", [0xFF, 0xD8, 0xFF, 0xE0] + [UInt8](repeating: 7, count: 300), "JPEG"),
            ("cut.jpg", Array(jpeg.prefix(jpeg.count / 2)), "JPEG"),
            ("cut.png", Array(png.prefix(png.count - 20)), "PNG"),
            ("crc.png", badCRC, "PNG"),
        ]
        for (name, bytes, format) in cases {
            let image = directory.write(name, bytes)
            let run = try runCLI(["tag", "--cover", image, path])
            XCTAssertEqual(run.status, 69, "\(name): \(run.stderr)")
            XCTAssertTrue(run.stderr.contains("not a whole \(format) image"), run.stderr)
            XCTAssertEqual(readFile(path), before, name)
        }
        XCTAssertNil(TagImage(format: .jpeg, bytes: jpeg).structuralProblem)
        XCTAssertNil(TagImage(format: .png, bytes: png).structuralProblem)
        // Streamed covers are checked in pieces of any size: the verdict is the same.
        for (name, bytes, format) in cases + [("cover.jpg", jpeg, "JPEG"), ("cover.png", png, "PNG")] {
            let whole = TagImage(format: format == "JPEG" ? .jpeg : .png, bytes: bytes).structuralProblem
            for size in [1, 2, 3, 7, 64, 4096] {
                var check = ImageCheck(format == "JPEG" ? .jpeg : .png)
                var at = 0
                while at < bytes.count {
                    check.consume(bytes[at..<min(at + size, bytes.count)])
                    at += size
                }
                XCTAssertEqual(check.finish(), whole, "\(name) in pieces of \(size)")
            }
        }
        let good = try runCLI(["tag", "--cover", fixture("images/cover.jpg"), "--cover", fixture("images/cover.png"), path])
        XCTAssertEqual(good.status, 0, good.stderr)
    }

    /// A temporary file left by a killed edit (its process gone) is removed by the next edit
    /// of that file, which says so; one whose process is alive is left alone.
    func testAStaleTemporaryFileIsRemovedByTheNextEdit() throws {
        let path = copy("meta-itunes.m4a")
        let gone = Process()
        gone.executableURL = URL(fileURLWithPath: "/bin/true")
        try gone.run()
        gone.waitUntilExit()
        let stale = directory.write(".meta-itunes.m4a.extract-audio-\(gone.processIdentifier)-k1lled.tmp", [1, 2, 3])
        let live = directory.write(".meta-itunes.m4a.extract-audio-\(getpid())-w0rking.tmp", [4, 5, 6])
        let other = directory.write(".other.m4a.extract-audio-\(gone.processIdentifier)-k1lled.tmp", [7])
        let run = try runCLI(["tag", "--set", "title=After a kill", path])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stderr.contains("removed \(stale), a temporary file left by an interrupted edit"), run.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: stale))
        XCTAssertTrue(FileManager.default.fileExists(atPath: live), "its writer is running")
        XCTAssertTrue(FileManager.default.fileExists(atPath: other), "another file's")
    }

    /// 100 edits alternating a long and a short value: the file never grows past its size
    /// after the first edit by more than that edit's padding, since the padding is reused.
    func testRepeatedEditsDoNotGrowTheFile() throws {
        let path = copy("meta-itunes.m4a")
        let long = String(repeating: "long comment ", count: 200)
        XCTAssertEqual(try runCLI(["tag", "--set", "comment=\(long)", path]).status, 0)
        let first = readFile(path).count
        var largest = first
        for k in 0..<100 {
            let run = try runCLI(["tag", "--set", k % 2 == 0 ? "comment=short \(k)" : "comment=\(long)\(k)", path])
            XCTAssertEqual(run.status, 0, run.stderr)
            largest = max(largest, readFile(path).count)
        }
        XCTAssertLessThanOrEqual(largest, first + 4096 + long.utf8.count + 64, "grew from \(first) to \(largest)")
        XCTAssertNoThrow(try Movie(reading: MemoryByteSource(readFile(path))))
    }

    func contains(_ bytes: [UInt8], _ text: String) -> Bool {
        let needle = Array(text.utf8)
        guard bytes.count >= needle.count else { return false }
        return (0...(bytes.count - needle.count)).contains { bytes[$0] == needle[0] && Array(bytes[$0..<($0 + needle.count)]) == needle }
    }

    func names() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
    }
}

/// A value shared by a test's threads (this target's tests use it).
final class Locked<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()
    init(_ value: Value) { self.value = value }
    func withLock<T>(_ body: (inout Value) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}
