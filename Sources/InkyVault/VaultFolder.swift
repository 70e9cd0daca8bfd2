#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import InkyCore

/// The vault folder, `objects/` and `orphans/`, held open by descriptor and checked.
///
/// The threat model includes someone (or a sync tool) who can write the vault folder. Reached by
/// path, `orphans` could be a symlink to `~/.config/autostart` and the orphan sweep would plant
/// whatever was dropped into `objects/` there. So each folder is opened with
/// `O_DIRECTORY | O_NOFOLLOW` (a symlink is refused, never followed), each must belong to this
/// user (or root) and must not be writable by group or others, and every move works on these
/// descriptors (`fstatat`, `linkat`, `unlinkat`), never on a path that could be swapped.
final class VaultFolder {
    let paths: VaultPaths
    let root: FileDescriptor
    let objects: FileDescriptor
    let orphans: FileDescriptor
    /// Set when the vault folder can be read or searched by group or others (not refused: only
    /// names of random objects show, but the user should know), with the command that fixes it.
    let looseness: String?

    /// Opens and checks the three folders; `objects/` and `orphans/` are made (0700) when missing.
    init(_ paths: VaultPaths) throws(VaultError) {
        self.paths = paths
        root = try Self.openChecked(paths.root, at: nil)
        objects = try Self.openChecked(paths.objects, at: root, create: true)
        orphans = try Self.openChecked(paths.orphans, at: root, create: true)
        let mode = try root.status().st_mode & 0o777
        looseness = mode & 0o077 == 0 ? nil
            : "the vault folder \(paths.root) is mode \(String(mode, radix: 8)); others on this machine can see its"
              + " files (fix: chmod 700 \(paths.root))"
    }

    /// Whether `fstat` of an open folder allows it: owned by us (or root), not writable by group
    /// or others. nil when it does; else what is wrong.
    static func problem(with info: stat) -> String? {
        if (info.st_mode & S_IFMT) != S_IFDIR { return "not a folder" }
        if info.st_uid != geteuid() && info.st_uid != 0 { return "owned by uid \(info.st_uid), not by this user" }
        if info.st_mode & 0o022 != 0 {
            return "writable by \(info.st_mode & 0o002 != 0 ? "everyone" : "its group") (mode \(String(info.st_mode & 0o777, radix: 8)))"
        }
        return nil
    }

    /// `path` opened as a folder without following a symlink (relative to `parent` by its last
    /// component when given), refused unless `problem(with:)` passes.
    static func openChecked(_ path: String, at parent: FileDescriptor?, create: Bool = false) throws(VaultError) -> FileDescriptor {
        let name = DurableFiles.split(path).name
        if create, let parent, mkdirat(parent.raw, name, 0o700) == 0 { try parent.sync() }
        let flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW
        let folder: FileDescriptor
        do throws(VaultError) {
            if let parent {
                folder = try FileDescriptor(at: parent, name: name, path: path, flags: flags)
            } else {
                folder = try FileDescriptor(path: path, flags: flags)
            }
        } catch {
            guard case .io(_, _, let code) = error, [ELOOP, ENOTDIR].contains(code.code) else { throw error }
            var info = stat()
            let isLink = if let parent { fstatat(parent.raw, name, &info, AT_SYMLINK_NOFOLLOW) } else { lstat(path, &info) }
            let what = isLink == 0 && (info.st_mode & S_IFMT) == S_IFLNK ? "a symbolic link" : "not a folder"
            throw .unsafeFolder(path: path, detail: "is \(what); a vault folder is never followed through a link"
                                + (parent == nil ? " (name the folder it points to)" : ""))
        }
        if let problem = problem(with: try folder.status()) {
            throw .unsafeFolder(path: path, detail: problem + (problem.hasPrefix("writable") ? " (fix: chmod 700 \(path))" : ""))
        }
        return folder
    }

    /// Whether a name in `objects/` is one this program writes: an object (32 hex digits) or a
    /// temporary one (`.<object>.inkyfs-tmp-<16 hex digits>`) left by an interrupted add.
    static func isOurs(_ name: String) -> Bool {
        if VaultEntry.isValidName(name) { return true }
        guard name.hasPrefix("."), let marker = name.range(of: DurableFiles.temporaryMarker) else { return false }
        let object = name[name.index(after: name.startIndex)..<marker.lowerBound]
        let suffix = name[marker.upperBound...]
        return VaultEntry.isValidName(String(object)) && suffix.utf8.count == 16 && HexEncoding.decode(String(suffix)) != nil
    }

    /// Whether `name` in `objects/` is a regular file (not a symlink, FIFO or folder).
    func isRegularObject(_ name: String) -> Bool {
        var info = stat()
        return fstatat(objects.raw, name, &info, AT_SYMLINK_NOFOLLOW) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }

    /// What the sweep did: moved (by name in `objects/`), left (names we never write, or files
    /// that are not regular, untouched) and names it could not move (the filesystem has no hard
    /// links: never a rename by path, which could replace what is there).
    struct Sweep {
        var moved: [String] = []
        var foreign: [String] = []
        var unmovable: [String] = []
    }

    /// Moves every object in `objects/` that `known` does not list into `orphans/` by `linkat`
    /// then `unlinkat` on the held descriptors, renaming on collision; never deletes a byte.
    func sweepOrphans(known: Set<String>) throws(VaultError) -> Sweep {
        var sweep = Sweep()
        for name in try DurableFiles.names(in: objects).sorted() where !known.contains(name) {
            guard Self.isOurs(name), isRegularObject(name) else {
                sweep.foreign.append(name)
                continue
            }
            var moved = false
            for _ in 0..<64 {
                let target = DisplayPath.unique(name) { (candidate: String) -> Bool in
                    var info = stat()
                    return fstatat(orphans.raw, candidate, &info, AT_SYMLINK_NOFOLLOW) == 0
                }
                if linkat(objects.raw, name, orphans.raw, target, 0) == 0 {
                    _ = unlinkat(objects.raw, name, 0)
                    moved = true
                    break
                }
                if errno == EEXIST { continue }  // a name appeared between the check and the link
                if [EPERM, ENOTSUP, EOPNOTSUPP, ENOSYS, EMLINK, EXDEV].contains(errno) { break }
                throw .io(path: DurableFiles.join(paths.orphans, target), operation: "link", errno: .current)
            }
            if moved { sweep.moved.append(name) } else { sweep.unmovable.append(name) }
        }
        if !sweep.moved.isEmpty {
            try orphans.sync()
            try objects.sync()
        }
        return sweep
    }

    /// Object names the manifest lists that `objects/` has no regular file for.
    func missing(_ names: [String]) -> [String] { names.filter { !isRegularObject($0) } }
}
