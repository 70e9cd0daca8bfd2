import Foundation
#if canImport(Glibc)
import Glibc
#endif
internal import CLinux
import InkyCore

/// A root mount's worker stops being root before it touches an archive: it becomes `nobody`
/// (group `nogroup`, no supplementary groups) with no capability in its effective, permitted,
/// inheritable, ambient or bounding sets. It needs none: the daemon opens every comic (and each
/// page of a folder comic, each vault object) and passes the descriptor (`RequestFiles`). A parser
/// taken over by a hostile archive then cannot open a 0600 file of root's, write, chown, signal or
/// ptrace as root, load a module or mount, even where seccomp is missing (another architecture)
/// or Landlock is (an older kernel).
public enum PrivilegeDrop {
    public enum Outcome: Equatable, Sendable {
        /// Now `uid`/`gid`, with no capability.
        case dropped(uid: UInt32, gid: UInt32)
        /// Not root: nothing to give up.
        case notRoot
        /// The step that failed (see `inky_drop_root`) and why; the worker may be partly dropped.
        case failed(step: Int32, Errno)
    }

    /// Filesystems where a file is read with the rights of whoever opened it (the daemon), so
    /// nobody reads through the descriptor it is passed what root does. Elsewhere another party
    /// may decide each read by the reader's uid (an NFS or SMB server, a FUSE daemon, which without
    /// allow_other serves only the user who mounted it): a root mount's workers keep root there.
    static let localFilesystems: Set<String> = [
        "ext2", "ext3", "ext4", "xfs", "btrfs", "zfs", "f2fs", "bcachefs", "jfs", "reiserfs", "nilfs2",
        "tmpfs", "ramfs", "overlay", "squashfs", "erofs", "iso9660", "udf", "vfat", "msdos", "exfat", "ntfs3", "hfsplus",
    ]

    /// The filesystems (types) of `/proc/self/mountinfo` text `mountinfo` beneath which a nobody
    /// worker could not read what root can: of each of `paths` (absolute, resolved), the
    /// filesystem it lies on and every one mounted beneath it, when not one of `localFilesystems`.
    package static func filesystemsNeedingRoot(for paths: [String], mountinfo: String) -> [String] {
        // Fields: id, parent, device, root, mount point, options, optional fields, "-", type, source, options.
        let mounts: [(point: String, type: String)] = mountinfo.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
            guard fields.count > 5, let dash = fields.firstIndex(of: "-"), dash + 1 < fields.count else { return nil }
            return (unescaped(fields[4]), fields[dash + 1])
        }
        var needing: [String] = []
        for path in paths {
            func contains(_ point: String) -> Bool { point == "/" || path == point || path.hasPrefix(point + "/") }
            // The one it lies on: the deepest mount point above it, the last mounted there.
            let own = mounts.enumerated().filter { contains($0.element.point) }
                .max { ($0.element.point.count, $0.offset) < ($1.element.point.count, $1.offset) }?.element
            let beneath = mounts.filter { $0.point.hasPrefix(path == "/" ? "/" : path + "/") }
            for mount in (own.map { [$0] } ?? []) + beneath where !localFilesystems.contains(mount.type) && !needing.contains(mount.type) {
                needing.append(mount.type)
            }
        }
        return needing
    }

    /// Why a root mount's workers keep root for `paths` (the library, the vault's objects): the
    /// filesystems that would lock a nobody worker out, or nil when they may drop it.
    public static func reasonToKeepRoot(for paths: [String]) -> String? {
        guard let mountinfo = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8) else {
            return "/proc/self/mountinfo cannot be read, so where the library lies is not known"
        }
        let resolved = paths.map { path -> String in
            guard let real = realpath(path, nil) else { return path }
            defer { free(real) }
            return String(cString: real)
        }
        let needing = filesystemsNeedingRoot(for: resolved, mountinfo: mountinfo)
        return needing.isEmpty ? nil : "the library (or the vault) lies on \(needing.joined(separator: ", ")), where its server decides who reads by uid"
    }

    /// A mount point as mountinfo writes it: space, tab, newline and backslash as octal escapes.
    private static func unescaped(_ field: String) -> String {
        guard field.contains("\\") else { return field }
        var bytes: [UInt8] = []
        var rest = Array(field.utf8)[...]
        while let byte = rest.first {
            if byte == UInt8(ascii: "\\"), rest.count >= 4, let value = UInt8(String(decoding: rest.dropFirst().prefix(3), as: UTF8.self), radix: 8) {
                bytes.append(value)
                rest = rest.dropFirst(4)
            } else {
                bytes.append(byte)
                rest = rest.dropFirst()
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// No capability kept (`inky_drop_root` keeps the one it is given, none for -1).
    static let keepNone: Int32 = -1

    /// The account a root worker becomes: `nobody` and its group (`nogroup` on Debian), or the
    /// overflow ids 65534 where the system has no `nobody`.
    static func unprivilegedAccount() -> (uid: UInt32, gid: UInt32) {
        guard let entry = getpwnam("nobody"), entry.pointee.pw_uid != 0, entry.pointee.pw_gid != 0 else { return (65534, 65534) }
        return (entry.pointee.pw_uid, entry.pointee.pw_gid)
    }

    /// Drops root, and every capability, when this process runs as root. Call while it has
    /// one thread (the bounding set and capabilities are set for the calling thread only; threads
    /// started afterwards inherit them), after what needs root and before Landlock and seccomp.
    /// Exits the process if a way back to root stayed open after the drop.
    public static func dropRoot() -> Outcome {
        guard getuid() == 0 || geteuid() == 0 else { return .notRoot }
        let account = unprivilegedAccount()
        let step = inky_drop_root(account.uid, account.gid, keepNone)
        if step == 0 { return .dropped(uid: account.uid, gid: account.gid) }
        let error = Errno(errno)
        if step == 8 {
            FileHandle.standardError.write(Data("inkyfs worker: dropped root, yet could become root again; stopping\n".utf8))
            exit(2)
        }
        return .failed(step: step, error)
    }
}
