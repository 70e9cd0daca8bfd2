import Foundation
import InkyCore

/// How a real library folder appears under the mount: sub-folders stay folders, comic archives
/// become directories named without their extension (unless that name collides with a sibling,
/// then they keep their full file name), other regular files pass through. Served as CBZ files,
/// comics get `comicSuffix` (".cbz") after that name: `X.cbr` and `X.cbz` side by side become
/// `X.cbr.cbz` and `X.cbz.cbz`; a folder of loose images is then a comic too (`X` → `X.cbz`).
/// Rebuilt only when the
/// folder itself changes (its mtime moves on every add, delete and rename).
struct FolderIndex {
    let identity: FileIdentity
    let names: [String]
    let nodes: [String: Node]
    /// How many of its entries are directories under the mount: its folders, and its comics
    /// unless they are served as CBZ files. Its link count is 2 more.
    let subdirectories: Int

    /// The library folder holding `path` (relative to the library, "" for the root's entries).
    /// By its last '/', not NSString's deletingLastPathComponent (bridging each path was a third
    /// of a metadata view's listing) nor contains("/") (3% of a listing).
    static func folder(holding path: String) -> String {
        path.utf8.lastIndex(of: UInt8(ascii: "/")).map { String(Substring(path.utf8[..<$0])) } ?? ""
    }

    /// The last component of `path` (relative to the library): after its last '/'. Not NSString's
    /// lastPathComponent, which traps on a one-character string in this Foundation (a top-level
    /// folder named "A" changing took the daemon down).
    static func name(of path: String) -> String {
        path.utf8.lastIndex(of: UInt8(ascii: "/")).map { String(Substring(path.utf8[path.utf8.index(after: $0)...])) } ?? path
    }

    /// EACCES (or another errno) when the daemon cannot list the folder: said, not shown empty.
    /// `seen` gets each comic's path and `lstat` as the listing found them (`RecentComicChecks`).
    static func build(root: LibraryRoot, relativePath: String, identity: FileIdentity, comicSuffix: String = "",
                      seen: (String, stat) -> Void = { _, _ in }) -> Result<FolderIndex, Errno> {
        // Each entry as it is (lstat): a symlink stays a link whatever it points at, so no
        // listing ever leads the mount out of the library or around a loop.
        let children: [LibraryRoot.Entry]
        switch root.entries(relativePath) {
        case .success(let value): children = value
        case .failure(let code): return .failure(code)
        }
        var candidates: [(name: String, display: String, node: Node)] = []
        for child in children {
            let name = child.name
            let childRelative = relativePath.isEmpty ? name : relativePath + "/" + name
            switch child.info.st_mode & S_IFMT {
            case S_IFDIR where !comicSuffix.isEmpty && !name.hasPrefix(".") && isImageFolder(root, childRelative):
                // Served as files, a folder of loose images is a comic like any archive.
                candidates.append((name, name + comicSuffix, .comic(.library(childRelative))))
                seen(childRelative, child.info)
            case S_IFDIR:
                candidates.append((name, name, .folder(childRelative)))
            case S_IFREG:
                if ComicFiles.isComicFile(name), let stem = ComicFiles.displayStem(name) {
                    candidates.append((name, stem + comicSuffix, .comic(.library(childRelative))))
                    seen(childRelative, child.info)
                } else {
                    candidates.append((name, name, .file(childRelative)))
                }
            case S_IFLNK:
                candidates.append((name, name, .link(childRelative)))
            default:
                continue // devices, fifos, sockets: nothing a reader needs
            }
        }
        // Two files whose names differ only in Unicode normalization (NFC "Café", NFD "Café")
        // are one name to Swift's String, so to every table keyed by path: showing both would
        // serve one's pages under the other's name. The first in byte order is shown.
        var seen = Set<String>()
        candidates = candidates.sorted { Array($0.name.utf8).lexicographicallyPrecedes($1.name.utf8) }
            .filter { seen.insert($0.name).inserted }
        var uses: [String: Int] = [:]
        for candidate in candidates { uses[ComicFiles.printable(candidate.display), default: 0] += 1 }
        var nodes: [String: Node] = [:]
        for candidate in candidates {
            let short = ComicFiles.printable(candidate.display)
            let isComic = if case .comic = candidate.node { true } else { false }
            let full = ComicFiles.printable(candidate.name) + (isComic ? comicSuffix : "")
            let base = uses[short]! > 1 ? full : short
            // Names that differ only in control characters would still meet: number the later ones.
            var display = base
            var number = 2
            while nodes[display] != nil {
                display = "\(base) (\(number))"
                number += 1
            }
            nodes[display] = candidate.node
        }
        let subdirectories = nodes.values.count { node in
            switch node {
            case .folder: true
            case .comic: comicSuffix.isEmpty
            default: false
            }
        }
        return .success(FolderIndex(identity: identity, names: nodes.keys.sorted(), nodes: nodes, subdirectories: subdirectories))
    }

    /// `FolderComicReader`'s rule (at least one image, nothing but images, hidden names aside),
    /// checked without following links: a link in the folder makes it no comic.
    static func isImageFolder(_ root: LibraryRoot, _ relative: String) -> Bool {
        guard case .success(let entries) = root.entries(relative) else { return false }
        var images = 0
        for entry in entries where !entry.name.hasPrefix(".") {
            guard entry.info.st_mode & S_IFMT == S_IFREG,
                  PageFilter.imageExtensions.contains(EntryPath.lowercasedExtension(of: entry.name)) else { return false }
            images += 1
        }
        return images > 0
    }
}

/// Which library files are comics, and the name their directory gets.
enum ComicFiles {
    /// The comic and archive extensions `scan` knows, PDF included.
    static let extensions = ComicFileNames.extensions

    static func isComicFile(_ name: String) -> Bool {
        extensions.contains(EntryPath.lowercasedExtension(of: name))
    }

    /// The name with control characters (C0, DEL, C1) shown as U+FFFD: a file name under the
    /// mount must never carry a newline into a script or an escape sequence into a terminal.
    static func printable(_ name: String) -> String {
        guard name.unicodeScalars.contains(where: isControl) else { return name }
        return String(String.UnicodeScalarView(name.unicodeScalars.map { isControl($0) ? "\u{FFFD}" : $0 }))
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    /// "Issue 001.cbz" → "Issue 001"; nil when nothing would be left.
    static func displayStem(_ name: String) -> String? {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        return String(name[..<dot])
    }
}
