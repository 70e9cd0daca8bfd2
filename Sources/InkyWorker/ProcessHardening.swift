import Foundation
internal import CLinux

/// Process-wide protections for processes that hold vault keys or decrypted pages.
public enum ProcessHardening {
    /// No core dump can write keys to disk, and other processes of the same user cannot read
    /// this memory through ptrace or /proc/PID/mem.
    /// RLIMIT_CORE is set to 0 as well (soft and hard), so no core file is written even if
    /// something made the process dumpable again: called by the daemon at start and by every
    /// `vault` command before it reads a password.
    public static func makeNonDumpable() {
        _ = inky_set_not_dumpable()
        var none = rlimit(rlim_cur: 0, rlim_max: 0)
        _ = setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &none)
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
    /// per 267 MB read; peak RSS 36 -> 41-47 MiB). The free memory at a heap's top is given back
    /// only past 8 MiB: at glibc's 128 KiB, a page freed there was returned at once and the next
    /// page faulted it in again, 4 KiB at a time (23,000 faults per 267 MB of vault pages, 7,000
    /// now; peak RSS unchanged, 58-63 MiB).
    public static func releaseLargeBuffersEagerly() {
        _ = inky_release_large_buffers(2 << 20, 2, 8 << 20)
    }

    /// From now on malloc overwrites every chunk it is given back (glibc's M_PERTURB), so a
    /// buffer that held a vault page or name on its way (decryption, a worker frame, a reply, a
    /// listing's strings) is not left readable in freed memory. Chunks that go to a thread's
    /// cache (tcache) are not overwritten: the daemon runs with it off when it may hold a vault
    /// (`freedMemoryTunables`). Costs a memset per allocation and free: turned on at the first
    /// unlock, never for a mount whose vault stays locked.
    public static func wipeFreedMemory() {
        _ = inky_wipe_freed_memory(0xA5)
    }

    /// glibc settings, read only at process start, that let `wipeFreedMemory` reach every freed
    /// chunk: no per-thread cache of small freed chunks.
    public static let freedMemoryTunables = "glibc.malloc.tcache_count=0"

    /// Whether this process started with `freedMemoryTunables`.
    public static var startedWithFreedMemoryTunables: Bool {
        (ProcessInfo.processInfo.environment["GLIBC_TUNABLES"] ?? "").contains(freedMemoryTunables)
    }

    /// The environment additions a daemon is started with: `freedMemoryTunables` added to any
    /// tunables already set.
    public static var daemonEnvironment: [String: String] {
        guard !startedWithFreedMemoryTunables else { return [:] }
        let current = ProcessInfo.processInfo.environment["GLIBC_TUNABLES"] ?? ""
        return ["GLIBC_TUNABLES": current.isEmpty ? freedMemoryTunables : current + ":" + freedMemoryTunables]
    }

    /// The tunables a worker starts with: the daemon's, without `freedMemoryTunables`. A worker
    /// never wipes freed memory, and needs not: the vault's lock ends every worker (a vault
    /// object's with its key and pages), so no worker outlives a lock. Without the per-thread
    /// cache, malloc and free were 12% of a worker's time listing a cold library.
    public static var workerEnvironment: [String: String] {
        guard let current = ProcessInfo.processInfo.environment["GLIBC_TUNABLES"] else { return [:] }
        return ["GLIBC_TUNABLES": current.split(separator: ":").filter { $0 != freedMemoryTunables }.joined(separator: ":")]
    }

    /// Runs this same command again with `daemonEnvironment` when it did not start with it (a
    /// mount in the foreground, a unit that runs the daemon itself). Returns only if exec failed.
    public static func restartWithFreedMemoryTunables() {
        guard !startedWithFreedMemoryTunables else { return }
        let variables = ProcessInfo.processInfo.environment.merging(daemonEnvironment) { $1 }
        let argv = CommandLine.arguments.map { strdup($0) } + [nil]
        let envp = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        execve("/proc/self/exe", argv, envp)
        argv.forEach { free($0) }
        envp.forEach { free($0) }
    }
}
