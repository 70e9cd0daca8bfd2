import Foundation
import InkyCore
import Synchronization

/// A directory of cache files under a byte cap, shared by the cover and page caches: the
/// directory is made 0700 and files 0600 (they are pictures of the user's comics); a file is
/// written to a temporary name and renamed, so a reader never sees half of one; reading one
/// sets its modification time, and past the cap the files read longest ago go first.
///
/// Files of one cache end in `suffix`; anything else in the directory is left alone.
final class BoundedFileDirectory: Sendable {
    let directory: String
    let capacity: Int64
    private let suffix: String
    /// Eviction goes this far below the cap, so the directory is not listed at every store
    /// once the cache is full (a full 2 GB page cache holds ~10,000 files).
    private let slack: Int64
    /// Total bytes of the files on disk, counted once at start and kept up to date after; held
    /// while a file is written or removed, so the count and the folder change together.
    private let total = Mutex<Int64?>(nil)
    /// Set by `close`, under `total`'s lock: no file is written after.
    private let closed = Atomic<Bool>(false)

    init(directory: String, capacity: Int64, suffix: String, slack: Int64 = 0) {
        self.directory = directory
        self.capacity = capacity
        self.suffix = suffix
        self.slack = min(max(0, slack), capacity)
    }

    /// A file name for `bytes` (a key's fields): two FNV-1a hashes with different seeds, 32 hex digits.
    static func hashedName(of bytes: [UInt8]) -> String {
        func fnv(_ seed: UInt64) -> UInt64 { bytes.reduce(seed) { ($0 ^ UInt64($1)) &* 0x0000_0100_0000_01B3 } }
        let hex = { (value: UInt64) in
            let digits = String(value, radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }
        return hex(fnv(0xcbf2_9ce4_8422_2325)) + hex(fnv(0x6c62_272e_07bb_0142))
    }

    /// The file's bytes, or nil; a hit counts as a use for eviction.
    func read(_ name: String) -> [UInt8]? {
        let path = directory + "/" + name
        guard let data = FileManager.default.contents(atPath: path), !data.isEmpty else { return nil }
        _ = utimensat(AT_FDCWD, path, nil, 0)
        return Array(data)
    }

    /// Whether the file is there (its use is not counted).
    func contains(_ name: String) -> Bool { access(directory + "/" + name, F_OK) == 0 }

    /// Stores a file (atomically), then evicts down to the cap; the file just written stays.
    func write(_ name: String, _ bytes: [UInt8]) {
        guard Int64(bytes.count) <= capacity, !bytes.isEmpty else { return }
        total.withLock { total in write(name, bytes, total: &total) }
    }

    private func write(_ name: String, _ bytes: [UInt8], total: inout Int64?) {
        guard !closed.load(ordering: .relaxed) else { return }
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                 attributes: [.posixPermissions: 0o700])
        if total == nil { sweepTemporaries() }
        let final = directory + "/" + name
        let temporary = directory + "/.\(name).\(getpid())" + Self.temporarySuffix
        // Counted before the new file lands: measured after, it would count twice.
        let before = total ?? measured()
        let replaced = fileSize(final) ?? 0
        let file = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard file >= 0 else { return }
        let failed = bytes.withUnsafeBytes { Syscall.writeFully(file, $0) }
        Glibc.close(file)
        guard failed == nil, rename(temporary, final) == 0 else {
            unlink(temporary)
            return
        }
        total = before - replaced + Int64(bytes.count)
        if total! > capacity { total = evict(keeping: final) }
    }

    /// Waits for a file being written, then writes no more: a daemon ending mid-write would leave
    /// its temporary file, which no cap counts, behind.
    func close() {
        total.withLock { _ in closed.store(true, ordering: .relaxed) }
    }

    private static let temporarySuffix = ".tmp"

    /// Temporary files that an ended process left (a daemon killed mid-write, or one of an older
    /// inkyfs, whose Foundation writes left `.dat.nosync…` files): removed, once, at the first
    /// write. Ours name their writer: one of a process still running is left to it.
    private func sweepTemporaries() {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        for name in names where name.hasPrefix(".") {
            let writer: Int32?
            if name.hasSuffix(Self.temporarySuffix) {
                writer = name.dropLast(Self.temporarySuffix.count).split(separator: ".").last.flatMap { Int32($0) }
                guard writer != nil else { continue }
            } else if name.hasPrefix(".dat.nosync") {
                writer = nil
            } else {
                continue
            }
            if let writer, writer == getpid() || kill(writer, 0) == 0 || errno == EPERM { continue }
            unlink(directory + "/" + name)
        }
    }

    /// Removes a file found bad (truncated, corrupt, not what its name says).
    func remove(_ name: String) {
        total.withLock { total in
            let path = directory + "/" + name
            let size = fileSize(path) ?? 0
            if unlink(path) == 0, let known = total { total = known - size }
        }
    }

    /// Removes every file whose name starts with `prefix`; returns how many went.
    @discardableResult
    func remove(prefixed prefix: String) -> Int {
        total.withLock { total in
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            var removed = 0
            for name in names where name.hasPrefix(prefix) {
                let path = directory + "/" + name
                let size = fileSize(path) ?? 0
                if unlink(path) == 0 {
                    removed += 1
                    if let known = total { total = known - size }
                }
            }
            return removed
        }
    }

    /// The part of a cache file's name that names one library comic as it is now (its path in the
    /// library and `FileIdentity.generation`): a cover is named by it, a converted page starts with it.
    static func comicName(path: String, identity: FileIdentity) -> String {
        hashedName(of: Array(path.utf8) + [0] + withUnsafeBytes(of: identity.generation.littleEndian) { Array($0) })
    }

    /// Bytes of the files on disk (what the cap bounds).
    var size: Int64 { total.withLock { $0 ?? measured() } }

    private func fileSize(_ path: String) -> Int64? {
        var info = stat()
        return stat(path, &info) == 0 ? Int64(info.st_size) : nil
    }

    private func entries() -> [(path: String, size: Int64, used: Int64)] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.hasSuffix(suffix) && !$0.hasPrefix(".") }.compactMap { name in
            let path = directory + "/" + name
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            return (path, Int64(info.st_size), Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec))
        }
    }

    private func measured() -> Int64 { entries().reduce(0) { $0 + $1.size } }

    /// Removes the files used longest ago until the rest fit `slack` below the cap; the total left.
    private func evict(keeping kept: String) -> Int64 {
        var all = entries().sorted { $0.used < $1.used }
        var sum = all.reduce(0) { $0 + $1.size }
        all.removeAll { $0.path == kept }
        while sum > capacity - slack, !all.isEmpty {
            let oldest = all.removeFirst()
            unlink(oldest.path)
            sum -= oldest.size
        }
        return sum
    }
}
