import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Resource limits a worker puts on itself before touching any archive.
public struct WorkerLimits: Sendable, Equatable {
    /// Address space: bounds what a decoder bug or a bomb can allocate.
    public var addressSpaceBytes: UInt64
    /// Lifetime CPU seconds: a decoder spinning forever is killed by the kernel even if the
    /// daemon's watchdog did not fire. Workers retire at half of it.
    public var cpuSeconds: UInt64

    public init(addressSpaceBytes: UInt64 = 2 << 30, cpuSeconds: UInt64 = 600) {
        self.addressSpaceBytes = addressSpaceBytes
        self.cpuSeconds = cpuSeconds
    }

    package func apply() {
        if !Self.runsUnderSanitizer {
            var space = rlimit(rlim_cur: rlim_t(addressSpaceBytes), rlim_max: rlim_t(addressSpaceBytes))
            setrlimit(__rlimit_resource_t(RLIMIT_AS.rawValue), &space)
        }
        var cpu = rlimit(rlim_cur: rlim_t(cpuSeconds), rlim_max: rlim_t(cpuSeconds + 5))
        setrlimit(__rlimit_resource_t(RLIMIT_CPU.rawValue), &cpu)
        var core = rlimit(rlim_cur: 0, rlim_max: 0)
        setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &core)
        // A folder comic's pages come as one descriptor each: as many as the hard limit allows.
        var files = rlimit()
        if getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &files) == 0, files.rlim_cur < files.rlim_max {
            files.rlim_cur = files.rlim_max
            setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &files)
        }
    }

    /// ASan and TSan reserve terabytes of shadow address space at startup, so under
    /// `scripts/dev/sanitize` an address-space limit would make every later allocation fail.
    /// Their runtimes export `__asan_init`/`__tsan_init`; a normal build has neither.
    static let runsUnderSanitizer: Bool = {
        let process = dlopen(nil, RTLD_NOW)
        defer { if let process { dlclose(process) } }
        let runtimes: [String] = ["__asan_init", "__tsan_init"]
        return runtimes.contains { dlsym(process, $0) != nil }
    }()

    package func cpuSecondsUsed() -> UInt64 {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return UInt64(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
    }
}
