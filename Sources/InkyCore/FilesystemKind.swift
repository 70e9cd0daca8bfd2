import Foundation

/// What kind of filesystem a folder lives on, as far as watching it goes: inotify reports
/// changes made through this machine's kernel only, so on a network filesystem (NFS, SMB,
/// sshfs and other FUSE mounts, 9p, Ceph…) another machine's changes go unseen, and the mount
/// must not let the kernel keep names and attributes for long.
public struct FilesystemKind: Sendable, Equatable, CustomStringConvertible {
    /// The type /proc/self/mountinfo names ("ext4", "nfs4", "fuse.sshfs").
    public let name: String
    /// Changes reach inotify: every change goes through this kernel.
    public var isLocal: Bool { Self.local.contains(name) }

    public var description: String { name }

    /// Filesystems of this machine's own disks and memory. Anything not named here counts as
    /// unseen: a wrong guess costs only cache time, never a stale name.
    static let local: Set<String> = [
        "ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "ramfs", "zfs", "overlay", "f2fs", "vfat", "msdos", "exfat",
        "ntfs", "ntfs3", "jfs", "reiserfs", "iso9660", "squashfs", "bcachefs", "nilfs2", "hfsplus", "udf",
    ]

    /// The kind of `path`'s filesystem: the mount, in `mountinfo`, whose mount point is the
    /// longest prefix of the path's real location; nil when the path cannot be resolved.
    public static func of(_ path: String, mountinfo: String = "/proc/self/mountinfo") -> FilesystemKind? {
        guard let real = realpath(path, nil) else { return nil }
        let resolved = String(cString: real)
        free(real)
        guard let table = ProcFile.read(mountinfo) else { return nil }
        var best: (point: String, type: String)?
        for line in table.split(separator: "\n") {
            // "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw": the type follows " - ".
            let halves = line.components(separatedBy: " - ")
            let fields = halves[0].split(separator: " ")
            guard halves.count == 2, fields.count > 4, let type = halves[1].split(separator: " ").first else { continue }
            let point = unescape(String(fields[4]))
            let covers = point == "/" || resolved == point || resolved.hasPrefix(point + "/")
            if covers, point.count >= (best?.point.count ?? 0) { best = (point, String(type)) }
        }
        return best.map { FilesystemKind(name: $0.type) }
    }

    /// The type of the mount whose mount point is exactly `path` (resolved), nil if none is.
    public static func mountType(at path: String, mountinfo: String = "/proc/self/mountinfo") -> String? {
        (ProcFile.read(mountinfo) ?? "").split(separator: "\n").last { line in
            let fields = line.split(separator: " ")
            return fields.count > 4 && unescape(String(fields[4])) == path
        }.flatMap { $0.components(separatedBy: " - ").last?.split(separator: " ").first.map(String.init) }
    }

    /// mountinfo and /proc/self/mounts write space, tab, newline and backslash as \040, \011,
    /// \012, \134.
    public static func unescape(_ field: String) -> String {
        var bytes: [UInt8] = []
        var input = Array(field.utf8)[...]
        while let byte = input.popFirst() {
            if byte == UInt8(ascii: "\\"), input.count >= 3, let value = UInt8(String(decoding: input.prefix(3), as: UTF8.self), radix: 8) {
                bytes.append(value)
                input = input.dropFirst(3)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
