internal import CLinux

/// Process-wide protections for processes that hold vault keys or decrypted pages.
public enum ProcessHardening {
    /// No core dump can write keys to disk, and other processes of the same user cannot read
    /// this memory through ptrace or /proc/PID/mem.
    public static func makeNonDumpable() {
        _ = inky_set_not_dumpable()
    }
}
