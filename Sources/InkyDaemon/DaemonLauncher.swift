import Foundation
import InkyCore
import InkyWorker
import Synchronization

/// Backgrounds a mount without fork(): the same command is started again with
/// `--ready-fd 3 --plan-fd 4` in a new session, its output going to the log file; it reads what
/// the command line came to on fd 4 (`handing`), and the caller waits on fd 3 until it says
/// "ready" or why it failed. A plain background mount starts it before parsing its own command
/// line (`startEarly`), so that the daemon's start (loading, the Swift runtime: ~4 ms of CPU)
/// overlaps that parse (~6 ms) instead of following it.
public enum DaemonLauncher {
    public static func logDirectory() -> String { XDGDirectories.state }

    public static func logPath(for mountpoint: String) -> String {
        let name = mountpoint.split(separator: "/").joined(separator: "_")
        return "\(logDirectory())/mount-\(name.isEmpty ? "root" : name).log"
    }

    /// A daemon started, not yet told its plan: `plan` is the writing end of its fd 4, `ready` the
    /// reading end of its fd 3.
    struct Started: Sendable {
        var pid: pid_t
        var ready: Int32
        var plan: Int32
    }

    /// The daemon `startEarly` started, until `launch` hands it its plan or the command ends.
    private static let early = Mutex<Started?>(nil)

    /// Starts the daemon of `arguments` (our own subcommand line, not parsed yet) now, waiting for
    /// its plan, with its output on /dev/null until it has the log's path. A command that turns out
    /// to be no background mount (a usage error, a refusal) kills it as it exits (`abandonEarly`),
    /// before it did anything: it was reading fd 4.
    public static func startEarly(arguments: [String]) {
        guard let started = try? start(arguments: arguments, log: nil, plan: nil) else { return }
        early.withLock { $0 = started }
        atexit { DaemonLauncher.abandonEarly() }
    }

    /// The daemon `startEarly` started, taken: whoever takes it hands it a plan or kills it.
    private static func takeEarly() -> Started? {
        early.withLock { started in
            defer { started = nil }
            return started
        }
    }

    /// Kills and reaps the daemon `startEarly` started, if no plan was handed to it.
    public static func abandonEarly() {
        guard let started = takeEarly() else { return }
        kill(started.pid, SIGKILL)
        var status: Int32 = 0
        _ = Syscall.retrying { waitpid(started.pid, &status, 0) }
        close(started.plan)
        close(started.ready)
    }

