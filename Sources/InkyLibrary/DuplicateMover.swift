import Foundation
import InkyCore
import InkyVault

/// `inkyfs duplicates --move-to DIR`: moves the extra copies of each group out of the library,
/// never deleting one and never the comic a group keeps. A comic keeps its path under the library
/// as its path under DIR, and a file already there is never replaced.
///
/// Verified as `vault add` verifies: within one filesystem the file gets its new name as a hard
/// link (which fails rather than replace) and loses the old one, so its bytes never move; across
/// filesystems it is copied, written to the disk, read back and compared by SHA-256 with the
/// original, and only then the original removed. A failure before that leaves the original as
/// it was; a crash between the two leaves both, never neither.
public enum DuplicateMover {
    public struct Move: Sendable, Equatable, Codable {
        public var from: String
        public var to: String
    }

    /// The comics to move: every member of a group but the first (the one it keeps), unless
    /// another group keeps it. `kinds`: the groups whose extras move.
    public static func plan(_ groups: [DuplicateFinder.Group], kinds: Set<DuplicateFinder.Kind>,
                            library: String, destination: String) -> [Move] {
        let kept = Set(groups.compactMap(\.comics.first))
        var moving: [String] = [], seen: Set<String> = []
        for group in groups where kinds.contains(group.kind) {
            for comic in group.comics.dropFirst() where !kept.contains(comic) && seen.insert(comic).inserted { moving.append(comic) }
        }
        return moving.map { comic in
            let relative = comic.hasPrefix(library + "/") ? String(comic.dropFirst(library.count + 1)) : (comic as NSString).lastPathComponent
            return Move(from: comic, to: (destination as NSString).appendingPathComponent(relative))
        }
    }

    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public var description: String
    }

    /// Moves one comic; on failure the original is where it was.
    public static func perform(_ move: Move) throws(Failure) {
        var source = stat()
        guard lstat(move.from, &source) == 0, source.st_mode & S_IFMT == S_IFREG else {
            throw Failure(description: "\(move.from) is no longer a regular file")
        }
        var existing = stat()
        if lstat(move.to, &existing) == 0 { throw Failure(description: "\(move.to) already exists: nothing replaced") }
        let folder = (move.to as NSString).deletingLastPathComponent
        do { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) } catch {
            throw Failure(description: "cannot make \(folder): \(error.localizedDescription)")
        }
        if link(move.from, move.to) == 0 {
            guard unlink(move.from) == 0 else {
                let reason = Errno.current
                unlink(move.to)
                throw Failure(description: "cannot remove \(move.from): \(reason)")
            }
            return
        }
        if errno == EEXIST { throw Failure(description: "\(move.to) already exists: nothing replaced") }
        // Another filesystem, or one without hard links: copy, verify, then remove.
        try copyVerified(move, source: source)
        guard unlink(move.from) == 0 else { throw Failure(description: "copied, but cannot remove \(move.from): \(Errno.current)") }
    }

    /// Copies `move.from` to a new `move.to` (created exclusively), synced, read back and
    /// compared by SHA-256 with the bytes read from the original; the copy is removed on any failure.
    static func copyVerified(_ move: Move, source: stat) throws(Failure) {
        let input = open(move.from, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard input >= 0 else { throw Failure(description: "cannot open \(move.from): \(Errno.current)") }
        defer { close(input) }
        let output = open(move.to, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, source.st_mode & 0o777)
        guard output >= 0 else { throw Failure(description: "cannot create \(move.to): \(Errno.current)") }
        var verified = false
        defer { if !verified { unlink(move.to) } }
        let copied: [UInt8]
        do {
            defer { close(output) }
            copied = try stream(input) { chunk throws(Failure) in
                var offset = 0
                while offset < chunk.count {
                    let count = chunk[offset...].withUnsafeBytes { write(output, $0.baseAddress, $0.count) }
                    guard count > 0 else { throw Failure(description: "cannot write \(move.to): \(Errno.current)") }
                    offset += count
                }
            }
            guard fsync(output) == 0 else { throw Failure(description: "cannot write \(move.to) to the disk: \(Errno.current)") }
        }
        var after = stat()
        guard fstat(input, &after) == 0, after.st_size == source.st_size, after.st_mtim.tv_sec == source.st_mtim.tv_sec,
              after.st_mtim.tv_nsec == source.st_mtim.tv_nsec else {
            throw Failure(description: "\(move.from) changed while it was copied: left where it is")
        }
        let reread = open(move.to, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard reread >= 0 else { throw Failure(description: "cannot read back \(move.to): \(Errno.current)") }
        defer { close(reread) }
        guard try stream(reread, { (_: [UInt8]) throws(Failure) in }) == copied else {
            throw Failure(description: "the copy \(move.to) does not read back as \(move.from): original kept")
        }
        var times = [source.st_atim, source.st_mtim]
        futimens(reread, &times)
        verified = true
    }

    /// Reads `fd` to its end, handing each chunk to `body`; returns the SHA-256 of all it read.
    static func stream(_ fd: Int32, _ body: ([UInt8]) throws(Failure) -> Void) throws(Failure) -> [UInt8] {
        let hasher: SHA256Hasher
        do { hasher = try SHA256Hasher() } catch { throw Failure(description: "cannot hash: \(error)") }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 { throw Failure(description: "read failed: \(Errno.current)") }
            if count == 0 {
                do { return try hasher.finish() } catch { throw Failure(description: "cannot hash: \(error)") }
            }
            let chunk = Array(buffer[0..<count])
            do { try hasher.update(chunk) } catch { throw Failure(description: "cannot hash: \(error)") }
            try body(chunk)
        }
    }
}
