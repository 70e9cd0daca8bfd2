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

extension FileIdentity {
    /// A number that changes whenever the identity does, the same in every process and every
    /// run (FNV-1a over the three fields; Swift's `hashValue` is seeded per process). Page inode
    /// numbers carry its low bits and the kernel gets all of it as the entry's generation, so
    /// a changed file never shares a cached page with its old self.
    public var generation: UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for value in [UInt64(bitPattern: size), UInt64(bitPattern: modifiedNanoseconds), inode] {
            for shift in stride(from: 0, to: 64, by: 8) {
                hash ^= (value >> UInt64(shift)) & 0xFF
                hash = hash &* 0x0000_0100_0000_01B3
            }
        }
        return hash
    }
}
