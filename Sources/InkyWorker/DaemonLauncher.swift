import Foundation
import InkyCore

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
    public static func launch(arguments: [String], logPath: String) -> String? {
        do {
            try FileManager.default.createDirectory(atPath: (logPath as NSString).deletingLastPathComponent,
                                                    withIntermediateDirectories: true)
        } catch {
            return "inkyfs: cannot create the log directory: \(error.localizedDescription)"
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
            child = try ProcessSpawner.spawn(ProcessSpawner.ownExecutable, daemonArguments, files: files, newSession: true)
        } catch {
            return "inkyfs: cannot start the daemon: \(error)"
        }
        defer { close(channel.read) }
        var answer = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let got = read(channel.read, &buffer, buffer.count)
            if got > 0 { answer += buffer[0..<got] } else if got == 0 || errno != EINTR { break }
        }
        let message = String(decoding: answer, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if message == "ready" { return nil }
        var status: Int32 = 0
        waitpid(child, &status, 0)
        return (message.isEmpty ? "inkyfs: the daemon stopped during startup" : message) + "\n  log: \(logPath)"
    }
}
