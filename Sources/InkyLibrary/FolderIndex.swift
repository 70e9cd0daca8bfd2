import Foundation
import InkyCore

/// How a real library folder appears under the mount: sub-folders stay folders, comic archives
/// become directories named without their extension (unless that name collides with a sibling,
/// then they keep their full file name), other regular files pass through. Served as CBZ files,
/// comics get `comicSuffix` (".cbz") after that name: `X.cbr` and `X.cbz` side by side become
/// `X.cbr.cbz` and `X.cbz.cbz`; a folder of loose images is then a comic too (`X` → `X.cbz`).
/// Rebuilt only when the folder itself changes (its mtime moves on every add, delete and rename).
///
/// Kept compact, as bytes and not as strings and dictionaries: a 100,000-comic library's folder
/// indexes take ~9 MiB this way against ~30 MiB, so a walk of it keeps them all under the
/// catalog's budget and a second walk reads no folder again. Entry i (in the order of the shown
/// names) is its shown name, its file name, its kind, and for a comic what the folder's listing
/// saw of its file (`ComicCheck`).
struct FolderIndex: Sendable {
    let identity: FileIdentity
    /// The folder, relative to the library ("" for the root).
    let folder: String
    /// How many of its entries are directories under the mount: its folders, and its comics
    /// unless they are served as CBZ files. Its link count is 2 more.
    let subdirectories: Int
    /// Each entry's shown name then its file name, one after the other, as UTF-8.
    private let text: [UInt8]
    /// Entry i's shown name is `text[starts[2i]..<starts[2i+1]]`, its file name up to `starts[2i+2]`.
    private let starts: [UInt32]
    private let kinds: [Kind]
    /// Each comic's check as the listing saw it; an empty one for the other entries.
    private let checks: [ComicCheck]

    private enum Kind: UInt8 { case folder, comic, file, link }

    /// How many entries it shows.
    var count: Int { kinds.count }

    /// Entry `i`'s shown name.
    func name(_ i: Int) -> String { String(decoding: text[Int(starts[2 * i])..<Int(starts[2 * i + 1])], as: UTF8.self) }

    /// Entry `i`'s node: its path is the folder's and its file name.
    func node(_ i: Int) -> Node {
        let file = String(decoding: text[Int(starts[2 * i + 1])..<Int(starts[2 * i + 2])], as: UTF8.self)
        let path = folder.isEmpty ? file : folder + "/" + file
        return switch kinds[i] {
        case .folder: .folder(path)
        case .comic: .comic(.library(path))
        case .file: .file(path)
        case .link: .link(path)
        }
    }

    /// What the folder's listing saw of entry `i`'s file, when it is a comic.
    func check(_ i: Int) -> ComicCheck? { kinds[i] == .comic ? checks[i] : nil }

    /// The shown names, in order.
    var names: [String] { (0..<count).map(name) }

    /// Every entry's shown name and node, in order.
    var entries: [(name: String, node: Node)] { (0..<count).map { (name($0), node($0)) } }

    /// The entry shown as `name`: found as Swift's `String` finds a key (names equal in Unicode
    /// are one), by halving the sorted names.
    func position(of name: String) -> Int? {
        var low = 0, high = count
        while low < high {
            let middle = (low + high) / 2
            let probe = self.name(middle)
            if probe == name { return middle }
            if probe < name { low = middle + 1 } else { high = middle }
        }
        return nil
    }

    /// The entry whose node's path is `path` (a library path in this folder), nil when none is:
    /// by its file name's bytes, then, for a name past ASCII, as `String` compares (the other
    /// Unicode normalization of the same name), without making a string of every entry.
    func position(ofPath path: String) -> Int? {
        guard FolderIndex.folder(holding: path) == folder else { return nil }
        let file = FolderIndex.name(of: path)
        let found = file.utf8.withContiguousStorageIfAvailable { wanted in
            (0..<count).first { text[Int(starts[2 * $0 + 1])..<Int(starts[2 * $0 + 2])].elementsEqual(wanted) }
        } ?? nil
        if let found { return found }
        guard file.utf8.contains(where: { $0 >= 0x80 }) else { return nil }
        return (0..<count).first { String(decoding: text[Int(starts[2 * $0 + 1])..<Int(starts[2 * $0 + 2])], as: UTF8.self) == file }
    }

