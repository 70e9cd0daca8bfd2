#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Creating and unlocking vaults. See docs/vault-format.md for the files and why.
///
/// Passwords are taken as `SecureBytes`: the CLI reads them into locked memory (e.g.
/// `SecureBytes(count:initializer:)` filled from the terminal) and should pass UTF-8,
/// preferably NFC-normalised, so that the same typed password always gives the same bytes.
/// Whatever buffer the CLI read the password into first is the CLI's to wipe.
///
/// Not done here, on purpose: marking the process non-dumpable (`prctl(PR_SET_DUMPABLE, 0)`)
/// and disabling core dumps is the daemon's job, since it is process-wide.
public enum Vault {
    /// Creates a new vault in `directory` (missing, parents included, or an empty directory), protected by
    /// `password` with `kdf` (default: PBKDF2-HMAC-SHA256, 600,000 iterations).
    public static func create(at directory: String, password: SecureBytes, kdf: VaultKDF = .default) throws(VaultError) {
        try create(at: directory, password: password, kdf: kdf, environment: .system)
    }

    /// Unlocks the vault in `directory`: one password derivation; falls back to
    /// `vault.key.prev` / `manifest.bin.prev` when the main files are damaged; moves
    /// objects the manifest does not know into `orphans/`. The result holds an exclusive
    /// lock on the directory until `lock()` or until it is released.
    ///
    /// A manifest older than the newest one this user has seen of this vault (recorded under
    /// `$XDG_STATE_HOME/inkyfs/vaults`) is refused with `.manifestRolledBack`, touching
    /// nothing, unless `acceptRollback` (a backup restored on purpose): then the report says so.
    public static func unlock(at directory: String, password: SecureBytes,
                              acceptRollback: Bool = false) throws(VaultError) -> UnlockedVault {
        try unlock(at: directory, password: password, environment: .system, acceptRollback: acceptRollback)
    }

