import Foundation
#if canImport(Glibc)
import Glibc
#endif
import InkyCore

/// A comic file (or a folder of loose images) of the mounted library opened for reading by the pool
/// (to pass to a worker, or for its stored-page reader): beneath the library root, without following any link, so a
/// comic swapped for a link to `/etc/shadow` after it was listed is refused, not read.
package enum ConfinedFile {
    package struct Opened {
        package var descriptor: Int32
        package var identity: FileIdentity
    }

    /// `path` opened beneath `root`; nil without a root (the command line reads the paths its
    /// user named). EACCES for a path outside the root, ELOOP for a link, EACCES for a special file.
    package static func open(_ path: String, beneath root: LibraryRoot?) throws(ComicError) -> Opened? {
        guard let root else { return nil }
        guard let relative = root.relative(of: path) else {
            throw .io(path: path, errno: EACCES, detail: "outside the mounted library: not opened")
        }
        let descriptor: Int32
        // A folder of loose images is a comic too: opened as a folder (O_NOFOLLOW), never a link.
        // (EACCES is also a file the daemon may not read: then that is what is said.)
        let opened = root.openFile(relative).flatMapError { code in
            code == .EACCES ? root.openFolder(relative).flatMapError { _ in .failure(code) } : .failure(code)
        }
        switch opened {
        case .success(let value): descriptor = value
        case .failure(let code):
            let detail = code == .ELOOP ? "a symlink: the library's links are never followed" : "cannot open: \(code.description)"
            throw .io(path: path, errno: code.code, detail: detail)
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let code = errno
            close(descriptor)
            throw .io(path: path, errno: code, detail: "cannot stat: \(String(cString: strerror(code)))")
        }
        return Opened(descriptor: descriptor, identity: FileIdentity(info))
    }
}
