import InkyCore

/// Every way a vault operation can fail, one case per thing the caller (the CLI, the
/// daemon) would tell a person differently. Paths are included so messages can name the
/// file; no case ever carries key material or decrypted content.
public enum VaultError: Error, Equatable, Sendable {
    /// The key file is intact but the password does not unwrap the master key.
    /// Reported after exactly one key derivation.
    case wrongPassword
    /// `vault.key` (and, if it was tried, `vault.key.prev`) is not a readable key file:
    /// wrong size, checksum mismatch, unknown magic, KDF parameters beyond the safety caps.
    case damagedKeyFile(path: String, detail: String)
    /// Neither `manifest.bin` nor `manifest.bin.prev` authenticates and parses.
    case damagedManifest(path: String, detail: String)
    /// An object file is malformed: header fields, or a size that disagrees with its header.
    case damagedObject(path: String, detail: String)
    /// An object chunk failed AES-GCM authentication (tampered, reordered, swapped, or the
    /// wrong key). No byte of that chunk's plaintext was returned.
    case objectNotAuthentic(path: String, chunk: UInt64)
    /// The file was written by a newer format version this build does not know.
    case unsupportedFormatVersion(path: String, version: UInt16)
    /// KDF parameters requested for a new key file are outside the supported range.
    case invalidKDFParameters(String)
    /// The directory holds no `vault.key` or `vault.key.prev`.
    case notAVault(path: String)
    /// `create` was pointed at a directory that is not empty.
    case vaultAlreadyExists(path: String)
    /// Another process (or another `UnlockedVault` in this one) has this vault unlocked.
    case vaultBusy(path: String)
    /// The vault folder, `objects/` or `orphans/` is a symlink, not ours, or writable by others:
    /// refused before anything in it is read or moved.
    case unsafeFolder(path: String, detail: String)
    /// The vault was locked; its keys are gone.
    case locked
    /// No manifest entry has this object name.
    case noSuchEntry(name: String)
    /// A display path that cannot become a path inside the mounted `Vault/` tree.
    case invalidDisplayPath(String, reason: String)
    /// The file being added changed size while it was read (or is not a regular file).
    case sourceChanged(path: String, detail: String)
    /// The comic is in the vault (as `displayPath`) but its original could not be deleted, or was
    /// no longer the file encrypted: it is still there, in plaintext.
    case originalNotDeleted(path: String, displayPath: String, detail: String)
    /// Writer was given more or fewer plaintext bytes than it was told to expect.
    case plaintextSizeMismatch(expected: UInt64, actual: UInt64)
    /// A freshly written object or extracted file does not hash to what it should.
    case verificationFailed(path: String, detail: String)
    /// An object's header does not belong to the manifest entry that names it.
    case objectDoesNotMatchManifest(name: String, detail: String)
    /// The manifest is older than the newest one this user has seen of this vault (recorded
    /// outside it): an old copy put back, or a damaged manifest whose `.prev` is older.
    /// Nothing was changed; `acceptRollback` opens it anyway.
    case manifestRolledBack(path: String, detail: String)
    /// A manifest save would not move the generation counter forward (a bug, never data).
    case generationNotIncreasing(current: UInt64, attempted: UInt64)
    /// The operating system refused a file operation.
    case io(path: String, operation: String, errno: Errno)
    /// A cryptographic primitive failed for a reason other than authentication.
    case crypto(CryptoError)
}

extension VaultError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .wrongPassword:
            "wrong password"
        case .damagedKeyFile(let path, let detail):
            "\(path): damaged key file: \(detail)"
        case .damagedManifest(let path, let detail):
            "\(path): damaged manifest: \(detail)"
        case .damagedObject(let path, let detail):
            "\(path): damaged vault object: \(detail)"
        case .objectNotAuthentic(let path, let chunk):
            "\(path): chunk \(chunk) failed authentication (tampered, reordered or wrong key)"
        case .unsupportedFormatVersion(let path, let version):
            "\(path): format version \(version) is newer than this inkyfs understands"
        case .invalidKDFParameters(let detail):
            "invalid key derivation parameters: \(detail)"
        case .notAVault(let path):
            "\(path): not a vault (no vault.key)"
        case .vaultAlreadyExists(let path):
            "\(path): not empty; a new vault needs an empty or missing directory"
        case .vaultBusy(let path):
            "\(path): the vault is unlocked by another process"
        case .unsafeFolder(let path, let detail):
            "\(path): refusing an unsafe vault folder: \(detail)"
        case .locked:
            "the vault is locked"
        case .noSuchEntry(let name):
            "no vault entry named \(name)"
        case .invalidDisplayPath(let path, let reason):
            "invalid vault path '\(path)': \(reason)"
        case .sourceChanged(let path, let detail):
            "\(path): \(detail)"
        case .originalNotDeleted(let path, let displayPath, let detail):
            "\(path): added to the vault as \(displayPath), but the original was NOT deleted: \(detail)"
        case .plaintextSizeMismatch(let expected, let actual):
            "expected \(expected) plaintext bytes, got \(actual)"
        case .verificationFailed(let path, let detail):
            "\(path): verification failed: \(detail)"
        case .objectDoesNotMatchManifest(let name, let detail):
            "object \(name) does not match its manifest entry: \(detail)"
        case .manifestRolledBack(let path, let detail):
            "\(path): refusing an older vault: \(detail). Someone may have put back an old copy of the vault,"
                + " hiding the comics added since. Nothing was changed. If you restored a backup on purpose,"
                + " accept it with --accept-rollback (comics added since then are kept in orphans/)"
        case .generationNotIncreasing(let current, let attempted):
            "manifest generation would go from \(current) to \(attempted)"
        case .io(let path, let operation, let errno):
            "\(path): \(operation): \(errno)"
        case .crypto(let error):
            error.description
        }
    }
}
