import Foundation

/// What makes a file "the same file" for caching: size, modification time (ns) and inode.
/// Any change means cached listings and pages of it are stale and must never be served.
public struct FileIdentity: Sendable, Hashable, Codable {
    public var size: Int64
    public var modifiedNanoseconds: Int64
    public var inode: UInt64

    public init(size: Int64, modifiedNanoseconds: Int64, inode: UInt64) {
        self.size = size
        self.modifiedNanoseconds = modifiedNanoseconds
        self.inode = inode
    }

    /// The identity of `path` now (following symlinks), or the errno why not.
    public static func of(_ path: String) -> Result<FileIdentity, Errno> {
        var info = stat()
        guard stat(path, &info) == 0 else { return .failure(Errno.current) }
        return .success(FileIdentity(info))
    }

    public init(_ info: stat) {
        size = Int64(info.st_size)
        modifiedNanoseconds = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        inode = UInt64(info.st_ino)
    }
}
