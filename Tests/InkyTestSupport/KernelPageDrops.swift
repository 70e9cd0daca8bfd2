import Foundation

/// The page-cache pages of a mount that the kernel's reclaim dropped while this watched: a cached
/// listing or link text gone without the daemon asking, which the next walk asks for again.
/// kswapd does that under memory pressure; kdamond, where DAMON runs a proactive `pageout`
/// scheme (this machine's), to file pages idle about a minute whatever the free memory. A test
/// that a second walk is the kernel's alone leaves those out: they are the kernel's doing.
///
/// tracefs's `filemap:mm_filemap_delete_from_page_cache` on the mount's device, in a tracing
/// instance of its own; nil where tracefs is not writable (not root).
public final class KernelPageDrops {
    private let instance: String

    public init?(mountpoint: String) {
        var info = stat()
        guard stat(mountpoint, &info) == 0 else { return nil }
        let device = UInt64(info.st_dev)
        // glibc's dev_t to the kernel's (major << 20 | minor), as the event has it.
        let major = ((device >> 8) & 0xFFF) | ((device >> 32) & ~UInt64(0xFFF))
        let minor = (device & 0xFF) | ((device >> 12) & ~UInt64(0xFF))
        instance = "/sys/kernel/tracing/instances/inkyfs-test-\(getpid())-\(UUID().uuidString.prefix(8))"
        let event = instance + "/events/filemap/mm_filemap_delete_from_page_cache"
        guard mkdir(instance, 0o700) == 0 else { return nil }
        guard Self.write("s_dev == \(major << 20 | minor)\n", to: event + "/filter"),
              Self.write("1\n", to: event + "/enable") else {
            rmdir(instance)
            return nil
        }
    }

    /// The inode numbers whose pages reclaim dropped since `init`; stops watching.
    public func reclaimed() -> Set<UInt64> {
        _ = Self.write("0\n", to: instance + "/events/filemap/mm_filemap_delete_from_page_cache/enable")
        defer { rmdir(instance) }
        guard let trace = try? String(contentsOfFile: instance + "/trace", encoding: .utf8) else { return [] }
        var found = Set<UInt64>()
        for line in trace.split(separator: "\n") where line.contains("mm_filemap_delete_from_page_cache") {
            // "<comm>-<pid> [cpu] …: mm_filemap_delete_from_page_cache: dev 0:NN ino HEX pfn=…"
            let thread = line.drop { $0 == " " }.prefix { $0 != " " }
            guard thread.hasPrefix("kdamond") || thread.hasPrefix("kswapd"),
                  let ino = line.range(of: " ino ") else { continue }
            if let number = UInt64(line[ino.upperBound...].prefix { $0 != " " }, radix: 16) { found.insert(number) }
        }
        return found
    }

    private static func write(_ text: String, to path: String) -> Bool {
        let descriptor = open(path, O_WRONLY | O_TRUNC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return text.withCString { Foundation.write(descriptor, $0, strlen($0)) } == text.utf8.count
    }
}
