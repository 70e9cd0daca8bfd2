#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import InkyCore

/// Loading `vault.key` with its fallback, and writing it.
///
/// The rule that keeps users from being locked out: if `vault.key` is missing or damaged
/// (detected by its checksum, before any derivation), `vault.key.prev` is tried. A key
/// file that is intact but rejects the password is NOT a reason to try `.prev`: that would
/// double the cost of a wrong guess, and would let a password replaced by `changePassword`
/// keep working as long as the main file is fine.
enum VaultKeyFileStore {
    struct Unlocked {
        let masterKey: SecureBytes
        /// The exact bytes of the key file that unlocked, to be kept as `.prev` on change.
        let image: [UInt8]
        let file: VaultKeyFile
        let fallbackReason: String?
    }

    private enum Loaded {
        case missing
        case damaged(String)
        case unsupported(UInt16)
        case parsed(VaultKeyFile, [UInt8])
    }

    static func unlock(_ paths: VaultPaths, password: SecureBytes) throws(VaultError) -> Unlocked {
        let main = try load(paths.keyFile)
        let mainProblem: String
        switch main {
        case .parsed(let file, let image):
            return Unlocked(masterKey: try file.unwrap(password: password), image: image, file: file, fallbackReason: nil)
        case .unsupported(let version):
            throw .unsupportedFormatVersion(path: paths.keyFile, version: version)
        case .missing:
            mainProblem = "vault.key is missing"
        case .damaged(let reason):
            mainProblem = "vault.key is damaged: \(reason)"
        }
        switch try load(paths.previousKeyFile) {
        case .parsed(let file, let image):
            do {
                let masterKey = try file.unwrap(password: password)
                return Unlocked(masterKey: masterKey, image: image, file: file, fallbackReason: mainProblem)
            } catch .wrongPassword {
                guard case .damaged = main else { throw .wrongPassword }
                throw .damagedKeyFile(path: paths.keyFile, detail: mainProblem
                    + "; vault.key.prev does not accept this password either (after a password change it"
                    + " still expects the previous password)")
            }
        case .unsupported(let version):
            throw .unsupportedFormatVersion(path: paths.previousKeyFile, version: version)
        case .missing:
            if case .missing = main { throw .notAVault(path: paths.root) }
            throw .damagedKeyFile(path: paths.keyFile, detail: mainProblem + "; there is no vault.key.prev")
        case .damaged(let reason):
            throw .damagedKeyFile(path: paths.keyFile, detail: mainProblem + "; vault.key.prev is damaged too: \(reason)")
        }
    }

    /// Replaces `vault.key` durably, first saving `previous` (the bytes that are known to
    /// work) as `vault.key.prev`, so at every instant at least one of the two opens; then,
    /// once the new `vault.key` is durable, `.prev` becomes a copy of it too, so the old
    /// password's wrapping is gone from the vault (a damaged `vault.key` must not let the
    /// old password back in through `.prev`). Returns the bytes written.
    @discardableResult
    static func write(_ file: VaultKeyFile, previous: [UInt8], paths: VaultPaths) throws(VaultError) -> [UInt8] {
        let bytes = try file.encoded()
        try DurableFiles.replace(paths.previousKeyFile, with: previous)
        CrashPoint.reach("passwd.previous-written")
        try DurableFiles.replace(paths.keyFile, with: bytes)
        CrashPoint.reach("passwd.key-written")
        try DurableFiles.replace(paths.previousKeyFile, with: bytes)
        CrashPoint.reach("passwd.previous-retired")
        return bytes
    }

    /// After an unlock through an intact `vault.key`: a `.prev` that differs from it is the
    /// old wrapping of a password change killed before it retired it; replaced by the
    /// current file, so the old password stops working there too.
    static func retireStalePrevious(_ paths: VaultPaths, current image: [UInt8]) throws(VaultError) {
        let previous = try? DurableFiles.read(paths.previousKeyFile, limit: VaultKeyFile.readLimit)
        guard previous != image else { return }
        try DurableFiles.replace(paths.previousKeyFile, with: image)
    }

    private static func load(_ path: String) throws(VaultError) -> Loaded {
        let bytes: [UInt8]?
        do {
            bytes = try DurableFiles.read(path, limit: VaultKeyFile.readLimit)
        } catch {
            // Too large or not a regular file is damage; anything else (EACCES, EIO) is a
            // problem the user must see as it is, not one to silently route around.
            if case .io(_, _, let code) = error, code.code == EFBIG || code.code == EINVAL {
                return .damaged("\(error)")
            }
            throw error
        }
        guard let bytes else { return .missing }
        switch VaultKeyFile.parse(bytes) {
        case .success(let file): return .parsed(file, bytes)
        case .failure(.damaged(let reason)): return .damaged(reason)
        case .failure(.unsupportedVersion(let version)): return .unsupported(version)
        }
    }
}
