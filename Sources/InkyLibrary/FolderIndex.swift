import Foundation
import InkyArchive
import InkyCore

/// How a real library folder appears under the mount: sub-folders stay folders, comic archives
/// become directories named without their extension (unless that name collides with a sibling,
/// then they keep their full file name), other regular files pass through. Rebuilt only when the
/// folder itself changes (its mtime moves on every add, delete and rename).
struct FolderIndex {
    let identity: FileIdentity
    let names: [String]
    let nodes: [String: Node]

    static func build(realPath: String, relativePath: String, identity: FileIdentity) -> FolderIndex {
        let children = (try? FileManager.default.contentsOfDirectory(atPath: realPath)) ?? []
        var candidates: [(name: String, display: String, node: Node)] = []
        for name in children {
            let childRelative = relativePath.isEmpty ? name : relativePath + "/" + name
            var info = stat()
            guard stat(realPath + "/" + name, &info) == 0 else { continue }
            switch info.st_mode & S_IFMT {
            case S_IFDIR:
                candidates.append((name, name, .folder(childRelative)))
            case S_IFREG:
                if ComicFiles.isComicFile(name), let stem = ComicFiles.displayStem(name) {
                    candidates.append((name, stem, .comic(childRelative)))
                } else {
                    candidates.append((name, name, .file(childRelative)))
                }
            default:
                continue // devices, fifos, sockets: nothing a reader needs
            }
        }
        var uses: [String: Int] = [:]
        for candidate in candidates { uses[candidate.display, default: 0] += 1 }
        var nodes: [String: Node] = [:]
        for candidate in candidates {
            let display = uses[candidate.display]! > 1 ? candidate.name : candidate.display
            nodes[display] = candidate.node
        }
        return FolderIndex(identity: identity, names: nodes.keys.sorted(), nodes: nodes)
    }
}

/// Which library files are comics, and the name their directory gets.
enum ComicFiles {
    /// The comic and archive extensions `scan` knows, PDF included.
    static let extensions = ComicOpener.comicExtensions

    static func isComicFile(_ name: String) -> Bool {
        extensions.contains(EntryPath.lowercasedExtension(of: name))
    }

    /// "Issue 001.cbz" → "Issue 001"; nil when nothing would be left.
    static func displayStem(_ name: String) -> String? {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        return String(name[..<dot])
    }
}
