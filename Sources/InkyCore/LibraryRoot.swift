import Foundation

/// The library folder as something whose contents may be hostile: anyone who can write into it
/// can plant a symlink to `/etc/shadow`, a link loop, or swap a comic for a link between a
/// listing and an open. Everything the daemon reads of the library goes through here: the root
/// is opened once, and every path below it is walked component by component with `openat` and
/// `O_NOFOLLOW`, so no symlink inside the library is ever followed, whatever it points at and
/// whenever it appeared. (The root path itself may be a link: the person mounting chose it.)
///
/// Paths are relative to the root, "" being the root itself, without `.` or `..` components
/// (names come from listings; a `..` would climb out and is refused).
public final class LibraryRoot: Sendable {
    public let path: String
    /// An pathOnly descriptor of the root folder; -1 when the library is one file (or gone).
    private let fd: Int32
    public let isFolder: Bool
    /// Folders below the root kept open, when asked for (the mount's root, which reaches the
    /// same few folders again and again; nil for the one-pass walks of the watcher and `index`).
    private let folders: FolderDescriptors?
    /// The root's device: only a folder on another one can be an inkyfs mount to keep out of.
    private let device: UInt64
    /// The root's path with links resolved, as the mount table spells mount points.
    private let realPath: String

    /// `cachedFolders` > 0 keeps up to that many folders open for `folderLifetime` seconds.
    public convenience init(path: String) { self.init(path: path, cachedFolders: 0) }

    public init(path: String, cachedFolders: Int, folderLifetime: Double = 1) {
        self.path = path
        let opened = open(path, pathOnly | O_DIRECTORY | O_CLOEXEC)
        fd = opened
        isFolder = opened >= 0
        var info = stat()
        device = opened >= 0 && fstat(opened, &info) == 0 ? UInt64(info.st_dev) : 0
        if let real = realpath(path, nil) {
            realPath = String(cString: real)
            free(real)
        } else {
            realPath = path
        }
        folders = cachedFolders > 0 ? FolderDescriptors(capacity: cachedFolders, lifetime: folderLifetime) : nil
    }

    /// The library changed at `relative` (a folder renamed, removed, replaced): no folder kept
    /// open there or below answers for that path again. "" forgets every one.
    public func forgetFolders(under relative: String) {
        folders?.forget(under: relative)
    }

    deinit { if fd >= 0 { close(fd) } }

    /// What a listing holds: the name and its own `lstat`, never its target's.
    public struct Entry {
        public var name: String
        public var info: stat
    }

    /// The `lstat` of `relative`: a symlink is reported as one.
    public func status(_ relative: String) -> Result<stat, Errno> {
        guard isFolder else {
            var info = stat()
            return stat(path, &info) == 0 ? .success(info) : .failure(.current)
        }
        return withParent(relative) { parent, name in
            var info = stat()
            return fstatat(parent, name, &info, AT_SYMLINK_NOFOLLOW | emptyPath) == 0 ? .success(info) : .failure(.current)
        }
    }

    /// The file's identity (its own, a symlink's if it is one), as `FileIdentity.of` without following.
    public func identity(_ relative: String) -> Result<FileIdentity, Errno> {
        status(relative).map(FileIdentity.init)
    }

    /// A regular file opened for reading (O_RDONLY, close-on-exec); special files and symlinks
    /// are refused before anything could block or follow (ELOOP for a link, EACCES for the rest).
    public func openFile(_ relative: String) -> Result<Int32, Errno> {
        guard isFolder else { return Self.openRegular(AT_FDCWD, path, follow: true) }
        return withParent(relative) { parent, name in Self.openRegular(parent, name, follow: false) }
    }

    /// Whether `info` is that of something on an inkyfs mount (this daemon's own, reached
    /// through a bind mount, or another's) that is not on the library's own device: never
    /// listed, entered nor shown, since listing it may have a daemon wait on itself. What
    /// `isInsideInkyfsMount` did not catch by its path (a folder renamed since).
    public func isInkyfsMount(_ info: stat) -> Bool {
        UInt64(info.st_dev) != device && InkyfsMountTable.shared.isInkyfs(UInt64(info.st_dev))
    }

