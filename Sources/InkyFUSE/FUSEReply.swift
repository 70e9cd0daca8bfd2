import Foundation
internal import CFuse3
import InkyCore
import InkyTree
import Synchronization

/// The one reply a FUSE request gets. libfuse requires exactly one reply per request: this
/// object allows one, and answers EIO from deinit if a code path forgot to reply, so the
/// kernel never waits forever on a lost request. Safe to send from any thread.
final class FUSEReply: Sendable {
    /// libfuse's request; any thread may reply to it, once (which `sent` ensures).
    nonisolated(unsafe) private let request: fuse_req_t
    private let sent = Atomic(false)

    init(_ request: fuse_req_t) { self.request = request }

    deinit {
        if !sent.load(ordering: .acquiring) { fuse_reply_err(request, EIO) }
    }

    /// Runs `send` if no reply went out yet; later calls are ignored.
    private func once(_ send: (fuse_req_t) -> Void) {
        let first = !sent.exchange(true, ordering: .acquiringAndReleasing)
        if first { send(request) }
    }

    func error(_ code: Errno) { once { fuse_reply_err($0, code.code) } }
    func ok() { once { fuse_reply_err($0, 0) } }

    func entry(_ attributes: NodeAttributes) {
        var entry = fuse_entry_param()
        entry.ino = fuse_ino_t(attributes.id)
        entry.generation = attributes.generation
        entry.attr = StatBuilder.stat(attributes)
        entry.attr_timeout = attributes.attributeTimeout
        entry.entry_timeout = attributes.entryTimeout
        once { fuse_reply_entry($0, &entry) }
    }

    func attributes(_ attributes: NodeAttributes) {
        var info = StatBuilder.stat(attributes)
        once { fuse_reply_attr($0, &info, attributes.attributeTimeout) }
    }

    func bytes<Bytes: ContiguousBytes>(_ bytes: Bytes) {
        once { request in
            bytes.withUnsafeBytes { raw in
                _ = fuse_reply_buf(request, raw.baseAddress?.assumingMemoryBound(to: CChar.self), raw.count)
            }
        }
    }

    func open(_ info: UnsafeMutablePointer<fuse_file_info>) { once { fuse_reply_open($0, info) } }

    func link(_ target: String) { once { fuse_reply_readlink($0, target) } }

    func xattrSize(_ size: Int) { once { fuse_reply_xattr($0, size) } }

    func statfs(_ info: statvfs) {
        var copy = info
        once { fuse_reply_statfs($0, &copy) }
    }

    /// The request is answered elsewhere or needs no answer (forget).
    func none() { once { fuse_reply_none($0) } }
}

/// `NodeAttributes` as the kernel wants them.
enum StatBuilder {
    static func stat(_ attributes: NodeAttributes) -> Glibc.stat {
        var info = Glibc.stat()
        // fuse_ino_t is UInt64 while st_ino is UInt on this platform: convert explicitly.
        info.st_ino = UInt(attributes.id)
        switch attributes.kind {
        case .directory:
            info.st_mode = S_IFDIR | attributes.permissions
            info.st_nlink = UInt(max(2, attributes.linkCount))
        case .regularFile:
            info.st_mode = S_IFREG | attributes.permissions
            info.st_nlink = 1
        case .symlink:
            info.st_mode = S_IFLNK | attributes.permissions
            info.st_nlink = 1
        }
        info.st_size = Int(attributes.size)
        // A file's block size is what readers ask at once (stdio and cat read 64 KiB). A directory's
        // is what glibc's readdir sizes its buffer by, and the kernel zeroes a buffer of that size
        // for every listing reply: the smallest glibc takes (32 KiB, from 4 KiB) halves that work.
        info.st_blksize = attributes.kind == .directory ? 4_096 : 65_536
        info.st_blocks = Int((attributes.size + 511) / 512)
        info.st_uid = attributes.owner
        info.st_gid = attributes.group
        let time = timespec(tv_sec: Int(attributes.modifiedNanoseconds / 1_000_000_000),
                            tv_nsec: Int(attributes.modifiedNanoseconds % 1_000_000_000))
        info.st_mtim = time
        info.st_ctim = time
        info.st_atim = time
        return info
    }
}
