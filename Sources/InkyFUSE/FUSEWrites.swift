import Foundation
internal import CFuse3
import InkyCore
import InkyTree

/// The writing operations. The mount is not `ro`: a read-only mount is refused by the kernel
/// before any request reaches the daemon, and `rm` of a link in `Continue Reading/` (which forgets
/// that comic's reading state) must reach it. So the read-only answer is given here: EROFS for
/// every writing request the kernel lets through, `unlink` aside, which the tree may accept
/// (`MountedFilesystem.unlink`). Every one is registered: one left out gets ENOSYS from libfuse,
/// which the kernel turns into EPERM (link), EOPNOTSUPP (xattrs, fallocate, copy_file_range) or
/// a fallback (create → mknod), never EROFS. What the kernel decides before asking keeps its
/// errno: modes (`default_permissions`: EACCES), EISDIR, EEXIST, ENOTDIR, a descriptor not open
/// for writing. FUSE_TMPFILE, which libfuse 3.14 does not know, is answered in the device I/O.
extension FUSECallbacks {
    /// The one answer to a write the mount does not take.
    static let readOnly = Errno.EROFS

    static func addWrites(to ops: inout fuse_lowlevel_ops) {
        ops.unlink = { request, parent, name in
            let reply = FUSEReply(request!)
            let name = FUSECallbacks.takeName(name)
            switch FUSECallbacks.context(request).filesystem.unlink(parent: NodeID(parent), name: name, caller: FUSECallbacks.caller(request)) {
            case .success: reply.ok()
            case .failure(let code): reply.error(code)
            }
        }
        ops.rmdir = { request, _, name in FUSECallbacks.refuse(request, names: name) }
        ops.mkdir = { request, _, name, _ in FUSECallbacks.refuse(request, names: name) }
        ops.mknod = { request, _, name, _, _ in FUSECallbacks.refuse(request, names: name) }
        ops.symlink = { request, target, _, name in FUSECallbacks.refuse(request, names: target, name) }
        ops.link = { request, _, _, name in FUSECallbacks.refuse(request, names: name) }
        ops.rename = { request, _, name, _, newName, _ in FUSECallbacks.refuse(request, names: name, newName) }
        // O_CREAT of a name that is not there (one that is goes to `open`, without O_CREAT).
        ops.create = { request, _, name, _, _ in FUSECallbacks.refuse(request, names: name) }
        // chmod, chown, truncate, utimensat: also an O_TRUNC open's truncation, had `open` let it by.
        ops.setattr = { request, _, _, _, _ in FUSECallbacks.refuse(request) }
        ops.setxattr = { request, _, _, _, _, _ in FUSECallbacks.refuse(request) }
        ops.removexattr = { request, _, _ in FUSECallbacks.refuse(request) }
        // No descriptor open for writing is ever handed out (`open`), so the kernel answers
        // these itself (EBADF); refused here too should one reach the daemon.
        ops.write = { request, _, _, _, _, _ in FUSECallbacks.refuse(request) }
        ops.fallocate = { request, _, _, _, _, _ in FUSECallbacks.refuse(request) }
        ops.copy_file_range = { request, _, _, _, _, _, _, _, _ in FUSECallbacks.refuse(request) }
    }

    /// Whether an OPEN writes: for writing, or truncating (libfuse asks the kernel for atomic
    /// O_TRUNC, so an `O_RDONLY|O_TRUNC` open opened here would count as truncated).
    static func opensForWriting(_ flags: Int32) -> Bool {
        flags & O_ACCMODE != O_RDONLY || flags & O_TRUNC != 0
    }

    /// Answers EROFS, after wiping the request's names (`takeName`).
    private static func refuse(_ request: fuse_req_t?, names: UnsafePointer<CChar>?...) {
        for name in names { _ = takeName(name) }
        FUSEReply(request!).error(readOnly)
    }

    /// A name from a request, copied, and wiped where it lies: in libfuse's receive buffer, which
    /// lives as long as its thread and keeps whatever later requests do not overwrite, a vault
    /// folder's or comic's name would outlive the lock. Nothing reads it after the callback.
    static func takeName(_ name: UnsafePointer<CChar>?) -> String {
        guard let name else { return "" }
        let copied = String(cString: name)
        memset(UnsafeMutableRawPointer(mutating: name), 0, strlen(name))
        return copied
    }
}