    /// Whether `relative` is an inkyfs mount placed in the library, or inside one: known by its
    /// path from the mount table, without a `stat` (which would be a request to that mount).
    public func isInsideInkyfsMount(_ relative: String) -> Bool {
        InkyfsMountTable.shared.isInsideMount(absolute(relative), below: realPath)
    }

    /// Names in folder `relative` that are inkyfs mount points: left out of its listings.
    func mountedNames(_ relative: String) -> Set<String> {
        InkyfsMountTable.shared.mountedNames(in: absolute(relative))
    }

    private func absolute(_ relative: String) -> String {
        relative.isEmpty ? realPath : realPath == "/" ? "/" + relative : realPath + "/" + relative
    }

    /// The entries of folder `relative` with their `lstat`; `.` and `..` left out, and any
    /// inkyfs mount placed there.
    public func entries(_ relative: String) -> Result<[Entry], Errno> {
        let mounted = mountedNames(relative)
        return openFolder(relative).flatMap { Self.entries(ofOpenFolder: $0, leavingOut: mounted) }
    }

    /// The entries of an open folder (O_RDONLY | O_DIRECTORY) with their `lstat`, `.` and `..`
    /// left out; takes ownership of `folder` and closes it. An inkyfs mount placed in the
    /// folder (a mountpoint on another device that is one) is left out too.
    /// `leavingOut`: names not even `lstat`ed.
    public static func entries(ofOpenFolder folder: Int32, leavingOut: Set<String> = []) -> Result<[Entry], Errno> {
        var found: [Entry] = []
        var own = stat()
        let device = fstat(folder, &own) == 0 ? own.st_dev : 0
        return forEachName(ofOpenFolder: folder) { name, _, listed in
            guard !leavingOut.contains(name) else { return }
            var info = stat()
            guard fstatat(listed, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return }
            if info.st_dev != device, InkyfsMountTable.shared.isInkyfs(UInt64(info.st_dev)) { return }
            found.append(Entry(name: name, info: info))
        }.map { found }
    }

    /// A folder comic's entries in name order, each with its own `lstat` (a link is a link): the
    /// one listing that the daemon opens a folder comic's pages by and a worker lists them as.
    /// Lists a second descriptor of `folder` (`openat` of ".", not `dup`, which the worker's
    /// seccomp filter refuses) and leaves `folder` open.
    public static func folderComicEntries(of folder: Int32, label: String) throws(ComicError) -> [(name: String, kind: EntryKind, size: Int64)] {
        let listed = openat(folder, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        let found: [Entry]
        switch listed >= 0 ? entries(ofOpenFolder: listed) : .failure(.current) {
        case .success(let value): found = value
        case .failure(let code): throw .io(path: label, errno: code.code, detail: "cannot list the folder: \(code.description)")
        }
        return found.sorted { $0.name < $1.name }.map { item in
            let kind: EntryKind = switch item.info.st_mode & S_IFMT {
            case S_IFREG: .file
            case S_IFDIR: .directory
            case S_IFLNK: .symlink
            default: .other
            }
            return (item.name, kind, Int64(item.info.st_size))
        }
    }

    /// Calls `body` with each name in an open folder but `.` and `..`, its `d_type`, and the
    /// folder's descriptor (for an `*at` call); takes ownership of `folder` and closes it.
    static func forEachName(ofOpenFolder folder: Int32, _ body: (String, UInt8, Int32) -> Void) -> Result<Void, Errno> {
        guard let stream = fdopendir(folder) else {
            let code = Errno.current
            close(folder)
            return .failure(code)
        }
        defer { closedir(stream) }
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            if name == "." || name == ".." { continue }
            body(name, entry.pointee.d_type, dirfd(stream))
        }
        return .success(())
    }

