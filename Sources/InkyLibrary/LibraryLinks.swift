import Foundation
import InkyCore
import InkyTree

/// Symlinks in the library. The daemon never follows one: each is shown as a symlink, and the
/// reader's kernel follows it with the reader's own rights.
///
/// - A link whose target lies inside the library gets a target text rewritten to the same
///   place under the mount (`Series/Issue 001.cbz` → `Series/Issue 001`, the comic's directory;
///   an absolute path into the library becomes relative), so it works as it does in the library.
///   Following it walks nodes of the mount, each with its source's permissions.
/// - Any other link keeps its original text (`/etc/shadow`, `../../elsewhere`): the reader's
///   kernel resolves it outside the mount, with the reader's rights, exactly as in the library.
///
/// Since no link is ever a directory of the mount, the mount is a tree: a link loop such as
/// `loop -> .` is a link to `.`, and `find`, `du`, `ls -R` or `rsync -a` walk each folder once.
extension LibraryFilesystem {
    func linkAttributes(_ path: String) -> Result<NodeAttributes, Errno> {
        let info: stat
        switch sourceStatus(path, type: S_IFLNK) {
        case .success(let value): info = value
        case .failure(let code): return .failure(code)
        }
        let size: Int64 = switch libraryLinkTarget(path) {
        case .success(let text): Int64(text.utf8.count)
        case .failure: Int64(info.st_size)
        }
        return .success(NodeAttributes(kind: .symlink, size: size, permissions: 0o777,
                                       modifiedNanoseconds: FileIdentity(info).modifiedNanoseconds,
                                       entryTimeout: treeTimeout, attributeTimeout: treeTimeout,
                                       owner: info.st_uid, group: info.st_gid))
    }

    /// What `readlink` shows for the library link at `path`.
    func libraryLinkTarget(_ path: String) -> Result<String, Errno> {
        root.linkText(path).map { text in
            guard let target = Self.libraryPath(of: text, linkAt: path, root: root), let shown = mountPath(of: target) else { return text }
            let depth = path.split(separator: "/").count - 1
            let up = Array(repeating: "..", count: depth)
            let components = up + (shown.isEmpty ? [] : [shown])
            return components.isEmpty ? "." : components.joined(separator: "/")
        }
    }

    /// The path below the root that link text `text` of the link at `link` names, worked out
    /// on the text alone; nil when it leaves the library (or is an absolute path elsewhere).
    static func libraryPath(of text: String, linkAt link: String, root: LibraryRoot) -> String? {
        var parts: [Substring]
        if text.hasPrefix("/") {
            guard let inside = root.relative(of: text) else { return nil }
            parts = []
            return normalized(inside, from: &parts)
        }
        parts = link.split(separator: "/").dropLast()
        return normalized(text, from: &parts)
    }

    private static func normalized(_ text: String, from parts: inout [Substring]) -> String? {
        for component in text.split(separator: "/") {
            switch component {
            case ".": continue
            case "..":
                guard !parts.isEmpty else { return nil }
                parts.removeLast()
            default: parts.append(component)
            }
        }
        return parts.joined(separator: "/")
    }

    /// The mount's path for library path `target` (folders keep their names, comics lose their
    /// extension unless it collides); nil when some part of it is not shown.
    func mountPath(of target: String) -> String? {
        var folder = ""
        var shown: [String] = []
        for component in target.split(separator: "/") {
            let child = folder.isEmpty ? String(component) : folder + "/" + component
            guard case .success(let index) = folderIndex(folder),
                  let position = index.position(ofPath: child) else { return nil }
            let name = index.name(position)
            shown.append(name)
            folder = child
        }
        return shown.joined(separator: "/")
    }
}

extension Node {
    /// The library path of a node of the library tree itself.
    var libraryPath: String? {
        switch self {
        case .folder(let path), .file(let path), .link(let path), .comic(.library(let path)): path
        default: nil
        }
    }
}
