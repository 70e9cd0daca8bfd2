import ArgumentParser
import Foundation

/// How every inkyfs command ends: the one list of exit statuses, shown in `inkyfs --help` and so
/// in the man page. Shared with `inkyfs-serve`, which ends `inkyfs serve` by the same list. A script tells "nothing was done, fix the setup" from "some comic failed".
public enum ExitStatus: Int32, CaseIterable, Sendable {
    case ok = 0
    case failed = 1
    case refused = 2
    case mountFailed = 3
    case notMounted = 4
    case busy = 5
    case usage = 64

    public var meaning: String {
        switch self {
        case .ok: "done"
        case .failed: "done, but a doctor check, a comic or a file named failed"
        case .refused: "nothing done: the mountpoint, library, vault or password is not right"
        case .mountFailed: "libfuse or the daemon could not mount (the message and the log say why)"
        case .notMounted: "no inkyfs mount there, or none running"
        case .busy: "the mount is in use (unmount names the programs; --lazy detaches it)"
        case .usage: "a wrong command line: unknown command or option, bad value (usage shown)"
        }
    }

    /// The table in `inkyfs --help`: each line fits 80 columns, which is where ArgumentParser wraps.
    public static var help: String {
        "Exit status:\n" + allCases.map { "  \(String($0.rawValue).padding(toLength: 4, withPad: " ", startingAt: 0))\($0.meaning)" }
            .joined(separator: "\n")
    }
}

/// A runtime error (not a mistake on the command line): said on one line after "inkyfs: ",
/// without the usage, and ending the command with its own status.
public struct CommandFailure: Error, CustomStringConvertible {
    public let status: ExitStatus
    public let message: String

    public init(_ status: ExitStatus, _ message: String) {
        self.status = status
        self.message = message
    }

    public var description: String { message }
}

extension ParsableCommand {
    /// Parses `arguments` as this root command's and runs what they name. A `CommandFailure` ends
    /// as one line after "inkyfs: " with its own status; anything else as ArgumentParser ends it
    /// (a usage error with the usage). How `inkyfs` and `inkyfs-serve` both end.
    public static func parseAndRun(_ arguments: [String]? = nil) -> Never {
        let command: any ParsableCommand
        do { command = try parseAsRoot(arguments) } catch { exit(withError: error) }
        run(command)
    }

    /// Runs `command`, parsed already, and ends as `parseAndRun` does.
    public static func run(_ command: any ParsableCommand) -> Never {
        var command = command
        do {
            try command.run()
            Foundation.exit(ExitStatus.ok.rawValue)
        } catch let failure as CommandFailure {
            FileHandle.standardError.write(Data("inkyfs: \(failure.message)\n".utf8))
            Foundation.exit(failure.status.rawValue)
        } catch {
            exit(withError: error)
        }
    }
}
