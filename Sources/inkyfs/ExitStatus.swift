import ArgumentParser
import Foundation

/// How every inkyfs command ends: the one list of exit statuses, shown in `inkyfs --help` and so
/// in the man page. A script tells "nothing was done, fix the setup" from "some comic failed".
enum ExitStatus: Int32, CaseIterable {
    case ok = 0
    case failed = 1
    case refused = 2
    case mountFailed = 3
    case notMounted = 4
    case busy = 5
    case usage = 64

    var meaning: String {
        switch self {
        case .ok: "done"
        case .failed: "done, but something checked or read failed: a doctor check, a comic, one of the files named"
        case .refused: "nothing was done: the mountpoint, library, vault or password is not right (the message says how to fix it)"
        case .mountFailed: "libfuse or the daemon could not mount (the message and the log say why)"
        case .notMounted: "no inkyfs mount there, or none running"
        case .busy: "the mount is in use (unmount names the processes; --lazy detaches anyway)"
        case .usage: "the command line is wrong: unknown command or option, or a bad value (the usage is printed)"
        }
    }

    /// The table in `inkyfs --help`.
    static var help: String {
        "Exit status:\n" + allCases.map { "  \(String($0.rawValue).padding(toLength: 4, withPad: " ", startingAt: 0))\($0.meaning)" }
            .joined(separator: "\n")
    }
}

/// A runtime error (not a mistake on the command line): said on one line after "inkyfs: ",
/// without the usage, and ending the command with its own status.
struct CommandFailure: Error, CustomStringConvertible {
    let status: ExitStatus
    let message: String

    init(_ status: ExitStatus, _ message: String) {
        self.status = status
        self.message = message
    }

    var description: String { message }
}
