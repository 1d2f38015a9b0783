// Darwin review (issue 21). CI builds this file on Linux only; the calls below were checked
// line by line against Apple's manual pages (section in parentheses) for the Darwin branch:
//   - opendir/readdir/closedir: directory(3); opendir returns UnsafeMutablePointer<DIR>
//     on Darwin, OpaquePointer in glibc (only passed back to closedir and readdir).
//   - dirent.d_name: char[1024] on Darwin, char[256] in glibc; read up to its NUL through
//     withUnsafeBytes, whatever its size.
//   - stat, st_mode & S_IFMT == S_IFREG: stat(2). strerror: strerror(3).

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Listing a folder with the C library's `opendir`/`readdir`, so the app needs no Foundation.
enum Directory {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The names of the regular files in `path` whose extension is one of `extensions`
    /// (compared without case), sorted.
    static func files(in path: String, withExtensions extensions: Set<String>) throws -> [String] {
        guard let directory = opendir(path) else {
            throw Failure(description: "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard let dot = name.lastIndex(of: "."), dot != name.startIndex,
                  extensions.contains(name[name.index(after: dot)...].lowercased()),
                  isRegularFile(path + "/" + name) else { continue }
            names.append(name)
        }
        return names.sorted()
    }

    /// `name` without its extension: `clip` for `clip.mov`.
    static func stem(of name: String) -> String {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return name }
        return String(name[..<dot])
    }

    /// Whether `path` is a regular file, following symbolic links (`d_type` does not, and is
    /// not filled in by every file system).
    private static func isRegularFile(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFREG
    }
}
