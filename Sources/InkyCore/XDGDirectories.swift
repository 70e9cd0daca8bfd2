import Foundation

/// The XDG base directories inkyfs keeps its files in, each with its standard fallback:
/// one answer for the daemon's log, the state database, the vault and the control sockets.
public enum XDGDirectories {
    /// `$XDG_STATE_HOME/inkyfs`, else `~/.local/state/inkyfs`: logs, the state database.
    public static var state: String { base("XDG_STATE_HOME", fallback: "/.local/state") + "/inkyfs" }

    /// `$XDG_DATA_HOME/inkyfs`, else `~/.local/share/inkyfs`: the vault.
    public static var data: String { base("XDG_DATA_HOME", fallback: "/.local/share") + "/inkyfs" }

    /// `$XDG_CACHE_HOME/inkyfs`, else `~/.cache/inkyfs`: covers.
    public static var cache: String { base("XDG_CACHE_HOME", fallback: "/.cache") + "/inkyfs" }

    /// `$XDG_RUNTIME_DIR/inkyfs`, else `/tmp/inkyfs-UID/inkyfs`: control sockets.
    public static var runtime: String {
        let environment = ProcessInfo.processInfo.environment
        let runtime = environment["XDG_RUNTIME_DIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp/inkyfs-\(getuid())"
        return runtime + "/inkyfs"
    }

    private static func base(_ variable: String, fallback: String) -> String {
        let environment = ProcessInfo.processInfo.environment
        if let value = environment[variable], !value.isEmpty { return value }
        return (environment["HOME"] ?? NSHomeDirectory()) + fallback
    }
}
