import Foundation

/// Reads a /proc file whole. procfs reports a size of 0, and `String(contentsOfFile:)` then
/// stops after its first 4 KiB read: /proc/self/maps of inkyfs, or /proc/self/mounts on a
/// machine with a few dozen mounts, would silently lose lines.
public enum ProcFile {
    public static func read(_ path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let data = try? handle.readToEnd() else { return nil }
        return String(decoding: data, as: UTF8.self)
    }
}
