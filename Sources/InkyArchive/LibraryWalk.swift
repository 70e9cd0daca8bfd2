import Foundation
import InkyCore

/// The comics of a library folder: archive files with a comic or archive extension (their
/// content then decides the format) and folders holding only images. Hidden names are skipped.
/// A LIBRARY that is itself a comic file yields just that comic.
public enum LibraryWalk {
    public static func comics(in library: String) throws(ComicError) -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: library, isDirectory: &isDirectory) else {
            throw .io(path: library, errno: ENOENT, detail: "no such file or folder")
        }
        guard isDirectory.boolValue else { return [library] }
        var found: [String] = []
        if FolderComicReader.isImageFolder(library) { found.append(library) }
        try collect(library, into: &found)
        let keyed = Array(zip(NaturalOrder.sortKeys(for: found), found))
        return keyed.sorted { NaturalOrder.compare($0.0, $1.0) == .orderedAscending }.map(\.1)
    }

    private static func collect(_ folder: String, into found: inout [String]) throws(ComicError) {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: folder)
        } catch {
            throw .io(path: folder, errno: EACCES, detail: "cannot list the folder")
        }
        for name in names where !name.hasPrefix(".") {
            let path = folder + "/" + name
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { continue }
            if isDirectory.boolValue {
                if FolderComicReader.isImageFolder(path) {
                    found.append(path)
                } else {
                    try? collect(path, into: &found)
                }
            } else if ComicOpener.looksLikeComicFile(name) {
                found.append(path)
            }
        }
    }
}
