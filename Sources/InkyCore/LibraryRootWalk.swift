import Foundation

extension LibraryRoot {
    /// Walks folder `start` and the folders below it, depth first in no particular order,
    /// never through a link (entries are `lstat`ed) and never into a folder already on the
    /// current path (a bind mount of an ancestor would otherwise nest forever), nor into an
    /// inkyfs mount however it was placed there (`isInkyfsMount`). `visit` gets
    /// each folder's path below the root and its entries, and returns the names of the
    /// sub-folders to enter (nil: every one). A folder that cannot be listed is passed over.
    public func walk(from start: String = "", _ visit: (String, [Entry]) -> [String]?) {
        var ancestors: [(device: UInt64, inode: UInt64)] = []
        walk(start, &ancestors, list: entries, isFolder: { $0.info.st_mode & S_IFMT == S_IFDIR }, name: \.name) { folder, _, entries in
            visit(folder, entries)
        }
    }

    /// A name in a folder, and whether it is a folder itself (never a link to one).
    public struct Name {
        public var name: String
        public var isFolder: Bool
    }

    /// `walk` for callers that need names alone: an entry's type comes from the folder's own
    /// listing (`d_type`), and only a filesystem that leaves it unknown has the entry
    /// `lstat`ed. Watching a cold 100,000-comic library walked its 4,000 folders in 1.0 s
    /// this way, and in 1.5 s `lstat`ing every comic. `visit` also gets the folder's device
    /// (`st_dev`), from the `lstat` the walk makes of each folder anyway.
    public func walkNames(from start: String = "", _ visit: (String, UInt64, [Name]) -> [String]?) {
        var ancestors: [(device: UInt64, inode: UInt64)] = []
        walk(start, &ancestors, list: names, isFolder: \.isFolder, name: \.name, visit)
    }

    private func walk<Item>(_ folder: String, _ ancestors: inout [(device: UInt64, inode: UInt64)],
                            list: (String) -> Result<[Item], Errno>, isFolder: (Item) -> Bool, name: (Item) -> String,
                            _ visit: (String, UInt64, [Item]) -> [String]?) {
        guard !isInsideInkyfsMount(folder), case .success(let info) = status(folder), info.st_mode & S_IFMT == S_IFDIR,
              !isInkyfsMount(info) else { return }
        let here = (device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
        guard !ancestors.contains(where: { $0 == here }) else { return }
        guard case .success(let items) = list(folder) else { return }
        let folders = items.filter(isFolder).map(name)
        let chosen = visit(folder, here.device, items) ?? folders
        let isSubfolder = Set(folders)
        ancestors.append(here)
        for next in chosen where isSubfolder.contains(next) {
            walk(folder.isEmpty ? next : folder + "/" + next, &ancestors, list: list, isFolder: isFolder, name: name, visit)
        }
        ancestors.removeLast()
    }

    /// The names in folder `relative`, `.` and `..` left out, typed by `d_type` where the
    /// filesystem gives it and by `lstat` where it does not; inkyfs mounts placed there left out.
    public func names(_ relative: String) -> Result<[Name], Errno> {
        let mounted = mountedNames(relative)
        return openFolder(relative).flatMap { folder in
            var found: [Name] = []
            return Self.forEachName(ofOpenFolder: folder) { name, type, listed in
                guard !mounted.contains(name) else { return }
                switch Int32(type) {
                case Int32(DT_DIR): found.append(Name(name: name, isFolder: true))
                case Int32(DT_UNKNOWN):
                    var info = stat()
                    guard fstatat(listed, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return }
                    found.append(Name(name: name, isFolder: info.st_mode & S_IFMT == S_IFDIR))
                default: found.append(Name(name: name, isFolder: false))
                }
            }.map { found }
        }
    }
}
