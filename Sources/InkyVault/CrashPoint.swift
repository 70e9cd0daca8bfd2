import Foundation

/// Named steps of the vault's write paths where crash-safety tests kill the process, as a
/// power cut or `kill -9` would: `INKYFS_TEST_CRASH_AT=add.object-published inkyfs vault add …`
/// dies right after that step. Unset it does nothing, and a release build has no such hook at
/// all: the environment is never read (the tests run the debug build).
public enum CrashPoint {
    #if DEBUG
    private static let target = ProcessInfo.processInfo.environment["INKYFS_TEST_CRASH_AT"]
    /// `INKYFS_TEST_STOP_AT=add.manifest-saved`: the process stops itself (SIGSTOP) there, for a
    /// test to change the world (swap the original) and let it go on with SIGCONT.
    private static let stop = ProcessInfo.processInfo.environment["INKYFS_TEST_STOP_AT"]
    #endif

    @inline(__always)
    public static func reach(_ name: String) {
        #if DEBUG
        if let stop, stop == name { kill(getpid(), SIGSTOP) }
        guard let target, target == name else { return }
        kill(getpid(), SIGKILL)
        #endif
    }

    /// Every point, in the order the write paths pass them.
    public static let all = [
        "add.object-published", "add.verified", "add.manifest-saved", "add.source-deleted",
        "remove.verified", "remove.extracted", "remove.manifest-saved", "remove.object-deleted",
        "passwd.previous-written", "passwd.key-written",
        "durable.temporary-synced",
    ]
}
