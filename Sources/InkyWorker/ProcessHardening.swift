internal import CLinux

/// Process-wide protections for processes that hold vault keys or decrypted pages.
public enum ProcessHardening {
    /// No core dump can write keys to disk, and other processes of the same user cannot read
    /// this memory through ptrace or /proc/PID/mem.
    public static func makeNonDumpable() {
        _ = inky_set_not_dumpable()
    }

    /// Nothing this process or anything it could execute gains privileges (setuid, file
    /// capabilities). Returns whether the kernel accepted it.
    @discardableResult
    public static func forbidNewPrivileges() -> Bool {
        inky_set_no_new_privs() == 0
    }

    /// Every buffer of 2 MiB or more is its own mapping, returned to the kernel when freed, and
    /// at most two malloc arenas: RSS follows the cache budget instead of the high-water mark of
    /// past reads, even after huge pages. Ordinary pages (0.1-2 MB) come from the heap, where the
    /// next page reuses a freed one's memory: a fresh mapping per page cost a page fault per
    /// 4 KiB and an munmap, a third of the daemon's CPU on a stored CBZ (0.46-0.50 s -> 0.28-0.32 s
    /// per 267 MB read; peak RSS 36 -> 41-47 MiB).
    public static func releaseLargeBuffersEagerly() {
        _ = inky_release_large_buffers(2 << 20, 2)
    }
}
