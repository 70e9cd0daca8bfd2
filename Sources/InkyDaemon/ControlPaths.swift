import Foundation
#if canImport(Glibc)
import Glibc
#endif
import InkyCore

/// Why a control socket cannot be used: the runtime folder is not private (someone else could
/// stand between the command and the daemon and receive the vault password), or the system said no.
public enum ControlError: Error, Equatable, Sendable, CustomStringConvertible {
    case unsafeFolder(String)
    case impostor(String)
    case system(Errno)

    public var description: String {
        switch self {
        case .unsafeFolder(let reason): reason
        case .impostor(let reason): reason
        case .system(let code): code.description
        }
    }
}

/// Where control sockets live: `$XDG_RUNTIME_DIR/inkyfs`, else `/tmp/inkyfs-UID/inkyfs`.
///
/// The fallback lives in a folder every user can create names in, so nothing there is trusted
/// by its name: every folder on the way is checked with `lstat` (a directory, not a link; ours,
/// private; an ancestor only root's or ours, and sticky if others may write to it), the folder
/// is then opened and the open descriptor checked to be the folder that was examined, and sockets
/// are bound and dialled through `/proc/self/fd/N/`, so a folder swapped after the check is never
/// the one used. Anything else is refused with a message that says what to do.
enum ControlPaths {
    /// The checked, open runtime folder; `through` is its path by the descriptor.
    final class Folder: Sendable {
        let path: String
        let fd: Int32

        init(path: String, fd: Int32) {
            self.path = path
            self.fd = fd
        }

        deinit { close(fd) }

        /// `name` inside this very folder, whatever has happened to its path since it was checked.
        func through(_ name: String) -> String { "/proc/self/fd/\(fd)/\(name)" }
    }

    static func folder(create: Bool) throws(ControlError) -> Folder {
        let folder = XDGDirectories.runtime
        let base = (folder as NSString).deletingLastPathComponent
        let uid = getuid()
        let fallback = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"].map { $0.isEmpty } ?? true
        let advice = fallback
            ? "set XDG_RUNTIME_DIR to a private folder of yours (as a login session does: /run/user/\(uid)), or have root remove \(base)"
            : "check XDG_RUNTIME_DIR=\(base)"
        if create && fallback { mkdir(base, 0o700) }
        try checkAncestors(of: base, advice: advice)
        // The base: ours and not a link; the fallback one (in /tmp) must also be private.
        try checkOwned(base, privateToUs: fallback, advice: advice)
        if create {
            mkdir(folder, 0o700)
        }
        try checkOwned(folder, privateToUs: !create, advice: advice)
        let fd = open(folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw .system(Errno.current) }
        let opened = Folder(path: folder, fd: fd)
        var expected = stat(), actual = stat()
        guard lstat(folder, &expected) == 0, fstat(fd, &actual) == 0,
              expected.st_dev == actual.st_dev, expected.st_ino == actual.st_ino else {
            throw .unsafeFolder("\(folder) changed while it was being checked: refusing to use it; \(advice)")
        }
        if create, fchmod(fd, 0o700) != 0 { throw .system(Errno.current) }
        guard actual.st_uid == uid, (create || actual.st_mode & 0o077 == 0) else {
            throw .unsafeFolder("\(folder) is not private to uid \(uid): refusing to use it; \(advice)")
        }
        return opened
    }

    /// Every folder above `base`: root's or ours (nobody else can rename what is below), and
    /// sticky when others may write in it (/tmp), so no one else can move our folder away.
    private static func checkAncestors(of base: String, advice: String) throws(ControlError) {
        var ancestor = (base as NSString).deletingLastPathComponent
        while true {
            var info = stat()
            guard stat(ancestor, &info) == 0 else { throw .system(Errno.current) }
            let writableByOthers = info.st_mode & 0o022 != 0, sticky = info.st_mode & UInt32(S_ISVTX) != 0
            guard info.st_uid == 0 || info.st_uid == getuid(), !writableByOthers || sticky else {
                throw .unsafeFolder("\(ancestor), above the control socket folder, can be changed by another user; \(advice)")
            }
            if ancestor == "/" || ancestor.isEmpty { return }
            ancestor = (ancestor as NSString).deletingLastPathComponent
        }
    }

    private static func checkOwned(_ path: String, privateToUs: Bool, advice: String) throws(ControlError) {
        var info = stat()
        guard lstat(path, &info) == 0 else { throw .system(Errno.current) }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw .unsafeFolder("\(path) is \(info.st_mode & S_IFMT == S_IFLNK ? "a symbolic link" : "not a folder"): refusing to use it; \(advice)")
        }
        guard info.st_uid == getuid() else {
            throw .unsafeFolder("\(path) belongs to uid \(info.st_uid), not to you (uid \(getuid())): another user may be"
                                + " trying to receive your vault password; refusing to use it; \(advice)")
        }
        let loose = privateToUs ? info.st_mode & 0o077 != 0 : info.st_mode & 0o022 != 0
        guard !loose else {
            throw .unsafeFolder("\(path) is open to other users (mode \(String(info.st_mode & 0o7777, radix: 8))):"
                                + " refusing to use it; \(advice)")
        }
    }

    /// Socket names must fit sockaddr_un (108 bytes): a hash of the mountpoint.
    static func socketName(for mountpoint: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in mountpoint.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return String(hash, radix: 16) + ".sock"
    }

    static func address(_ path: String) throws(Errno) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw Errno(ENAMETOOLONG) }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return address
    }
}
