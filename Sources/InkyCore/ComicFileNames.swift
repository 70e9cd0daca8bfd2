import Foundation

/// Which names in a library are comics, decided by name alone: the daemon walks the library
/// with this and never opens an archive (parsers live in the worker executable).
public enum ComicFileNames {
    /// Library files worth opening as comics: a comic or archive extension, whatever the
    /// content turns out to be (so a broken `.cbr` is reported, not silently passed through).
    public static let extensions: Set<String> = [
        "cbz", "cbr", "cb7", "cbt", "cba", "zip", "rar", "7z", "tar", "tgz", "tbz", "tbz2", "txz", "tzst", "pdf",
    ]

    public static func looksLikeComic(_ name: String) -> Bool {
        extensions.contains(EntryPath.lowercasedExtension(of: name))
    }

    /// A folder holding only images (hidden names aside), at least one: read as a comic.
    public static func isImageFolder(_ path: String) -> Bool {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return false }
        var images = 0
        for name in names where !name.hasPrefix(".") {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path + "/" + name, isDirectory: &isDirectory),
                  !isDirectory.boolValue,
                  PageFilter.imageExtensions.contains(EntryPath.lowercasedExtension(of: name)) else { return false }
            images += 1
        }
        return images > 0
    }
}

extension ArchiveFormat {
    /// The format from a file's first and last bytes, read with `pread`; nil when it matches
    /// none or cannot be read. For naming what failed: it parses nothing.
    public static func sniff(path: String) -> ArchiveFormat? {
        let fd = Syscall.retrying { open(path, O_RDONLY | O_CLOEXEC) }
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        func bytes(at offset: Int64, count: Int) -> [UInt8] {
            var buffer = [UInt8](repeating: 0, count: count)
            let got = buffer.withUnsafeMutableBytes { bytes in Syscall.retrying { pread(fd, bytes.baseAddress, count, off_t(offset)) } }
            return got > 0 ? Array(buffer.prefix(got)) : []
        }
        return detect(size: Int64(info.st_size), read: bytes)
    }

    /// The format from a file's first bytes, else its last (a ZIP found by its end record); nil
    /// when neither matches. `read(offset, count)` gives the file's bytes there.
    public static func detect<Failure: Error>(size: Int64, read: (Int64, Int) throws(Failure) -> [UInt8]) throws(Failure) -> ArchiveFormat? {
        if let format = sniff(try read(0, sniffLength)) { return format }
        let tailStart = max(0, size - Int64(tailLength))
        return sniffTail(try read(tailStart, Int(size - tailStart)))
    }
}
