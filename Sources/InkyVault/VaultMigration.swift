#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Objects written by format version 1 (unpadded, their exact size visible) are re-encrypted in
/// the current format on the vault's next write (`add`, `remove`): the manifest moves to version 2
/// at its first save by itself, and this does the same for the objects.
///
/// Per object, each step durable before the next: a new object (new random name and file id)
/// written from the old one's plaintext and checked against the manifest's SHA-256, decrypted
/// again and checked, the manifest saved pointing at it, the old object deleted. A crash before
/// the save leaves the new object an orphan; after it, the old one. Nothing is ever lost, and
/// name, path and date stay as they were.
extension UnlockedVault {
    func migrateOldObjects(keys: VaultKeys) throws(VaultError) {
        let entries = try state.withLock { (state) throws(VaultError) -> [VaultEntry] in
            guard state.keys != nil else { throw .locked }
            return state.entries
        }
        for entry in entries {
            let old = paths.object(named: entry.name)
            guard try VaultObjectHeader.read(path: old).version < VaultObjectHeader.formatVersion else { continue }
            let replacement = try reencrypt(entry, keys: keys)
            try state.withLock { (state) throws(VaultError) in
                guard let keys = state.keys else { throw .locked }
                let replaced = state.entries.map { $0.name == entry.name ? replacement : $0 }
                try save(entries: replaced, state: &state, keys: keys)
            }
            if unlink(old) == 0 { try? DurableFiles.syncDirectory(paths.objects) }
        }
    }

    /// A new object holding `entry`'s comic in the current format, verified twice; its entry.
    private func reencrypt(_ entry: VaultEntry, keys: VaultKeys) throws(VaultError) -> VaultEntry {
        let reader = try Self.openReader(for: entry, keys: keys, path: paths.object(named: entry.name))
        let (name, fileID, key, path) = try newObject(keys: keys)
        let writer = try VaultObjectWriter(path: path, key: key, fileID: fileID, plaintextSize: entry.size,
                                           chunkSize: VaultObjectHeader.defaultChunkSize, randomness: environment.randomness)
        let (_, digest) = try Self.decrypt(reader) { (piece) throws(VaultError) in try writer.write(piece) }
        guard HexEncoding.encode(digest) == entry.sha256 else {
            throw .verificationFailed(path: paths.object(named: entry.name), detail: "SHA-256 differs from the manifest's")
        }
        try writer.finish()
        do throws(VaultError) {
            let (size, again) = try Self.digest(of: try VaultObjectReader(path: path, key: key))
            guard size == entry.size, HexEncoding.encode(again) == entry.sha256 else {
                throw .verificationFailed(path: path, detail: "the re-encrypted object differs from the original")
            }
        } catch {
            unlink(path)  // our own unusable output, never user data
            throw error
        }
        return VaultEntry(name: name, fileID: fileID, size: entry.size, sha256: entry.sha256, displayPath: entry.displayPath,
                          originalFileName: entry.originalFileName, dateAdded: entry.dateAdded, originFolder: entry.originFolder)
    }
}
