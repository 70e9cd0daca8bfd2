import Foundation
import InkyCore

/// What a background mount's command hands the daemon it starts, on the daemon's fd 4
/// (`DaemonLauncher`): the log's path when the daemon opens it itself (it was started before
/// that path was known), then the plan, bytes the command line's own code reads (`MountPlanCoding`).
/// The pipe's end is the end: nothing at all means the command ended without mounting.
public enum DaemonHandover {
    public enum Received: Equatable {
        /// The command that started the daemon ended without handing anything: it mounts nothing.
        case nothing
        case plan([UInt8])
    }

    /// `logPath`: nil when the daemon's output goes to the log already.
    static func bytes(logPath: String?, plan: [UInt8]) -> [UInt8] {
        var out = BinaryWriter()
        out.optional(logPath) { $0.string($1) }
        return out.bytes + plan
    }

    /// Reads `descriptor` to its end and closes it; with the log's path in it, this process's
    /// stdout and stderr go to that log from now on (appended). nil when the bytes are not a handover.
    public static func receive(from descriptor: Int32) -> Received? {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let got = Syscall.retrying { read(descriptor, &buffer, buffer.count) }
            if got <= 0 { break }
            bytes += buffer[0..<got]
        }
        close(descriptor)
        if bytes.isEmpty { return .nothing }
        var input = BinaryReader(bytes)
        guard let logPath = input.optional({ $0.string() }) else { return nil }
        if let logPath {
            let log = open(logPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
            if log >= 0 {
                dup2(log, STDOUT_FILENO)
                dup2(log, STDERR_FILENO)
                close(log)
            }
        }
        return .plan(Array(bytes[(bytes.count - input.remaining)...]))
    }
}
