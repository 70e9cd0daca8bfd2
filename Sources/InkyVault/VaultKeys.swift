/// The keys of an unlocked vault, all in locked memory, all derived from one master key.
///
///     master key (32 random bytes, stored only wrapped in vault.key)
///       ├─ HKDF-SHA256(info "inkyfs vault v1: manifest key")          → manifest key
///       └─ HKDF-SHA256(info "inkyfs vault v1: content key")           → content key
///            └─ HKDF-SHA256(info "inkyfs vault v1: object key" ‖ id)  → per-object key
///
/// Why separate keys: the manifest and the objects never share a key, and each object has
/// its own, so the daemon can give an archive worker the key to exactly one comic (a
/// compromised worker learns one comic, not the vault), and nonce collisions across
/// objects are impossible by construction.
///
/// Keys live as long as this object; `UnlockedVault.lock()` drops its reference, and the
/// last reference going away wipes them. Whoever else keeps a `VaultKeys` keeps them alive.
public final class VaultKeys: Sendable {
    static let manifestLabel = Array("inkyfs vault v1: manifest key".utf8)
    static let contentLabel = Array("inkyfs vault v1: content key".utf8)
    static let objectLabel = Array("inkyfs vault v1: object key".utf8)
    static let rollbackRecordLabel = Array("inkyfs vault: rollback record id".utf8)

    let masterKey: SecureBytes
    let manifestKey: SecureBytes
    let contentKey: SecureBytes

    init(masterKey: SecureBytes) throws(VaultError) {
        guard masterKey.count == AESGCM.keyLength else { throw .crypto(.invalidKeyLength) }
        self.masterKey = masterKey
        do {
            manifestKey = try HKDFSHA256.deriveKey(inputKey: masterKey, info: Self.manifestLabel)
            contentKey = try HKDFSHA256.deriveKey(inputKey: masterKey, info: Self.contentLabel)
        } catch {
            throw .crypto(error)
        }
    }

    /// The file name of this vault's rollback record (`VaultRollbackRecords`): 32 hex digits
    /// from the master key, stable wherever the vault is moved, meaningless without the key.
    func rollbackRecordID() throws(VaultError) -> String {
        do {
            let id = try HKDFSHA256.deriveKey(inputKey: masterKey, info: Self.rollbackRecordLabel, length: 16)
            return id.withUnsafeBytes { HexEncoding.encode($0) }
        } catch {
            throw .crypto(error)
        }
    }

    /// The key that encrypts, and alone can decrypt, the object with this file id.
    public func objectKey(fileID: VaultFileID) throws(VaultError) -> SecureBytes {
        try Self.objectKey(contentKey: contentKey, fileID: fileID)
    }

    static func objectKey(contentKey: SecureBytes, fileID: VaultFileID) throws(VaultError) -> SecureBytes {
        do {
            return try HKDFSHA256.deriveKey(inputKey: contentKey, info: objectLabel + fileID.bytes)
        } catch {
            throw .crypto(error)
        }
    }
}
