internal import CLinux
#if canImport(Glibc)
import Glibc
#endif

/// The system calls a worker may still make once it serves requests: a seccomp-BPF allowlist,
/// found by tracing the workers of the test suite (listing, page and ComicInfo reads in every
/// format, vault objects, the hostile corpus, crashes and hangs) with `strace -f`.
///
/// A decoder bug that gives an attacker control of a worker leaves them this: reading files the
/// user can read (open only read-only), memory, threads, the clock, the socket to the daemon
/// and the descriptors already open. No new sockets or connections, no exec, no fork, no signal
/// to another process, no write to any file, no ptrace, no ioctl. Anything else fails with
/// EPERM (not a kill: a rare path of the runtime, such as its crash backtracer, then fails
/// cleanly instead of dying of SIGSYS); another architecture or the x32 ABI kills the process.
package enum SeccompFilter {
    /// struct sock_filter (kernel ABI).
    package struct Instruction {
        var code: UInt16
        var jumpIfTrue: UInt8
        var jumpIfFalse: UInt8
        var value: UInt32
    }

    // BPF opcodes and seccomp values (linux/bpf_common.h, linux/seccomp.h, linux/audit.h).
    private static let loadWord: UInt16 = 0x20 // BPF_LD | BPF_W | BPF_ABS
    private static let jumpIfEqual: UInt16 = 0x15 // BPF_JMP | BPF_JEQ | BPF_K
    private static let jumpIfAtLeast: UInt16 = 0x35 // BPF_JMP | BPF_JGE | BPF_K
    private static let jumpIfAnyBit: UInt16 = 0x45 // BPF_JMP | BPF_JSET | BPF_K
    private static let returnValue: UInt16 = 0x06 // BPF_RET | BPF_K
    private static let allow: UInt32 = 0x7fff_0000
    private static let killProcess: UInt32 = 0x8000_0000
    private static func fail(_ code: Int32) -> UInt32 { 0x0005_0000 | UInt32(code) }
    private static let auditArchX86_64: UInt32 = 0xC000_003E
    private static let x32SyscallBit: UInt32 = 0x4000_0000
    // struct seccomp_data offsets: nr, arch, then the 64-bit arguments (low half first on x86_64).
    private static let numberOffset: UInt32 = 0
    private static let archOffset: UInt32 = 4
    private static func argumentLow(_ index: UInt32) -> UInt32 { 16 + 8 * index }
    private static func argumentHigh(_ index: UInt32) -> UInt32 { 20 + 8 * index }

    /// Calls allowed whatever their arguments.
    package static let allowed: [Int32] = [
        // Descriptors already open, and files opened read-only (openat below).
        SYS_read, SYS_pread64, SYS_readv, SYS_preadv, SYS_lseek, SYS_close, SYS_fstat, SYS_newfstatat, SYS_statx,
        SYS_getdents64, SYS_fcntl, SYS_readlink, SYS_readlinkat, SYS_access, SYS_faccessat, SYS_faccessat2,
        // The socket to the daemon (fd 3) and the log on stderr; a file opened read-only refuses writes.
        SYS_write, SYS_writev, SYS_sendto, SYS_sendmsg, SYS_recvfrom, SYS_recvmsg, SYS_poll, SYS_ppoll,
        // Memory; mlock keeps vault keys out of swap.
        SYS_brk, SYS_mmap, SYS_munmap, SYS_mremap, SYS_mprotect, SYS_madvise, SYS_mlock, SYS_munlock,
        // Threads, locks, signals to itself, the clock, the end.
        SYS_futex, SYS_set_robust_list, SYS_rseq, SYS_sched_yield, SYS_sched_getaffinity, SYS_gettid, SYS_getpid, SYS_getppid,
        SYS_getuid, SYS_geteuid, SYS_getgid, SYS_getegid,
        SYS_rt_sigprocmask, SYS_rt_sigaction, SYS_rt_sigreturn, SYS_sigaltstack, SYS_restart_syscall,
        SYS_clock_nanosleep, SYS_nanosleep, SYS_clock_gettime, SYS_clock_getres, SYS_gettimeofday, SYS_getrusage, SYS_getrandom,
        SYS_exit, SYS_exit_group,
    ]

    /// The whole program for a process whose pid is `pid`.
    package static func program(pid: Int32) -> [Instruction] {
        var code: [Instruction] = []
        func emit(_ op: UInt16, _ value: UInt32, _ yes: UInt8 = 0, _ no: UInt8 = 0) {
            code.append(Instruction(code: op, jumpIfTrue: yes, jumpIfFalse: no, value: value))
        }
        /// A call allowed only when `check` (instructions that end in one return either way) says so.
        func conditional(_ number: Int32, _ check: [Instruction]) {
            emit(jumpIfEqual, UInt32(number), 0, UInt8(check.count))
            code += check
        }
        func load(_ offset: UInt32) -> Instruction { Instruction(code: loadWord, jumpIfTrue: 0, jumpIfFalse: 0, value: offset) }
        func jump(_ op: UInt16, _ value: UInt32, _ yes: UInt8, _ no: UInt8) -> Instruction {
            Instruction(code: op, jumpIfTrue: yes, jumpIfFalse: no, value: value)
        }
        func give(_ value: UInt32) -> Instruction { Instruction(code: returnValue, jumpIfTrue: 0, jumpIfFalse: 0, value: value) }

        // Syscall numbers mean something only for the architecture they were written for.
        emit(loadWord, archOffset)
        emit(jumpIfEqual, auditArchX86_64, 1, 0)
        emit(returnValue, killProcess)
        emit(loadWord, numberOffset)
        emit(jumpIfAtLeast, x32SyscallBit, 0, 1)
        emit(returnValue, killProcess)
        for number in allowed {
            emit(jumpIfEqual, UInt32(number), 0, 1)
            emit(returnValue, allow)
        }
        // openat only without any flag that writes, creates or truncates.
        let writing = UInt32(O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND) | 0o20_000_000 /* __O_TMPFILE */
        conditional(SYS_openat, [load(argumentLow(2)), jump(jumpIfAnyBit, writing, 1, 0), give(allow), give(fail(EACCES))])
        // Read-ahead advice on its own descriptors: a ZIP's listing asks for every local header at
        // once, one wait for the disk instead of one per member (400 in a row on a cold cache).
        // Only WILLNEED: dropping cached pages would slow what others read.
        conditional(SYS_fadvise64, [load(argumentLow(3)), jump(jumpIfEqual, UInt32(POSIX_FADV_WILLNEED), 0, 1), give(allow), give(fail(EPERM))])
        // clone only for a thread of this process, never a new process; clone3 hides its flags
        // in memory the filter cannot read, so glibc is told it does not exist and uses clone.
        conditional(SYS_clone, [load(argumentLow(0)), jump(jumpIfAnyBit, 0x0001_0000 /* CLONE_THREAD */, 0, 1), give(allow), give(fail(EPERM))])
        conditional(SYS_clone3, [give(fail(ENOSYS))])
        // Signals only to itself (abort, a crash report), never to another process of the user.
        conditional(SYS_tgkill, [load(argumentLow(0)), jump(jumpIfEqual, UInt32(bitPattern: pid), 0, 1), give(allow), give(fail(EPERM))])
        // Reading resource limits (the runtime asks for its stack size), never setting them.
        conditional(SYS_prlimit64, [load(argumentLow(2)), jump(jumpIfEqual, 0, 0, 3), load(argumentHigh(2)), jump(jumpIfEqual, 0, 0, 1),
                                    give(allow), give(fail(EPERM))])
        // Naming threads.
        conditional(SYS_prctl, [load(argumentLow(0)), jump(jumpIfEqual, 15 /* PR_SET_NAME */, 1, 0), jump(jumpIfEqual, 16 /* PR_GET_NAME */, 0, 1),
                                give(allow), give(fail(EPERM))])
        emit(returnValue, fail(EPERM))
        return code
    }

    /// Puts every thread of this process under the filter for good. Needs PR_SET_NO_NEW_PRIVS.
    /// False on another architecture (the allowlist is x86_64's) or if the kernel refused.
    @discardableResult
    package static func install() -> Bool {
        #if arch(x86_64)
        let instructions = program(pid: getpid())
        return instructions.withUnsafeBufferPointer { inky_seccomp_install(UInt16($0.count), $0.baseAddress) } == 0
        #else
        return false
        #endif
    }
}
