import Foundation

/// Where one of the executables `inkyfs` starts is: `inkyfs-worker`, which holds every parser and
/// image library, and `inkyfs-serve`, which holds the HTTP server. Each is its own executable so
/// that the CLI and the daemon (which holds the vault's master key) map none of their libraries
/// and start fast. Installed as OpenSSH installs its helpers: `PREFIX/bin/inkyfs` beside
/// `PREFIX/libexec/inkyfs/NAME`; in a build folder they all sit side by side.
public struct HelperExecutable: Sendable {
    /// The file's name: `inkyfs-worker`.
    public let name: String
    /// The environment variable that names another file (tests, unusual layouts): `INKYFS_WORKER`.
    public let variable: String

    public static let worker = HelperExecutable(name: "inkyfs-worker", variable: "INKYFS_WORKER")
    public static let serve = HelperExecutable(name: "inkyfs-serve", variable: "INKYFS_SERVE")

    /// The variable's value when set, else the first candidate that exists, else the installed
    /// place (so a failure to start it names where it looked).
    public var path: String {
        if let chosen = ProcessInfo.processInfo.environment[variable], !chosen.isEmpty { return chosen }
        let found = candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
        return found ?? candidates[0]
    }

    /// Beside the running executable: `../libexec/inkyfs/` first (an installed tree), then its own
    /// folder (a build folder, or a helper that runs from libexec/inkyfs/ itself).
    public var candidates: [String] {
        let folder = URL(fileURLWithPath: Self.running).deletingLastPathComponent()
        return [folder.deletingLastPathComponent().appendingPathComponent("libexec/inkyfs/\(name)").standardizedFileURL.path,
                folder.appendingPathComponent(name).path]
    }

    /// The running executable, links resolved: what the daemon re-executes, and what helpers are found beside.
    public static var running: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }
}