    /// The entry that is `node` (by its path, then its kind), if any.
    func position(ofNode node: Node) -> Int? {
        guard let path = node.libraryPath, let position = position(ofPath: path), self.node(position) == node else { return nil }
        return position
    }

    /// Whether `node` is one of its entries.
    func contains(_ node: Node) -> Bool { position(ofNode: node) != nil }

    /// The node shown as `name`, if any.
    subscript(name: String) -> Node? { position(of: name).map(node) }

    /// Every entry's node, in order, each made when reached: a walk that stops at the first
    /// comic (a folder's cover, its first subfolder) makes no other entry's path.
    var nodes: LazyMapCollection<Range<Int>, Node> { (0..<count).lazy.map { node($0) } }

    /// What it weighs in memory, in bytes, for the catalog's budget.
    var bytes: Int { 160 + folder.utf8.count + text.count + starts.count * 4 + count * (1 + MemoryLayout<ComicCheck>.stride) }

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
        var candidates: [(name: String, display: String, kind: Kind, check: ComicCheck?)] = []
        for child in children {
            let name = child.name
            let childRelative = relativePath.isEmpty ? name : relativePath + "/" + name
            switch child.info.st_mode & S_IFMT {
            case S_IFDIR where !comicSuffix.isEmpty && !name.hasPrefix(".") && isImageFolder(root, childRelative):
                // Served as files, a folder of loose images is a comic like any archive.
                candidates.append((name, name + comicSuffix, .comic, ComicCheck(child.info)))
                seen(childRelative, child.info)
            case S_IFDIR:
                candidates.append((name, name, .folder, nil))
            case S_IFREG:
                if ComicFiles.isComicFile(name), let stem = ComicFiles.displayStem(name) {
                    candidates.append((name, stem + comicSuffix, .comic, ComicCheck(child.info)))
                    seen(childRelative, child.info)
                } else {
                    candidates.append((name, name, .file, nil))
                }
            case S_IFLNK:
                candidates.append((name, name, .link, nil))
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
        var shown: [String: Int] = [:]
        for (position, candidate) in candidates.enumerated() {
            let short = ComicFiles.printable(candidate.display)
            let full = ComicFiles.printable(candidate.name) + (candidate.kind == .comic ? comicSuffix : "")
            let base = uses[short]! > 1 ? full : short
            // Names that differ only in control characters would still meet: number the later ones.
            var display = base
            var number = 2
            while shown[display] != nil {
                display = "\(base) (\(number))"
                number += 1
            }
            shown[display] = position
        }
        var text: [UInt8] = []
        var starts: [UInt32] = []
        var kinds: [Kind] = []
        var checks: [ComicCheck] = []
        let none = ComicCheck(identity: FileIdentity(size: 0, modifiedNanoseconds: 0, inode: 0),
                              permissions: SourcePermissions(owner: 0, group: 0, mode: 0))
        for (display, position) in shown.sorted(by: { $0.key < $1.key }) {
            let candidate = candidates[position]
            starts.append(UInt32(text.count))
            text += display.utf8
            starts.append(UInt32(text.count))
            text += candidate.name.utf8
            kinds.append(candidate.kind)
            checks.append(candidate.check ?? none)
        }
        starts.append(UInt32(text.count))
        let subdirectories = kinds.count { kind in
            switch kind {
            case .folder: true
            case .comic: comicSuffix.isEmpty
            default: false
            }
        }
        return .success(FolderIndex(identity: identity, folder: relativePath, subdirectories: subdirectories,
                                    text: text, starts: starts, kinds: kinds, checks: checks))
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
