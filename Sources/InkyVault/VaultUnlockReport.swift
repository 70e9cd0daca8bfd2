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
    /// Set when an older manifest than the newest one recorded was accepted on request
    /// (`acceptRollback`): what was accepted.
    public internal(set) var acceptedRollback: String? = nil
    /// Set when the newest-manifest record outside the vault could not be written: the
    /// rollback check then has nothing to compare with next time.
    public internal(set) var rollbackRecordProblem: String? = nil
    /// Names in `objects/` this program never writes (or not regular files): left untouched,
    /// neither read nor moved.
    public internal(set) var foreignInObjects: [String] = []
    /// Orphans left in `objects/` because this filesystem cannot hard-link (never renamed by path).
    public internal(set) var unmovableOrphans: [String] = []
    /// Set when the vault folder is readable by group or others: the warning, with its fix (a
    /// fact about the folder, not something unlocking found or repaired: not in `isClean`).
    public internal(set) var looseFolder: String? = nil
    /// Set on the first unlock of this vault by this user on this machine (no rollback record
    /// yet): its generation and newest comic, since no older copy can be refused without a record.
    /// A fact, not a repair: not in `isClean`.
    public internal(set) var firstUnlockHere: String? = nil

    public var isClean: Bool {
        keyFileFallbackReason == nil && manifestFallbackReason == nil && movedToOrphans.isEmpty && missingObjects.isEmpty
            && acceptedRollback == nil && rollbackRecordProblem == nil && foreignInObjects.isEmpty
            && unmovableOrphans.isEmpty
    }

    /// One line per finding, for a person: what happened and where the comics are.
    /// "1 object", "3 objects".
    private static func counted(_ items: [String], _ noun: String) -> String {
        "\(items.count) \(noun)\(items.count == 1 ? "" : "s")"
    }

    public var lines: [String] {
        var lines: [String] = []
        if let reason = keyFileFallbackReason { lines.append("vault.key.prev was used: \(reason)") }
        if let reason = manifestFallbackReason { lines.append("manifest.bin.prev was used: \(reason)") }
        if let accepted = acceptedRollback { lines.append("accepted an older vault: \(accepted)") }
        if !movedToOrphans.isEmpty {
            lines.append(Self.counted(movedToOrphans, "object") + " the manifest does not list"
                         + " moved to orphans/ (kept, never deleted): \(movedToOrphans.joined(separator: ", "))")
        }
        if !missingObjects.isEmpty {
            lines.append(Self.counted(missingObjects, "comic") + " without an object in objects/:"
                         + " \(missingObjects.joined(separator: ", "))")
        }
        if !foreignInObjects.isEmpty {
            lines.append(Self.counted(foreignInObjects, "name") + " in objects/ that inkyfs never"
                         + " writes, left untouched: \(foreignInObjects.map(DisplayPath.escaped).joined(separator: ", "))")
        }
        if !unmovableOrphans.isEmpty {
            lines.append(Self.counted(unmovableOrphans, "object") + " the manifest does not list"
                         + " left in objects/ (this filesystem has no hard links): \(unmovableOrphans.joined(separator: ", "))")
        }
        if let loose = looseFolder { lines.append(loose) }
        if let first = firstUnlockHere { lines.append(first) }
        if let problem = rollbackRecordProblem { lines.append("cannot record the manifest seen (rollback check): \(problem)") }
        return lines
    }
}
