#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import InkyCore

/// The crash-safe file steps every vault write is built from. The rule throughout:
/// a file only appears under its real name once its bytes are on disk (temp file created
/// with O_EXCL in the same directory, written, fsynced, renamed), and the directory is
/// fsynced after the rename so the new name itself survives a power cut. A crash at any
/// point therefore leaves either the old file or the new one, never a torn one.
enum DurableFiles {
    /// Suffix that marks our temporary files; the orphan sweep at unlock recognises them.
    static let temporaryMarker = ".inkyfs-tmp-"

    /// Creates `<dir>/.<name>.inkyfs-tmp-<random>` exclusively (never an existing file,
    /// never through a symlink planted there) beside `finalPath`.
    static func createTemporary(besides finalPath: String, mode: mode_t = 0o600)
        throws(VaultError) -> (file: FileDescriptor, path: String)
    {
        let (directory, name) = split(finalPath)
        for _ in 0..<8 {
            let suffix: String
            do { suffix = HexEncoding.encode(try RandomBytes.bytes(count: 8)) } catch { throw .crypto(error) }
            let path = join(directory, "." + name + temporaryMarker + suffix)
            do {
                let file = try FileDescriptor(path: path, flags: O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode: mode)
                return (file, path)
            } catch let error {
                // 64 random bits colliding means someone is planting names: try another.
                if case .io(_, _, let code) = error, code.code == EEXIST { continue }
                throw error
            }
        }
        throw .io(path: finalPath, operation: "create temporary file", errno: Errno(EEXIST))
    }

    /// Atomically replaces (or creates) `path` with `bytes`: temp, write, fsync, rename, fsync dir.
    static func replace(_ path: String, with bytes: [UInt8]) throws(VaultError) {
        let (file, temporary) = try createTemporary(besides: path)
        do throws(VaultError) {
            try file.writeAll(bytes)
            try file.sync()
            CrashPoint.reach("durable.temporary-synced")
            guard rename(temporary, path) == 0 else {
                throw VaultError.io(path: path, operation: "rename", errno: .current)
            }
        } catch {
            unlink(temporary)
            throw error
        }
        try syncDirectory(split(path).directory)
    }

    /// Gives a finished, fsynced temporary file its final name, refusing to overwrite
    /// anything already there (objects are write-once; extracted comics must not clobber a
    /// user's file). `link` fails with EEXIST atomically; filesystems without hard links
    /// fall back to check-then-rename, which is only racy against a concurrent writer.
    static func publishWithoutReplacing(_ temporary: String, as path: String) throws(VaultError) {
        if link(temporary, path) == 0 {
            unlink(temporary)
        } else {
            let failure = errno
            guard [EPERM, ENOTSUP, EOPNOTSUPP, ENOSYS, EMLINK, EXDEV].contains(failure) else {
                throw .io(path: path, operation: "link", errno: Errno(failure))
            }
            var info = stat()
            guard lstat(path, &info) != 0 else { throw .io(path: path, operation: "rename", errno: Errno(EEXIST)) }
            guard rename(temporary, path) == 0 else { throw .io(path: path, operation: "rename", errno: .current) }
        }
        try syncDirectory(split(path).directory)
    }

    static func syncDirectory(_ directory: String) throws(VaultError) {
        let handle = try FileDescriptor(path: directory, flags: O_RDONLY | O_DIRECTORY)
        try handle.sync()
    }

    /// The whole file, or nil if it does not exist. Files larger than `limit` are refused
    /// before anything is allocated: a hostile file must not make us read gigabytes.
    static func read(_ path: String, limit: Int) throws(VaultError) -> [UInt8]? {
        let file: FileDescriptor
        do {
            file = try FileDescriptor(path: path, flags: O_RDONLY | O_NOFOLLOW)
        } catch let error {
            if case .io(_, _, let code) = error, code.code == ENOENT { return nil }
            throw error
        }
        let info = try file.status()
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw .io(path: path, operation: "read", errno: Errno(EINVAL))
        }
        guard info.st_size <= limit else {
            throw .io(path: path, operation: "read (larger than \(limit) bytes)", errno: Errno(EFBIG))
        }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        let count = try bytes.withMutableBytes { (buffer) throws(VaultError) in try file.read(into: buffer, at: 0) }
        return Array(bytes.prefix(count))
    }

    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    static func makeDirectory(_ path: String) throws(VaultError) {
        guard mkdir(path, 0o700) == 0 || (errno == EEXIST && isDirectory(path)) else {
            throw .io(path: path, operation: "mkdir", errno: .current)
        }
    }

    /// Creates `path` and any missing parents (mode 0700), fsyncing each parent after
    /// adding an entry to it, so the new directory survives a crash.
    static func makeDirectories(_ path: String) throws(VaultError) {
        guard !isDirectory(path) else { return }
        let parent = split(path).directory
        if parent != path, !isDirectory(parent) { try makeDirectories(parent) }
        guard mkdir(path, 0o700) == 0 || (errno == EEXIST && isDirectory(path)) else {
            throw .io(path: path, operation: "mkdir", errno: .current)
        }
        try syncDirectory(parent)
    }

    /// Names in `directory`, without "." and "..".
    static func names(in directory: String) throws(VaultError) -> [String] {
        guard let stream = opendir(directory) else { throw .io(path: directory, operation: "opendir", errno: .current) }
        return try names(of: stream, path: directory)
    }

    private static func names(of stream: OpaquePointer, path directory: String) throws(VaultError) -> [String] {
        defer { closedir(stream) }
        var names: [String] = []
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 { throw .io(path: directory, operation: "readdir", errno: .current) }
                return names
            }
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self))
            }
            if name != "." && name != ".." { names.append(name) }
        }
    }

    /// Names in the open folder `folder`, without "." and "..", read through a duplicate of
    /// its descriptor (closedir closes the one it was given).
    static func names(in folder: FileDescriptor) throws(VaultError) -> [String] {
        let copy = fcntl(folder.raw, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { throw .io(path: folder.path, operation: "dup", errno: .current) }
        _ = lseek(copy, 0, SEEK_SET)
        guard let stream = fdopendir(copy) else {
            let failure = Errno.current
            close(copy)
            throw .io(path: folder.path, operation: "fdopendir", errno: failure)
        }
        return try names(of: stream, path: folder.path)
    }

    static func split(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let directory = String(path[..<slash])
        return (directory.isEmpty ? "/" : directory, String(path[path.index(after: slash)...]))
    }

    static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }
}
