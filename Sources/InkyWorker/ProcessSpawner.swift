import Foundation
#if canImport(Glibc)
import Glibc
#endif
internal import CLinux
import InkyCore

/// posix_spawn with the few file actions inkyfs needs. fork() is not safe in a multithreaded
/// Swift process, so the background daemon is a new execution of our own binary and workers one of inkyfs-worker.
public enum ProcessSpawner {
    public enum FileAction {
        /// Make this process's `descriptor` appear as `target` in the child.
        case duplicate(Int32, as: Int32)
        /// Open `path` as `target` in the child.
        case open(String, flags: Int32, as: Int32)
        /// Make the child's `descriptor`, as an earlier action set it, appear as `target` too
        /// (stderr to wherever stdout went).
        case alias(of: Int32, as: Int32)

        var target: Int32 {
            switch self {
            case .duplicate(_, let target), .open(_, _, let target), .alias(_, let target): target
            }
        }
    }

    /// The running executable, for re-executing ourselves.
    public static var ownExecutable: String { HelperExecutable.running }

    /// Starts `executable` with `arguments` (argv[0] is the executable). Signal dispositions and
    /// mask are reset, so the child does not inherit the daemon's signal handling, and it may
    /// run on every CPU the process may, whichever thread spawns it.
    public static func spawn(_ executable: String, _ arguments: [String], files: [FileAction],
                             newSession: Bool = false, environment extra: [String: String] = [:]) throws(Errno) -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        let highest = max(files.map(\.target).max() ?? 2, 2)
        // The child's actions run in order: a descriptor of ours that is also a target (a command
        // with little open has its pipes at 3 and 4) would be replaced by one action before the
        // next reads it, and one that is its own target would keep its close-on-exec. Every such
        // one is handed from a copy above all the targets.
        var copies: [Int32] = []
        defer { copies.forEach { close($0) } }
        for action in files {
            switch action {
            case .duplicate(var descriptor, let target):
                if descriptor <= highest {
                    descriptor = fcntl(descriptor, F_DUPFD_CLOEXEC, highest + 1)
                    guard descriptor >= 0 else { throw Errno.current }
                    copies.append(descriptor)
                }
                posix_spawn_file_actions_adddup2(&actions, descriptor, target)
            case .alias(let descriptor, let target): posix_spawn_file_actions_adddup2(&actions, descriptor, target)
            case .open(let path, let flags, let target): posix_spawn_file_actions_addopen(&actions, target, path, flags, 0o600)
            }
        }
        // Nothing but what is given: a descriptor the mounting shell left open without
        // close-on-exec (a pipe at fd 251) must not reach the daemon or a worker.
        let closing = inky_spawn_close_from(&actions, highest + 1)
        guard closing == 0 else { throw Errno(closing) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigdefault(&attributes, &all)
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var flags = Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)
        if newSession { flags |= inky_posix_spawn_setsid() }
        posix_spawnattr_setflags(&attributes, flags)

        let argv = ([executable] + arguments).map { $0.withCString { strdup($0) } } + [nil]
        defer { argv.forEach { free($0) } }
        let variables = ProcessInfo.processInfo.environment.merging(extra) { $1 }
        let envp = variables.map { "\($0.key)=\($0.value)".withCString { strdup($0) } } + [nil]
        defer { envp.forEach { free($0) } }
        // The child gets the process's CPUs, not a FUSE reader thread's one (ThreadCPUs).
        var child: pid_t = 0
        let status = ThreadCPUs.widened { posix_spawn(&child, executable, &actions, &attributes, argv, envp) }
        guard status == 0 else { throw Errno(status) }
        return child
    }

    /// A pipe whose ends close on exec (hand one to a child with `.duplicate`).
    public static func pipe() throws(Errno) -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        guard inky_pipe_cloexec(&fds) == 0 else { throw Errno.current }
        return (fds[0], fds[1])
    }
}
