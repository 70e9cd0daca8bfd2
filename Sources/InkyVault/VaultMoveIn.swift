import Foundation

extension UnlockedVault {
    /// Moves a comic into the vault: encrypted, decrypted again and compared by SHA-256 (`add`),
    /// and only then the original deleted, unless `keepOriginal`. On any failure before that the
    /// original is untouched; a crash between the two leaves both, never neither.
    public func moveIn(file path: String, displayPath: String, keepOriginal: Bool) throws(VaultError) -> VaultEntry {
        let entry = try add(file: path, displayPath: displayPath)
        guard !keepOriginal else { return entry }
        try? FileManager.default.removeItem(atPath: path)
        CrashPoint.reach("add.source-deleted")
        return entry
    }
}
