import Foundation
import InkyCommandLine
import InkyCore
import InkyLibrary
import InkyStore

/// What `vault add` does after the originals are deleted, so their names do not outlive them in
/// plaintext: the state database forgets them (rows, free space and WAL), and the user is told
/// what no program can undo, that the deleted bytes may still be on the disk.
enum VaultAddCleanup {
    /// Every path the state database may key this comic by (as given, and resolved): the
    /// daemon keys comics by the library path it was given, which may run through a symlink.
    static func keys(of comic: String) -> [String] {
        let given = absolutePath(comic)
        guard let resolved = realpath(given, nil) else { return [given] }
        defer { free(resolved) }
        return Array(Set([given, String(cString: resolved)])).sorted()
    }

    /// Removes the comic's cover and converted pages from the caches (`~/.cache/inkyfs/covers`,
    /// `pages`): they are pictures of it in plaintext. The caches key a comic by its path inside
    /// the mounted library, which this command does not know, so every tail of each path is tried
    /// (`Issue.cbz`, `Series/Issue.cbz`, …), with the identity of the file that was encrypted.
    static func purgeCaches(of paths: [String], identity: FileIdentity) {
        let covers = CoverCache(), pages = ConvertedPageCache()
        for path in paths {
            let components = path.split(separator: "/").map(String.init)
            for start in components.indices {
                let relative = components[start...].joined(separator: "/")
                covers.purge(path: relative, identity: identity)
                pages.purge(path: relative, identity: identity)
            }
        }
    }

    static func forget(_ paths: [String], in state: StateOptions) {
        guard !paths.isEmpty else { return }
        // No state database yet: nothing to forget, and none is created for it.
        if FileManager.default.fileExists(atPath: state.databasePath) { purge(paths, state.open()) }
        warn("the deleted originals' bytes may stay on the disk until overwritten (deleting frees, it does not erase);"
             + " on a disk without full-disk encryption, keep private comics off it or overwrite its free space")
    }

    private static func purge(_ paths: [String], _ database: StateDatabase) {
        do throws(SQLiteError) {
            let outcome = try database.purge(paths: paths)
            if !outcome.walTruncated {
                warn("the state database is busy: its journal may keep the old names until the mount ends")
            }
        } catch {
            warn("cannot remove the moved comics from the state database \(database.path): \(error)")
        }
    }

    private static func warn(_ line: String) {
        FileHandle.standardError.write(Data("inkyfs: \(line)\n".utf8))
    }
}