    /// Whether the vault in `directory` holds any object file: known without the password (the
    /// files are there to see, their names random), so work that only a vault with comics needs
    /// can start while the password is still being derived. False when unreadable.
    public static func holdsObjects(at directory: String) -> Bool {
        guard let folder = opendir(VaultPaths(root: directory).objects) else { return false }
        defer { closedir(folder) }
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { return true }
        }
        return false
    }

    static func create(
        at directory: String, password: SecureBytes, kdf: VaultKDF, environment: VaultEnvironment
    ) throws(VaultError) {
        if let reason = kdf.outOfBoundsReason { throw .invalidKDFParameters(reason) }
        if DurableFiles.exists(directory) {
            guard DurableFiles.isDirectory(directory), try DurableFiles.names(in: directory).isEmpty else {
                throw .vaultAlreadyExists(path: directory)
            }
        } else {
            // Like `mkdir -p`, so a default such as ~/.local/share/inkyfs/vault just works;
            // every level we create is private to the user.
            try DurableFiles.makeDirectories(directory)
        }
        let paths = VaultPaths(root: directory)
        try makePrivate(directory)
        let lock = try VaultDirectoryLock(directory: directory)
        defer { withExtendedLifetime(lock) {} }

        let masterKey: SecureBytes
        do { masterKey = try environment.randomness.secureBytes(count: AESGCM.keyLength) } catch { throw .crypto(error) }
        let keys = try VaultKeys(masterKey: masterKey)
        let keyFile = try VaultKeyFile.wrap(masterKey: masterKey, password: password, kdf: kdf,
                                            randomness: environment.randomness)
        let manifest = try VaultManifestFile.seal(VaultManifest(), generation: 1, key: keys.manifestKey,
                                                  randomness: environment.randomness)
        _ = try VaultFolder(paths)  // objects/ and orphans/, made 0700 and checked
        // vault.key last: until it exists the directory is not a vault, so a crash part way
        // through leaves something `unlock` calls "not a vault" rather than a broken one.
        // Both .prev copies start identical to the main files: a backup from day one.
        try DurableFiles.replace(paths.manifest, with: manifest)
        try DurableFiles.replace(paths.previousManifest, with: manifest)
        let keyFileBytes = try keyFile.encoded()
        try DurableFiles.replace(paths.previousKeyFile, with: keyFileBytes)
        try DurableFiles.replace(paths.keyFile, with: keyFileBytes)
        // Made here, so seen here: the first unlock is not "the first on this machine".
        if let record = try? VaultRollbackRecord(generation: 1, manifest: manifest), let id = try? keys.rollbackRecordID() {
            try? environment.rollbackRecords.store(record, id: id)
        }
    }

    static func unlock(
        at directory: String, password: SecureBytes, environment: VaultEnvironment, acceptRollback: Bool = false
    ) throws(VaultError) -> UnlockedVault {
        guard DurableFiles.isDirectory(directory) else { throw .notAVault(path: directory) }
        let paths = VaultPaths(root: directory)
        // Checked before the password is tried: nothing is read from a folder others control.
        let folder = try VaultFolder(paths)
        let lock = try VaultDirectoryLock(directory: directory)
        let unlocked = try VaultKeyFileStore.unlock(paths, password: password)
        let keys = try VaultKeys(masterKey: unlocked.masterKey)
        let loaded = try VaultManifestStore.load(paths, key: keys.manifestKey)
        // Before anything is moved: a refused rollback leaves the vault exactly as found.
        let rollback = try RollbackCheck(paths, loaded: loaded, keys: keys, records: environment.rollbackRecords,
                                         accept: acceptRollback)
        if unlocked.fallbackReason == nil { try VaultKeyFileStore.retireStalePrevious(paths, current: unlocked.image) }
        let sweep = try folder.sweepOrphans(known: Set(loaded.manifest.entries.map(\.name)))
        let missing = folder.missing(loaded.manifest.entries.map(\.name))
        var report = VaultUnlockReport(keyFileFallbackReason: unlocked.fallbackReason,
                                       manifestFallbackReason: loaded.fallbackReason,
                                       movedToOrphans: sweep.moved, missingObjects: missing,
                                       acceptedRollback: rollback.accepted, rollbackRecordProblem: rollback.recordProblem)
        report.foreignInObjects = sweep.foreign
        report.unmovableOrphans = sweep.unmovable
        report.looseFolder = folder.looseness
        report.firstUnlockHere = rollback.firstHere
        return UnlockedVault(paths: paths, keys: keys, keyFileImage: unlocked.image, loaded: loaded,
                             report: report, lock: lock, environment: environment, rollbackRecordID: rollback.id)
    }

    /// The manifest just loaded against the newest one recorded outside the vault: refused if
    /// older (unless accepted), and recorded when newer, so the record only moves forward.
    private struct RollbackCheck {
        let id: String
        var accepted: String?
        var recordProblem: String?
        /// Set when no record of this vault existed here: what was found, for the user to judge
        /// (an older copy opened first on a new machine cannot be told from the newest).
        var firstHere: String?

        init(_ paths: VaultPaths, loaded: VaultManifestStore.Loaded, keys: VaultKeys, records: VaultRollbackRecords,
             accept: Bool) throws(VaultError) {
            id = try keys.rollbackRecordID()
            let found = try VaultRollbackRecord(generation: loaded.generation, manifest: loaded.image)
            let seen = records.load(id: id)
            if seen == nil {
                let newest = loaded.manifest.entries.map(\.dateAdded).max()
                firstHere = "first unlock of this vault here: generation \(loaded.generation), "
                    + (newest.map { "newest comic added \(ISO8601DateFormatter().string(from: $0))" } ?? "no comic in it yet")
                    + "; if you expected newer comics, this may be an older copy"
            }
            if let seen, let refusal = seen.refusal(of: found) {
                let detail = loaded.fallbackReason.map { refusal + " (manifest.bin could not be used: \($0))" } ?? refusal
                guard accept else { throw .manifestRolledBack(path: paths.manifest, detail: detail) }
                accepted = detail
            }
            guard seen != found else { return }
            do throws(VaultError) { try records.store(found, id: id) } catch { recordProblem = "\(error)" }
        }
    }

    /// The folder a new vault goes in, made 0700 whatever it was (an empty folder someone made
    /// 0777 stays no such thing), reached without following a symlink and required to be ours.
    private static func makePrivate(_ directory: String) throws(VaultError) {
        let folder: FileDescriptor
        do { folder = try FileDescriptor(path: directory, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW) } catch {
            throw .unsafeFolder(path: directory, detail: "is a symbolic link or not a folder (\(error)); name the folder itself")
        }
        let info = try folder.status()
        guard info.st_uid == geteuid() else {
            throw .unsafeFolder(path: directory, detail: "owned by uid \(info.st_uid), not by this user")
        }
        guard fchmod(folder.raw, 0o700) == 0 else { throw .io(path: directory, operation: "chmod 700", errno: .current) }
    }
}
