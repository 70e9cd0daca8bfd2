import Foundation
#if canImport(Glibc)
import Glibc
#endif
import InkyCore

extension RequestFiles {
    /// Opens what `request` reads, in the daemon: a library comic beneath `root` without
    /// following any link (`ConfinedFile`), a vault object (`isVaultObject`) as the regular file it
    /// must be, never through a link; without a root (the command line) the path the user named.
    /// A folder comic's pages come beside it: the requested ones (all for a listing that cuts pages) opened
    /// beneath the folder's descriptor, never through a link. Nil for a request without a comic.
    package static func open(for request: WorkerRequest, isVaultObject: Bool, root: LibraryRoot?) throws(ComicError) -> RequestFiles? {
        let path: String
        let wanted: Set<String>?
        switch request {
        // A listing reads a folder's pages only to cut them (their dimensions): else their sizes,
        // from the daemon's own listing, are all it needs.
        case .list(let comic, let limits): (path, wanted) = (comic, limits.rendering.conversion.cutsPages ? nil : [])
        case .read(let comic, _, let entries, _): (path, wanted) = (comic, Set(entries.map(\.name)))
        case .comicInfo(let comic, _, _): (path, wanted) = (comic, [])
        case .cover(let comic, _, let entry, _, _): (path, wanted) = (comic, [entry.name])
        case .useKey: return nil
        }
        let comic: Int32
        if isVaultObject {
            comic = try openVaultObject(path)
        } else if let opened = try ConfinedFile.open(path, beneath: root) {
            comic = opened.descriptor
        } else {
            comic = try openNamed(path)
        }
        var info = stat()
        fstat(comic, &info)
        let files = RequestFiles(entries: [Entry(kind: .comic, size: Int64(info.st_size), name: "", descriptor: comic)])
        if info.st_mode & S_IFMT == S_IFDIR {
            files.entries += try folderEntries(of: comic, path: path, opening: wanted)
        }
        return files
    }

    /// A vault object: a regular file, never a link, never blocking on a FIFO put in its place.
    private static func openVaultObject(_ path: String) throws(ComicError) -> Int32 {
        let descriptor = Syscall.retrying { Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY) }
        guard descriptor >= 0 else {
            let code = errno
            if code == ELOOP { throw .corrupted(path: path, detail: "vault object: not a regular file") }
            throw .io(path: path, errno: code, detail: "cannot open: \(String(cString: strerror(code)))")
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            close(descriptor)
            throw .corrupted(path: path, detail: "vault object: not a regular file")
        }
        return descriptor
    }

    /// A path the command line's user named (a link to a comic is the comic): a regular file or
    /// a folder, never a FIFO or device to block on.
    private static func openNamed(_ path: String) throws(ComicError) -> Int32 {
        let descriptor = Syscall.retrying { Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY) }
        guard descriptor >= 0 else {
            let code = errno
            let detail = code == ENOENT ? "no such file or folder" : "cannot open: \(String(cString: strerror(code)))"
            throw .io(path: path, errno: code, detail: detail)
        }
        var info = stat()
        let kind = fstat(descriptor, &info) == 0 ? info.st_mode & S_IFMT : 0
        guard kind == S_IFREG || kind == S_IFDIR else {
            close(descriptor)
            throw .io(path: path, errno: EACCES, detail: "not a regular file or folder")
        }
        return descriptor
    }

    /// The folder's entries in name order (the listing a worker lists its pages by); the pages named in
    /// `opening` (all when nil) opened, a page that cannot be opened as a regular file left closed
    /// (the worker then says it cannot read it).
    private static func folderEntries(of folder: Int32, path: String, opening: Set<String>?) throws(ComicError) -> [Entry] {
        try LibraryRoot.folderComicEntries(of: folder, label: path).map { item in
            let kind: Kind = switch item.kind {
            case .file: .file
            case .directory: .directory
            case .symlink: .symlink
            default: .other
            }
            var entry = Entry(kind: kind, size: item.size, name: item.name, descriptor: -1)
            guard kind == .file, opening?.contains(item.name) ?? true else { return entry }
            let page = openat(folder, item.name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY)
            var info = stat()
            if page >= 0, fstat(page, &info) == 0, info.st_mode & S_IFMT == S_IFREG {
                entry.kind = .page
                entry.descriptor = page
                entry.size = Int64(info.st_size)
            } else if page >= 0 {
                close(page)
            }
            return entry
        }
    }
}
