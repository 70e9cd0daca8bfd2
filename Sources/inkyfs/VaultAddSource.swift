import Foundation
import InkyCommandLine
import InkyCore
import InkyDaemon

/// What `vault add` accepts before it encrypts anything: a comic archive given by its own name.
/// A symlink is refused with the file it names (deleting "the original" would delete the link
/// and keep the comic); a path inside an inkyfs mount is refused with the library file to use
/// (the mount shows pages, not the comic); anything that is not an archive or PDF is refused.
enum VaultAddSource {
    /// nil when `path` may be added; else one line saying why not and what to give instead.
    static func refusal(_ path: String, mounts: [ControlReply]) -> String? {
        let absolute = absolutePath(path)
        let mount = mounts.first { absolute == $0.mountpoint || absolute.hasPrefix($0.mountpoint + "/") }
        let archive = ControlClient.mountedArchive(of: absolute)
        if mount != nil || archive != nil {
            let comic = archive ?? mount?.library.map { "the comic in the library at \($0)" } ?? "the comic in the library"
            return "is inside an inkyfs mount\(mount.map { " (\($0.mountpoint))" } ?? ""), which shows pages, not comics;"
                + " add the comic itself: \(comic)"
        }
        var info = stat()
        guard lstat(absolute, &info) == 0 else { return "\(String(cString: strerror(errno)))" }
        if info.st_mode & S_IFMT == S_IFLNK {
            let target = realpath(absolute, nil).map { pointer in defer { free(pointer) }; return String(cString: pointer) }
            return "is a symbolic link; add the file it names" + (target.map { ": \($0)" } ?? " (it names nothing)")
        }
        guard info.st_mode & S_IFMT == S_IFREG else { return "not a file (only comic archives are added)" }
        let descriptor = open(absolute, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        guard descriptor >= 0 else { return "\(String(cString: strerror(errno)))" }
        defer { close(descriptor) }
        var head = [UInt8](repeating: 0, count: ArchiveFormat.sniffLength)
        let count = head.withUnsafeMutableBytes { Syscall.preadFully(descriptor, $0.baseAddress!, count: $0.count, at: 0) }
        guard case .success(let read) = count else { return "cannot read it" }
        guard let format = ArchiveFormat.sniff(head.prefix(read)), format.isSupported, format != .folder else {
            return "not a comic (a ZIP, RAR, 7z or TAR archive, or a PDF); only comics are added"
        }
        return nil
    }
}
