/// What unlocking found and repaired, for the CLI or daemon to tell the user. Unlocking
/// never deletes anything and never fails because of a problem it could work around.
public struct VaultUnlockReport: Sendable, Equatable {
    /// Set when `vault.key` could not be used and `vault.key.prev` unlocked the vault: why.
    public let keyFileFallbackReason: String?
    /// Set when `manifest.bin` could not be used and `manifest.bin.prev` was: why. Comics
    /// added after that previous manifest are then among `movedToOrphans`.
    public let manifestFallbackReason: String?
    /// Names found in `objects/` that the manifest does not list, now in `orphans/`
    /// (left over by an add interrupted before its manifest save, or a stale manifest).
    public let movedToOrphans: [String]
    /// Object names the manifest lists but `objects/` lacks.
    public let missingObjects: [String]

    public var isClean: Bool {
        keyFileFallbackReason == nil && manifestFallbackReason == nil && movedToOrphans.isEmpty && missingObjects.isEmpty
    }
}
