import Foundation
import InkyCore

/// Covers kept on disk between mounts (`~/.cache/inkyfs/covers/`), so a remount serves them
/// without opening an archive. A file is named by a hash of the comic's persistent identity (its
/// library path and `FileIdentity.generation`): a changed comic gets a new name and its old cover
/// ages out. Written atomically (temp file, rename); capped by total size, evicting the cover
/// accessed longest ago (an access sets the file's modification time). Vault covers never come here.
public final class CoverCache: @unchecked Sendable {
    public let directory: String
    public let capacity: Int64
    private let lock = NSLock()
    /// Total bytes of the covers on disk, counted once at start and kept up to date after.
    private var total: Int64?
    /// Covers that could not be made (a page that does not decode), by key: tried once a mount.
    private var failed: Set<String> = []

    public init(directory: String = XDGDirectories.cache + "/covers", capacity: Int64 = 500 << 20) {
        self.directory = directory
        self.capacity = capacity
    }

    /// The file name of a comic's cover: two FNV-1a hashes (different seeds) of its path and generation.
    public static func key(path: String, identity: FileIdentity) -> String {
        let bytes = Array(path.utf8) + [0] + withUnsafeBytes(of: identity.generation.littleEndian) { Array($0) }
        func fnv(_ seed: UInt64) -> UInt64 {
            bytes.reduce(seed) { ($0 ^ UInt64($1)) &* 0x0000_0100_0000_01B3 }
        }
        let hex = { (value: UInt64) in String(value, radix: 16).leftPadded(to: 16) }
        return hex(fnv(0xcbf2_9ce4_8422_2325)) + hex(fnv(0x6c62_272e_07bb_0142)) + ".jpg"
    }

    /// The cover's bytes, or nil; a hit counts as an access for eviction.
    public func cover(_ key: String) -> [UInt8]? {
        let path = directory + "/" + key
        guard let data = FileManager.default.contents(atPath: path), !data.isEmpty else { return nil }
        _ = utimensat(AT_FDCWD, path, nil, 0)
        return Array(data)
    }

    /// Whether the cover is on disk, without reading it (a listing asks this for every folder).
    public func contains(_ key: String) -> Bool {
        access(directory + "/" + key, F_OK) == 0
    }

    /// Remembers that a comic makes no cover, so each `stat` does not start a worker again.
    public func markFailed(_ key: String) { lock.withLock { _ = failed.insert(key) } }
    public func hasFailed(_ key: String) -> Bool { lock.withLock { failed.contains(key) } }

    /// Stores a cover (atomically: a reader never sees half of one), then evicts down to the cap.
    public func store(_ key: String, _ bytes: [UInt8]) {
        guard Int64(bytes.count) <= capacity, !bytes.isEmpty else { return }
        lock.lock()
        defer { lock.unlock() }
        let manager = FileManager.default
        try? manager.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let final = directory + "/" + key
        let temporary = directory + "/.\(key).\(getpid()).tmp"
        let replaced = (try? manager.attributesOfItem(atPath: final)[.size] as? Int64) ?? 0
        guard manager.createFile(atPath: temporary, contents: Data(bytes), attributes: [.posixPermissions: 0o600]),
              rename(temporary, final) == 0 else {
            unlink(temporary)
            return
        }
        total = (total ?? measured()) - replaced + Int64(bytes.count)
        if total! > capacity { evict() }
    }

    /// Bytes of the covers on disk (what the cap bounds).
    public var size: Int64 {
        lock.lock()
        defer { lock.unlock() }
        return total ?? measured()
    }

    private func entries() -> [(path: String, size: Int64, accessed: Date)] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.hasSuffix(".jpg") && !$0.hasPrefix(".") }.compactMap { name in
            let path = directory + "/" + name
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
                  let size = attributes[.size] as? Int64, let date = attributes[.modificationDate] as? Date else { return nil }
            return (path, size, date)
        }
    }

    private func measured() -> Int64 { entries().reduce(0) { $0 + $1.size } }

    /// Removes the covers accessed longest ago until the rest fit the cap.
    private func evict() {
        var all = entries().sorted { $0.accessed < $1.accessed }
        var sum = all.reduce(0) { $0 + $1.size }
        while sum > capacity, !all.isEmpty {
            let oldest = all.removeFirst()
            unlink(oldest.path)
            sum -= oldest.size
        }
        total = sum
    }
}

private extension String {
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
