import Foundation

extension LibraryRoot {
    /// Walks folder `start` and the folders below it, depth first in no particular order,
    /// never through a link (entries are `lstat`ed) and never into a folder already on the
    /// current path (a bind mount of an ancestor would otherwise nest forever). `visit` gets
    /// each folder's path below the root and its entries, and returns the names of the
    /// sub-folders to enter (nil: every one). A folder that cannot be listed is passed over.
    public func walk(from start: String = "", _ visit: (String, [Entry]) -> [String]?) {
        var ancestors: [(device: UInt64, inode: UInt64)] = []
        walk(start, &ancestors, visit)
    }

    private func walk(_ folder: String, _ ancestors: inout [(device: UInt64, inode: UInt64)],
                      _ visit: (String, [Entry]) -> [String]?) {
        guard case .success(let info) = status(folder), info.st_mode & S_IFMT == S_IFDIR else { return }
        let here = (device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
        guard !ancestors.contains(where: { $0 == here }) else { return }
        guard case .success(let entries) = entries(folder) else { return }
        let folders = entries.filter { $0.info.st_mode & S_IFMT == S_IFDIR }.map(\.name)
        let chosen = visit(folder, entries) ?? folders
        let isFolder = Set(folders)
        ancestors.append(here)
        for name in chosen where isFolder.contains(name) {
            walk(folder.isEmpty ? name : folder + "/" + name, &ancestors, visit)
        }
        ancestors.removeLast()
    }
}
