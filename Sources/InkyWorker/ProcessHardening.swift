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

    /// Every buffer of 128 KiB or more (every page) is its own mapping, returned to the kernel
    /// when freed, and at most two malloc arenas: RSS follows the cache budget instead of the
    /// high-water mark of past reads.
    public static func releaseLargeBuffersEagerly() {
        _ = inky_release_large_buffers(128 << 10, 2)
    }
}
