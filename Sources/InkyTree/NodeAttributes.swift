import Foundation

/// What `stat` shows for a node; the FUSE adapter turns it into `struct stat`.
public struct NodeAttributes: Sendable, Equatable {
    public enum Kind: Sendable, Equatable { case directory, regularFile, symlink }

    /// The node's number: 0 from the library core, which numbers nothing; the tree the kernel
    /// asks (`NumberedLibrary`, a view) fills it.
    public var id: NodeID
    public var kind: Kind
    public var size: Int64
    /// Permission bits only: the source's without write (`SourcePermissions`), 0777 for links;
    /// the vault's 0500 and 0400 and `Continue Reading/`'s 0700 (for `rm` of its links), the
    /// mounting user's.
    public var permissions: UInt32
    public var modifiedNanoseconds: Int64
    /// Seconds the kernel may keep this name → node mapping.
    public var entryTimeout: Double
    /// Seconds the kernel may keep these attributes.
    public var attributeTimeout: Double
    /// st_nlink: for a directory 2 plus its subdirectories (their `..`), as POSIX tools such
    /// as find's leaf optimisation expect; 1 for anything else.
    public var linkCount: Int = 1
    /// The entry's generation (`fuse_entry_param.generation`): with the number, what the kernel
    /// tells inodes apart by. A node whose number can come back for other content (a page of a
    /// changed archive) gives a new one, so the kernel drops the old inode and its cached bytes.
    public var generation: UInt64 = 1
    /// st_uid and st_gid: the source file's, the mounting user's for what has no source.
    public var owner: UInt32
    public var group: UInt32

    public init(id: NodeID = 0, kind: Kind, size: Int64, permissions: UInt32, modifiedNanoseconds: Int64,
                entryTimeout: Double, attributeTimeout: Double, linkCount: Int = 1,
                owner: UInt32 = getuid(), group: UInt32 = getgid()) {
        self.id = id
        self.kind = kind
        self.size = size
        self.permissions = permissions
        self.modifiedNanoseconds = modifiedNanoseconds
        self.entryTimeout = entryTimeout
        self.attributeTimeout = attributeTimeout
        self.linkCount = linkCount
        self.owner = owner
        self.group = group
    }
}

/// One line of a directory listing.
public struct DirectoryEntry: Sendable, Equatable {
    public var name: String
    public var id: NodeID
    public var kind: NodeAttributes.Kind
    /// The entry's attributes when listing it already told them (a comic's pages): readdirplus
    /// hands them over without asking again.
    public var attributes: NodeAttributes?

    public init(name: String, id: NodeID, kind: NodeAttributes.Kind, attributes: NodeAttributes? = nil) {
        self.name = name
        self.id = id
        self.kind = kind
        self.attributes = attributes
    }
}

/// What `open` hands the adapter: pages are immutable per generation, so the kernel may keep
/// their cache across opens; passthrough files are read through a real descriptor.
public struct OpenedFile: Sendable, Equatable {
    public var keepCache: Bool
    public var descriptor: Int32?
    /// Read past the kernel's page cache: each read(2) reaches the daemon whole (up to 1 MiB),
    /// not cut into 128 KiB readahead, and nothing read stays in the kernel. A vault's files.
    public var directIO: Bool

    public init(keepCache: Bool, descriptor: Int32?, directIO: Bool = false) {
        self.keepCache = keepCache
        self.descriptor = descriptor
        self.directIO = directIO
    }
}