    /// Has the daemon of `arguments` (our own subcommand line) mount `plan`, starting it unless
    /// `startEarly` did, and waits for its word. Returns nil once the child reported "ready",
    /// else what went wrong. Lines the daemon sent before "ready" are warnings, printed here on stderr.
    /// The daemon reads `plan` instead of parsing its command line (it has that too, for a plan it cannot read).
    public static func launch(arguments: [String], handing plan: [UInt8], logPath: String) -> String? {
        // A read-only or full state folder costs the log, not the mount.
        var logPath = logPath
        var reason: String?
        do {
            try FileManager.default.createDirectory(atPath: (logPath as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        } catch {
            reason = error.localizedDescription
        }
        let probe = open(logPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        if probe < 0 {
            warn("inkyfs: warning: cannot write the log \(logPath) (\(reason ?? String(cString: strerror(errno)))): the daemon's messages are discarded")
            logPath = "/dev/null"
        } else {
            close(probe)
        }
        let daemon: Started
        if let started = takeEarly() {
            // It opens the log itself: its output went to /dev/null until now.
            // A daemon that died meanwhile closed its end: that write fails (EPIPE), its answer tells why.
            let previous = signal(SIGPIPE, SIG_IGN)
            _ = DaemonHandover.bytes(logPath: logPath, plan: plan).withUnsafeBytes { Syscall.writeFully(started.plan, $0) }
            signal(SIGPIPE, previous)
            close(started.plan)
            daemon = started
        } else {
            do throws(Errno) {
                daemon = try start(arguments: arguments, log: logPath, plan: DaemonHandover.bytes(logPath: nil, plan: plan))
            } catch {
                return "inkyfs: cannot start the daemon: \(error)"
            }
        }
        defer { close(daemon.ready) }
        var answer = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let got = Syscall.retrying { read(daemon.ready, &buffer, buffer.count) }
            if got <= 0 { break }
            answer += buffer[0..<got]
        }
        var lines = String(decoding: answer, as: UTF8.self).split(separator: "\n").map(String.init)
        let message = lines.popLast() ?? ""
        for line in lines { warn(line) }
        if message == "ready" { return nil }
        var status: Int32 = 0
        waitpid(daemon.pid, &status, 0)
        return (message.isEmpty ? "inkyfs: the daemon stopped during startup" : message) + "\n  log: \(logPath)"
    }

    /// Spawns the daemon: `log` its stdout and stderr (nil: /dev/null, until it opens the log),
    /// `plan` already in its fd 4 (nil: written later through `Started.plan`; no pipe for it, no
    /// start). A plan that does not fit the pipe now is not handed: the daemon parses its command line.
    private static func start(arguments: [String], log: String?, plan: [UInt8]?) throws(Errno) -> Started {
        let handover: (read: Int32, write: Int32)?
        if let plan { handover = filledPipe(plan) } else { handover = try ProcessSpawner.pipe() }
        defer { if let handover { close(handover.read) } }
        let closeHandover = { if let handover, handover.write >= 0 { close(handover.write) } }
        let ready: (read: Int32, write: Int32)
        do throws(Errno) { ready = try ProcessSpawner.pipe() } catch {
            closeHandover()
            throw error
        }
        defer { close(ready.write) }
        var files: [ProcessSpawner.FileAction] = [
            .duplicate(ready.write, as: 3),
            .open("/dev/null", flags: O_RDONLY, as: 0),
            .open(log ?? "/dev/null", flags: O_WRONLY | O_CREAT | O_APPEND, as: 1),
            .alias(of: 1, as: 2),
        ]
        var daemonArguments: [String] = arguments + ["--ready-fd", "3"]
        if let handover {
            files.append(.duplicate(handover.read, as: 4))
            daemonArguments += ["--plan-fd", "4"]
        }
        do throws(Errno) {
            let pid = try ProcessSpawner.spawn(ProcessSpawner.ownExecutable, daemonArguments, files: files, newSession: true,
                                               environment: ProcessHardening.daemonEnvironment)
            return Started(pid: pid, ready: ready.read, plan: handover?.write ?? -1)
        } catch {
            close(ready.read)
            closeHandover()
            throw error
        }
    }

    /// A pipe holding `bytes`, its writing end closed (-1): the daemon reads it at once, whole.
    /// nil when the pipe cannot take them all now (a pipe is 4 KiB for a user who has many).
    private static func filledPipe(_ bytes: [UInt8]) -> (read: Int32, write: Int32)? {
        guard let pipe = try? ProcessSpawner.pipe() else { return nil }
        defer { close(pipe.write) }
        _ = fcntl(pipe.write, F_SETFL, O_NONBLOCK)
        let written = bytes.withUnsafeBytes { buffer in Syscall.retrying { write(pipe.write, buffer.baseAddress, buffer.count) } }
        guard written == bytes.count else {
            close(pipe.read)
            return nil
        }
        return (pipe.read, -1)
    }

    private static func warn(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}

/// The daemon's side of the launcher's pipe (`--ready-fd`): warnings as lines while starting,
/// then one last line, "ready" or why it failed, after which the pipe is closed. In the
/// foreground (no pipe) the same words go to stderr, "ready" excepted.
public final class ReadyChannel: Sendable {
    /// The pipe until the last line went out; a warning is written holding it, so none can
    /// follow the last line or go to a closed descriptor.
    private let descriptor: Mutex<Int32?>

    public init(descriptor: Int32?) { self.descriptor = Mutex(descriptor) }

    /// A warning the person mounting must hear; the launcher prints it on stderr.
    public func warn(_ message: String) {
        descriptor.withLock { descriptor in
            guard let descriptor else { return }
            let line = Array((message + "\n").utf8)
            _ = line.withUnsafeBytes { bytes in Syscall.retrying { write(descriptor, bytes.baseAddress, bytes.count) } }
        }
    }

    /// The mount is up: the launcher returns 0.
    public func ready() { finish("ready") }

    /// Startup failed: the launcher prints `message` and fails.
    public func fail(_ message: String) { finish(message) }

    private func finish(_ message: String) {
        let descriptor = descriptor.withLock { descriptor -> Int32? in
            defer { descriptor = nil }
            return descriptor
        }
        guard let descriptor else {
            if message != "ready" { FileHandle.standardError.write(Data((message + "\n").utf8)) }
            return
        }
        let line = Array((message + "\n").utf8)
        _ = line.withUnsafeBytes { bytes in Syscall.retrying { write(descriptor, bytes.baseAddress, bytes.count) } }
        close(descriptor)
    }
}
