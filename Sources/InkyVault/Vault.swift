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
        let lock = try VaultDirectoryLock(directory: directory)
        defer { withExtendedLifetime(lock) {} }

        let masterKey: SecureBytes
        do { masterKey = try environment.randomness.secureBytes(count: AESGCM.keyLength) } catch { throw .crypto(error) }
        let keys = try VaultKeys(masterKey: masterKey)
        let keyFile = try VaultKeyFile.wrap(masterKey: masterKey, password: password, kdf: kdf,
                                            randomness: environment.randomness)
        let manifest = try VaultManifestFile.seal(VaultManifest(), generation: 1, key: keys.manifestKey,
                                                  randomness: environment.randomness)
        try DurableFiles.makeDirectory(paths.objects)
        try DurableFiles.makeDirectory(paths.orphans)
        // vault.key last: until it exists the directory is not a vault, so a crash part way
        // through leaves something `unlock` calls "not a vault" rather than a broken one.
        // Both .prev copies start identical to the main files: a backup from day one.
        try DurableFiles.replace(paths.manifest, with: manifest)
        try DurableFiles.replace(paths.previousManifest, with: manifest)
        let keyFileBytes = try keyFile.encoded()
        try DurableFiles.replace(paths.previousKeyFile, with: keyFileBytes)
        try DurableFiles.replace(paths.keyFile, with: keyFileBytes)
    }

    static func unlock(
        at directory: String, password: SecureBytes, environment: VaultEnvironment, acceptRollback: Bool = false
    ) throws(VaultError) -> UnlockedVault {
        guard DurableFiles.isDirectory(directory) else { throw .notAVault(path: directory) }
        let paths = VaultPaths(root: directory)
        let lock = try VaultDirectoryLock(directory: directory)
        let unlocked = try VaultKeyFileStore.unlock(paths, password: password)
        let keys = try VaultKeys(masterKey: unlocked.masterKey)
        let loaded = try VaultManifestStore.load(paths, key: keys.manifestKey)
        // Before anything is moved: a refused rollback leaves the vault exactly as found.
        let rollback = try RollbackCheck(paths, loaded: loaded, keys: keys, records: environment.rollbackRecords,
                                         accept: acceptRollback)
        if unlocked.fallbackReason == nil { try VaultKeyFileStore.retireStalePrevious(paths, current: unlocked.image) }
        try DurableFiles.makeDirectory(paths.objects)
        try DurableFiles.makeDirectory(paths.orphans)
        let moved = try sweepOrphans(paths, known: Set(loaded.manifest.entries.map(\.name)))
        let missing = loaded.manifest.entries.map(\.name).filter { !DurableFiles.exists(paths.object(named: $0)) }
        let report = VaultUnlockReport(keyFileFallbackReason: unlocked.fallbackReason,
                                       manifestFallbackReason: loaded.fallbackReason,
                                       movedToOrphans: moved, missingObjects: missing,
                                       acceptedRollback: rollback.accepted, rollbackRecordProblem: rollback.recordProblem)
        return UnlockedVault(paths: paths, keys: keys, keyFileImage: unlocked.image, loaded: loaded,
                             report: report, lock: lock, environment: environment, rollbackRecordID: rollback.id)
    }

    /// The manifest just loaded against the newest one recorded outside the vault: refused if
    /// older (unless accepted), and recorded when newer, so the record only moves forward.
    private struct RollbackCheck {
        let id: String
        var accepted: String?
        var recordProblem: String?

        init(_ paths: VaultPaths, loaded: VaultManifestStore.Loaded, keys: VaultKeys, records: VaultRollbackRecords,
             accept: Bool) throws(VaultError) {
            id = try keys.rollbackRecordID()
            let found = try VaultRollbackRecord(generation: loaded.generation, manifest: loaded.image)
            let seen = records.load(id: id)
            if let seen, let refusal = seen.refusal(of: found) {
                let detail = loaded.fallbackReason.map { refusal + " (manifest.bin could not be used: \($0))" } ?? refusal
                guard accept else { throw .manifestRolledBack(path: paths.manifest, detail: detail) }
                accepted = detail
            }
            guard seen != found else { return }
            do throws(VaultError) { try records.store(found, id: id) } catch { recordProblem = "\(error)" }
        }
    }

    /// Moves everything in `objects/` that the manifest does not list into `orphans/`,
    /// renaming on collision; never deletes. An orphan is an add interrupted between
    /// writing its object and saving the manifest, or an object a fallback manifest
    /// predates: its content is intact and can be re-added by hand.
    private static func sweepOrphans(_ paths: VaultPaths, known: Set<String>) throws(VaultError) -> [String] {
        var moved: [String] = []
        for name in try DurableFiles.names(in: paths.objects).sorted() where !known.contains(name) {
            let target = DisplayPath.unique(name) { DurableFiles.exists(DurableFiles.join(paths.orphans, $0)) }
            try DurableFiles.publishWithoutReplacing(paths.object(named: name),
                                                     as: DurableFiles.join(paths.orphans, target))
            moved.append(name)
        }
        if !moved.isEmpty { try DurableFiles.syncDirectory(paths.objects) }
        return moved
    }
}
