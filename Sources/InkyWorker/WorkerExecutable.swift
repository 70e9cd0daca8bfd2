import Foundation

/// Where `inkyfs-worker` is: the executable that holds every parser and image library, so that
/// the CLI and the daemon (which holds the vault's master key) map none of them and start fast.
/// Installed as OpenSSH installs its helpers: `PREFIX/bin/inkyfs` beside
/// `PREFIX/libexec/inkyfs/inkyfs-worker`; in a build folder the two sit side by side.
public enum WorkerExecutable {
    public static let name = "inkyfs-worker"

    /// `$INKYFS_WORKER` when set (tests, unusual layouts), else the first candidate that exists,
    /// else the installed place (so a spawn failure names where it looked).
    public static var path: String {
        if let chosen = ProcessInfo.processInfo.environment["INKYFS_WORKER"], !chosen.isEmpty { return chosen }
        let found = candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
        return found ?? candidates[0]
    }

    /// Beside the running `inkyfs`: `../libexec/inkyfs/` first (an installed tree), then its own folder.
    public static var candidates: [String] {
        let folder = URL(fileURLWithPath: ProcessSpawner.ownExecutable).deletingLastPathComponent()
        return [folder.deletingLastPathComponent().appendingPathComponent("libexec/inkyfs/\(name)").standardizedFileURL.path,
                folder.appendingPathComponent(name).path]
    }
}
