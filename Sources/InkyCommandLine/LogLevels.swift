import InkyCore
import Logging

extension Logger {
    /// A daemon's line (the mount's, the server's) at its own level: errors as errors, a library's chatter as debug (not
    /// written at the default level, info).
    /// `file`, `function`, `line`: the caller's, so the line names its module as a `Logger` call there would.
    public func write(_ line: LogLine, file: String = #fileID, function: String = #function, line number: UInt = #line) {
        let level: Logger.Level = switch line.level {
        case .debug: .debug
        case .info: .info
        case .warning: .warning
        case .error: .error
        }
        log(level: level, "\(line.text)", file: file, function: function, line: number)
    }
}