    /// The text of the symlink at `relative`, as stored (never resolved).
    public func linkText(_ relative: String) -> Result<String, Errno> {
        withParent(relative) { parent, name in
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let count = readlinkat(parent, name, &buffer, Int(PATH_MAX))
            guard count >= 0 else { return .failure(.current) }
            return .success(String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
    }

    /// The folder `relative` opened for listing (O_RDONLY | O_DIRECTORY), reached without links.
    /// ELOOP for an inkyfs mount placed in the library (`isInsideInkyfsMount`), never touched.
    public func openFolder(_ relative: String) -> Result<Int32, Errno> {
        guard isFolder else { return .failure(.ENOTDIR) }
        guard !isInsideInkyfsMount(relative) else { return .failure(.ELOOP) }
        return withParent(relative) { parent, name in
            let opened = openat(parent, name.isEmpty ? "." : name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            return opened >= 0 ? .success(opened) : .failure(.current)
        }
    }

    /// The path below the root for an absolute path that starts with it, nil otherwise.
    public func relative(of absolute: String) -> String? {
        if absolute == path { return "" }
        let prefix = path.hasSuffix("/") ? path : path + "/"
        return absolute.hasPrefix(prefix) ? String(absolute.dropFirst(prefix.count)) : nil
    }

    /// Runs `body` with the folder that holds the last component (opened without following any
    /// link on the way) and that component's name ("" for the root itself).
    private func withParent<T>(_ relative: String, _ body: (Int32, String) -> Result<T, Errno>) -> Result<T, Errno> {
        // The common case first: a path whose folder is kept open (its components were checked
        // when it was opened), found without splitting the path.
        if let folders, let slash = relative.utf8.lastIndex(of: UInt8(ascii: "/")) {
            // Bytes, not characters: "/" is one byte in UTF-8, and walking back by grapheme cost
            // a fifth of this lookup.
            let name = String(Substring(relative.utf8[relative.utf8.index(after: slash)...]))
            if !name.isEmpty, name != ".", name != "..", let parent = folders.cached(String(Substring(relative.utf8[..<slash]))) {
                return withExtendedLifetime(parent) { body(parent.fd, name) }
            }
        }
        let parts = relative.split(separator: "/", omittingEmptySubsequences: true)
        guard !parts.contains(".."), !parts.contains(".") else { return .failure(.EACCES) }
        guard let last = parts.last.map(String.init) else { return body(fd, "") }
        if parts.count == 1 { return body(fd, last) }
        return folder(parts.dropLast()).flatMap { parent in withExtendedLifetime(parent) { body(parent.fd, last) } }
    }

    /// The folder `parts` (at least one component) opened pathOnly without following links:
    /// kept open ones reused, the others opened from the nearest one kept (or the root).
    private func folder(_ parts: ArraySlice<Substring>) -> Result<FolderDescriptors.Open, Errno> {
        let key = parts.joined(separator: "/")
        if let open = folders?.cached(key) { return .success(open) }
        let base: FolderDescriptors.Open?
        if parts.count == 1 {
            base = nil
        } else {
            switch folder(parts.dropLast()) {
            case .success(let open): base = open
            case .failure(let code): return .failure(code)
            }
        }
        let opened = openat(base?.fd ?? fd, String(parts.last!), pathOnly | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        // A link where a folder was: ENOTDIR from O_DIRECTORY|O_NOFOLLOW; said as ELOOP.
        let code: Errno = errno == ENOTDIR ? .ELOOP : .current
        withExtendedLifetime(base) {}
        guard opened >= 0 else { return .failure(code) }
        let open = FolderDescriptors.Open(opened)
        folders?.insert(key, open)
        return .success(open)
    }

    /// Opens `name` under `parent` read-only if it is a regular file. O_NONBLOCK keeps a FIFO
    /// swapped in after the listing from blocking the open; it is then refused like any special file.
    private static func openRegular(_ parent: Int32, _ name: String, follow: Bool) -> Result<Int32, Errno> {
        let opened = openat(parent, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | (follow ? 0 : O_NOFOLLOW))
        guard opened >= 0 else { return .failure(.current) }
        var info = stat()
        guard fstat(opened, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            close(opened)
            return .failure(.EACCES)
        }
        _ = fcntl(opened, F_SETFL, O_RDONLY)
        return .success(opened)
    }
}

/// GNU flags Glibc's Swift module leaves out (Linux ABI values, the same on every architecture):
/// O_PATH opens a place without reading it, AT_EMPTY_PATH makes "" name the descriptor itself.
private let pathOnly: Int32 = 0o10_000_000
private let emptyPath: Int32 = 0x1000
