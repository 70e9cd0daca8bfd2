import Foundation
import XCTest

/// A small tmpfs mounted for one test (we run as root): a disk that is full, or read-only, on
/// demand. Unmounted (lazily) and removed in deinit.
public final class Tmpfs {
    public let url: URL

    /// Skips the test, saying why, for a user other than root: only root mounts a tmpfs.
    public init(size: Int, readOnly: Bool = false) throws {
        try XCTSkipUnless(getuid() == 0, "needs root: the test mounts a tmpfs (a full or read-only disk)")
        url = ArchiveMaker.temporaryDirectory("tmpfs")
        try ArchiveMaker.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(size)" + (readOnly ? ",ro" : ""), "tmpfs", url.path])
    }

    deinit {
        _ = try? ArchiveMaker.run("/bin/umount", ["-l", url.path])
        try? FileManager.default.removeItem(at: url)
    }

    public var path: String { url.path }

    /// Bytes still free for files.
    public var free: Int {
        var info = statvfs()
        guard statvfs(url.path, &info) == 0 else { return 0 }
        return Int(info.f_bavail) * Int(info.f_frsize)
    }

    /// Writes a filler file so that about `bytes` stay free (tmpfs counts whole 4 KiB pages).
    public func fill(leaving bytes: Int, name: String = ".filler") throws {
        let filler = url.appendingPathComponent(name)
        try? FileManager.default.removeItem(at: filler)
        let size = max(0, free - bytes)
        FileManager.default.createFile(atPath: filler.path, contents: nil)
        let handle = try FileHandle(forWritingTo: filler)
        defer { try? handle.close() }
        // Real pages, not a sparse file: tmpfs charges only what is written.
        let chunk = Data(count: 1 << 16)
        var written = 0
        while written < size {
            let part = chunk.prefix(min(chunk.count, size - written))
            guard (try? handle.write(contentsOf: part)) != nil else { break }
            written += part.count
        }
    }
}
