import Foundation

/// Doctor checks of the folders inkyfs keeps files in (state, vault): whether inkyfs can
/// create or write them, and whether a private one is private.
public enum DirectoryHealth {
    /// A folder inkyfs writes to, created on first use: fine if it is a writable folder, or
    /// missing under a writable folder.
    public static func writable(_ name: String, _ path: String, purpose: String) -> HealthCheck {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                return HealthCheck(name, .failed, "\(path) is a file, not a folder (\(purpose))", fix: "move it away: mv \(path) \(path).bak")
            }
            guard access(path, W_OK | X_OK) == 0 else {
                return HealthCheck(name, .failed, "\(path) is not writable (\(purpose))", fix: "sudo chown -R $(id -u):$(id -g) \(path)")
            }
            return HealthCheck(name, .ok, "\(path) (\(purpose))")
        }
        var ancestor = (path as NSString).deletingLastPathComponent
        while !ancestor.isEmpty && ancestor != "/" && !FileManager.default.fileExists(atPath: ancestor) {
            ancestor = (ancestor as NSString).deletingLastPathComponent
        }
        guard access(ancestor.isEmpty ? "/" : ancestor, W_OK | X_OK) == 0 else {
            return HealthCheck(name, .failed, "\(path) does not exist and \(ancestor) is not writable (\(purpose))",
                               fix: "sudo install -d -o $(id -u) -g $(id -g) \(path)")
        }
        return HealthCheck(name, .ok, "\(path) (\(purpose); created on first use)")
    }

    /// A folder only its owner may read (the vault): must be ours and closed to others, and so
    /// must each of `subfolders` that exists; a symlink anywhere is refused, as unlocking does.
    /// Writable by others fails (unlock refuses it); readable by others is a warning.
    public static func privateFolder(_ name: String, _ path: String, missing: String, subfolders: [String] = []) -> HealthCheck {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return HealthCheck(name, .ok, "\(path): \(missing)") }
            return HealthCheck(name, .failed, "cannot look at \(path): \(String(cString: strerror(errno)))",
                               fix: "sudo chown -R $(id -u):$(id -g) \(path)")
        }
        if let failed = refusal(name, path, info) { return failed }
        for subfolder in subfolders {
            let inner = path + "/" + subfolder
            var innerInfo = stat()
            guard lstat(inner, &innerInfo) == 0 else { continue }
            if let failed = refusal(name, inner, innerInfo) { return failed }
        }
        let mode = info.st_mode & 0o777
        guard mode & 0o077 == 0 else {
            return HealthCheck(name, .warning, "\(path) is open to others (mode \(String(mode, radix: 8)))", fix: "chmod 700 \(path)")
        }
        return HealthCheck(name, .ok, "\(path) (mode \(String(mode, radix: 8)))")
    }

    /// Why unlocking would refuse this folder (a symlink, not ours, writable by others), as a failed check.
    private static func refusal(_ name: String, _ path: String, _ info: stat) -> HealthCheck? {
        if info.st_mode & S_IFMT == S_IFLNK {
            return HealthCheck(name, .failed, "\(path) is a symbolic link; a vault folder is never followed through one",
                               fix: "replace it with the folder itself: mv \(path) \(path).link && mkdir -m 700 \(path)")
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            return HealthCheck(name, .failed, "\(path) is not a folder", fix: "move it away: mv \(path) \(path).bak")
        }
        guard info.st_uid == geteuid() else {
            return HealthCheck(name, .failed, "\(path) belongs to uid \(info.st_uid), not to you (\(geteuid()))",
                               fix: "sudo chown -R $(id -u):$(id -g) \(path)")
        }
        let mode = info.st_mode & 0o777
        guard mode & 0o022 == 0 else {
            return HealthCheck(name, .failed, "\(path) is writable by others (mode \(String(mode, radix: 8))); unlocking refuses it",
                               fix: "chmod 700 \(path)")
        }
        return nil
    }
}
