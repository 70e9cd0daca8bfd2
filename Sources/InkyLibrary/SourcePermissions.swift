import Foundation
import InkyCore
import InkyTree

/// Who may read a node: the owner, group and mode of the library file it comes from, with every
/// write bit (and setuid, setgid, sticky) cleared. The mount uses `default_permissions`, so the
/// kernel checks these against the caller: with `-o allow_other` another user reads through the
/// mount exactly what they could read in the library, never more.
struct SourcePermissions: Equatable {
    var owner: UInt32
    var group: UInt32
    /// The source's permission bits (07777 masked to 0777).
    var mode: UInt32

    init(owner: UInt32, group: UInt32, mode: UInt32) {
        self.owner = owner
        self.group = group
        self.mode = mode & 0o777
    }

    init(_ info: stat) {
        self.init(owner: info.st_uid, group: info.st_gid, mode: info.st_mode)
    }

    /// The mounting user's own, for what only they made: the vault, their reading progress.
    static func mountingUser(mode: UInt32) -> SourcePermissions {
        SourcePermissions(owner: getuid(), group: getgid(), mode: mode)
    }

    /// A folder or pass-through file: its own bits without write.
    var readOnly: UInt32 { mode & 0o555 }

    /// A page (and ERROR.txt, .ComicInfo.xml) of a comic: the archive's read bits only.
    var page: UInt32 { mode & 0o444 }

    /// A folder's cover (`folder.jpg`) made from `comic`: the folder's read bits, less every
    /// class of reader the comic does not let read it, so a 0600 comic's cover is no more
    /// readable than the comic. With another owner or group than the folder's, only the comic's
    /// bits for everyone count (the folder's owner class is then a different person).
    func cover(from comic: SourcePermissions) -> UInt32 {
        let others = comic.mode & 0o004
        let granted = comic.owner == owner && comic.group == group ? comic.page
            : (others != 0 ? 0o444 : 0)
        return page & granted
    }

    /// A comic's directory: the archive's read bits, and search where it has read, so whoever
    /// may read the archive may list and open its pages, and nobody else may.
    var comicFolder: UInt32 { page | (page >> 2) }
}

extension NodeAttributes {
    /// These attributes owned as the source is, with `permissions` as given.
    func owned(by source: SourcePermissions, permissions: UInt32) -> NodeAttributes {
        var attributes = self
        attributes.owner = source.owner
        attributes.group = source.group
        attributes.permissions = permissions
        return attributes
    }
}

/// The library's files as the mount sees them: their own status, never a link's target.
extension LibraryFilesystem {
    /// The `lstat` of `path` if it still is of `type` (S_IFDIR, S_IFREG); ENOENT when it became
    /// something else (a folder or file swapped for a link is gone as far as this node goes).
    func sourceStatus(_ path: String, type: mode_t) -> Result<stat, Errno> {
        root.status(path).flatMap { info in info.st_mode & S_IFMT == type ? .success(info) : .failure(.ENOENT) }
    }

    /// The identity of a comic's archive: a vault object's by its path, a library file's
    /// without following links (a comic swapped for a link has vanished).
    func comicIdentity(_ comic: ComicRef) -> Result<FileIdentity, Errno> {
        comicCheck(comic).map(\.identity)
    }

    /// One look at a comic's file: what it is now and whose it is.
    func comicCheck(_ comic: ComicRef) -> Result<ComicCheck, Errno> {
        switch comic {
        case .vault: FileIdentity.of(realPath(comic)).map { ComicCheck(identity: $0, permissions: comicPermissions(comic)) }
        // A folder is a comic when it holds loose images only (`--as cbz` serves it as one).
        case .library(let path): root.status(path).flatMap { info in
            [S_IFREG, S_IFDIR].contains(info.st_mode & S_IFMT)
                ? .success(ComicCheck(info)) : .failure(.ENOENT)
        }
        }
    }

    /// Whose a comic's directory and pages are: its archive's owner and mode; the vault's are
    /// the mounting user's. An archive that cannot be looked at gives nobody anything.
    func comicPermissions(_ comic: ComicRef) -> SourcePermissions {
        guard case .library(let path) = comic else { return .mountingUser(mode: directoryPermissions(vault: true)) }
        guard case .success(let info) = root.status(path) else { return .mountingUser(mode: 0) }
        return SourcePermissions(info)
    }
}

/// A comic's file as one `stat` saw it: its identity (which listing is current) and the
/// permissions its directory and pages show.
struct ComicCheck {
    var identity: FileIdentity
    var permissions: SourcePermissions
}

extension ComicCheck {
    /// What one `lstat` of the comic's file says.
    init(_ info: stat) {
        self.init(identity: FileIdentity(info), permissions: SourcePermissions(info))
    }
}
