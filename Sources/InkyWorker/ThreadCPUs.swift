internal import CLinux

/// The CPUs a thread may run on. The FUSE device readers pin themselves to one CPU each
/// (CFuse3 shim.h), and a thread inherits its creator's CPUs: libdispatch starts its pool
/// threads from the thread that queues work, so background work queued while answering a
/// request would otherwise run on the requester's CPU for good, beside the requester.
public enum ThreadCPUs {
    /// Lets the calling thread run on every CPU the process may (the main thread's, never
    /// pinned). Background work calls it first; a no-op on a thread that already may.
    public static func widenToProcess() {
        var own = inky_cpu_mask()
        _ = inky_cpus_widen_to_process(&own)
    }

    /// Runs `body` with the calling thread on every CPU the process may, then puts it back.
    static func widened<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        var own = inky_cpu_mask()
        let widened = inky_cpus_widen_to_process(&own) != 0
        defer { if widened { inky_cpus_restore(&own) } }
        return try body()
    }
}
