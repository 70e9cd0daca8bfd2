import Foundation

/// An entry of the checkout's `.cache/` (a generated corpus, a compiled tool) that tests running
/// side by side may all find missing at once: each makes it whole under a name of its own and
/// renames it into place, so none ever sees a half-made one.
public enum CacheEntry {
    public static func make(_ entry: URL, _ build: (URL) throws -> Void) throws {
        try FileManager.default.createDirectory(at: entry.deletingLastPathComponent(), withIntermediateDirectories: true)
        let part = entry.deletingLastPathComponent().appendingPathComponent(".\(entry.lastPathComponent).part-\(getpid())-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: part) }
        try build(part)
        // A folder renamed onto one another test made meanwhile fails (ENOTEMPTY): theirs is as good.
        if rename(part.path, entry.path) != 0, errno != ENOTEMPTY, errno != EEXIST {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
    }
}
