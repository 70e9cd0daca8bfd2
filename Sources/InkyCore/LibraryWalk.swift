import Foundation

/// The comics of a library folder: archive files with a comic or archive extension (their
/// content then decides the format) and folders holding only images. Hidden names are skipped.
/// A LIBRARY that is itself a comic file yields just that comic.
public enum LibraryWalk {
    /// Symlinks are never followed (a link to a comic elsewhere in the library is found where
    /// the comic is; one out of the library or around a loop is not found at all), and a folder
    /// already on the path is not entered again (`LibraryRoot.walk`). `followingFileLinks`
    /// (`inkyfs scan`, which reads with its user's rights what its user named) takes a link to a
    /// comic file as that comic; a linked folder is still never entered, so loops cannot be.
    public static func comics(in library: String, followingFileLinks: Bool = false) throws(ComicError) -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: library, isDirectory: &isDirectory) else {
            throw .io(path: library, errno: ENOENT, detail: "no such file or folder")
        }
        guard isDirectory.boolValue else { return [library] }
        let root = LibraryRoot(path: library)
        guard case .success = root.entries("") else { throw .io(path: library, errno: EACCES, detail: "cannot list the folder") }
        var found: [String] = []
        if ComicFileNames.isImageFolder(library) { found.append(library) }
        root.walk { folder, entries in
            let base = folder.isEmpty ? library : library + "/" + folder
            var enter: [String] = []
            for entry in entries where !entry.name.hasPrefix(".") {
                let path = base + "/" + entry.name
                switch entry.info.st_mode & S_IFMT {
                case S_IFDIR:
                    if ComicFileNames.isImageFolder(path) { found.append(path) } else { enter.append(entry.name) }
                case S_IFREG where ComicFileNames.looksLikeComic(entry.name):
                    found.append(path)
                case S_IFLNK where followingFileLinks && ComicFileNames.looksLikeComic(entry.name):
                    var target = stat()
                    if stat(path, &target) == 0, target.st_mode & S_IFMT == S_IFREG { found.append(path) }
                default:
                    continue
                }
            }
            return enter
        }
        let keyed = Array(zip(NaturalOrder.sortKeys(for: found), found))
        return keyed.sorted { NaturalOrder.compare($0.0, $1.0) == .orderedAscending }.map(\.1)
    }
}
