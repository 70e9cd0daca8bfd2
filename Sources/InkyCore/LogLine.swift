/// A line for a daemon's log (the mount's, `inkyfs serve`'s) with its level: errors show as errors
/// and a reader of the log (or `grep ' error '`) finds them. A string is an `info` line, so
/// `log("mounted ...")` reads as before.
public struct LogLine: Sendable, Equatable, ExpressibleByStringInterpolation {
    public enum Level: String, Sendable {
        /// What a library's own code printed (libunarr's notes, MuPDF's warnings), heard only
        /// when the log is asked for everything: the comic's own error says what failed.
        case debug
        case info
        /// Something works less well than it could: the watcher cannot see every change, no
        /// control socket.
        case warning
        /// Something failed: a comic cannot be opened, a page read, a cover made.
        case error
    }

    public var level: Level
    public var text: String

    public init(_ level: Level, _ text: String) {
        self.level = level
        self.text = text
    }

    public init(stringLiteral text: String) { self.init(.info, text) }
    public init(stringInterpolation: DefaultStringInterpolation) { self.init(.info, String(stringInterpolation: stringInterpolation)) }

    public static func info(_ text: String) -> LogLine { LogLine(.info, text) }
    public static func warning(_ text: String) -> LogLine { LogLine(.warning, text) }
    public static func error(_ text: String) -> LogLine { LogLine(.error, text) }
}

/// Where a daemon's parts write their log lines.
public typealias LogSink = @Sendable (LogLine) -> Void
