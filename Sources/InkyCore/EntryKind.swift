/// The kind of an archive member, as the archive declares it.
public enum EntryKind: String, Sendable, Codable {
    case file, directory, symlink, hardlink, device, fifo, socket, other
}

/// One member of an archive, from its header alone (no data read).
public struct ArchiveEntry: Sendable, Equatable, Codable {
    /// Position in the archive's stream order: the handle a backend uses to find it again.
    public var index: Int
    /// The member's path as stored (UTF-8 where the archive says so, else decoded best effort).
    public var path: String
    public var kind: EntryKind
    /// Uncompressed size the header declares; nil when the header does not say.
    public var declaredSize: Int64?
    public var isEncrypted: Bool

    public init(index: Int, path: String, kind: EntryKind, declaredSize: Int64?, isEncrypted: Bool = false) {
        self.index = index
        self.path = path
        self.kind = kind
        self.declaredSize = declaredSize
        self.isEncrypted = isEncrypted
    }
}
