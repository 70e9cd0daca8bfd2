import Foundation
import InkyCore
import Synchronization

/// Backgrounds a mount without fork(): the same command is started again with
/// `--ready-fd 3` in a new session, its output going to the log file, and the caller waits on
/// the pipe until the child says "ready" or why it failed.
public enum DaemonLauncher {
    public static func logDirectory() -> String { XDGDirectories.state }

    public static func logPath(for mountpoint: String) -> String {
        let name = mountpoint.split(separator: "/").joined(separator: "_")
        return "\(logDirectory())/mount-\(name.isEmpty ? "root" : name).log"
    }

    /// Starts `arguments` (our own subcommand line) in the background and waits for its word.
    /// Returns nil once the child reported "ready", else what went wrong.
    /// Lines the daemon sent before "ready" are warnings, printed here on stderr.
    public static func launch(arguments: [String], logPath: String) -> String? {
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
        let channel: (read: Int32, write: Int32)
        let child: pid_t
        do throws(Errno) {
            channel = try ProcessSpawner.pipe()
            defer { close(channel.write) }
            let files: [ProcessSpawner.FileAction] = [
                .duplicate(channel.write, as: 3),
                .open("/dev/null", flags: O_RDONLY, as: 0),
                .open(logPath, flags: O_WRONLY | O_CREAT | O_APPEND, as: 1),
                .duplicate(1, as: 2),
            ]
            let daemonArguments: [String] = arguments + ["--ready-fd", "3"]
            child = try ProcessSpawner.spawn(ProcessSpawner.ownExecutable, daemonArguments, files: files, newSession: true,
                                             environment: ProcessHardening.daemonEnvironment)
        } catch {
            return "inkyfs: cannot start the daemon: \(error)"
        }
        defer { close(channel.read) }
        var answer = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let got = Syscall.retrying { read(channel.read, &buffer, buffer.count) }
            if got <= 0 { break }
            answer += buffer[0..<got]
        }
        var lines = String(decoding: answer, as: UTF8.self).split(separator: "\n").map(String.init)
        let message = lines.popLast() ?? ""
        for line in lines { warn(line) }
        if message == "ready" { return nil }
        var status: Int32 = 0
        waitpid(child, &status, 0)
        return (message.isEmpty ? "inkyfs: the daemon stopped during startup" : message) + "\n  log: \(logPath)"
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
