import Foundation
import InkyCore
import InkyStore
import InkyTree

/// Inode numbers computed from what a node is, so the daemon keeps no node per inode the
/// kernel holds: a page's number is its comic's path number, its generation and its index, and
/// is decoded back without a table. Only paths (folders, files, comics) get a number each, the
/// same for the life of the daemon; the kernel's lookups and FORGETs cost nothing to honour.
///
/// Layout (64 bits): kind (4) | path number (28) | generation (16) | page index (16) for the
/// page-level kinds; kind (4) | path number (60) for the others. The root is always 1. A page
/// index past 65,535 has no number (`--max-pages` stays below it).
///
/// Library paths are numbered by `PathNumbering` (the state database, so a path has the same
/// number, and its nodes the same inodes, in every mount); a bounded cache keeps the numbers in
/// use. Vault nodes are numbered from a separate table in memory that `dropVault` empties at
/// lock: no vault folder name outlives the unlock in here, and none reaches the database.
final class NodeTable: @unchecked Sendable {
    static let rootID: NodeID = 1
    static let maxPageIndex = 0xFFFF
    /// Numbers from here on are made in memory, when the state database cannot number a path:
    /// they never meet the database's, which count from 1.
    static let memoryNumbers: UInt32 = 1 << 27

    private enum Kind: UInt64 {
        case root = 0, folder, file, comic, continueLink, continueReading
        case page, comicInfo, errorText
        case vaultFolder, vaultComic, vaultPage, vaultComicInfo, vaultErrorText
        case link
        /// The last of 16: the view protocol widens the kind field.
        case comicFile
    }

    private let lock = NSLock()
    private let root: Node
    private var libraryNumbers: PathNumbers
    private var vaultNumbers = PathNumbers(store: MemoryPathNumbering())

    init(root: Node, numbering: any PathNumbering = MemoryPathNumbering()) {
        self.root = root
        libraryNumbers = PathNumbers(store: numbering)
    }

    /// Numbers the library paths of `nodes` in one go (a folder's listing): one transaction
    /// instead of one per child.
    func prepare(_ nodes: some Sequence<Node>) {
        let paths = nodes.compactMap { node -> String? in
            switch node {
            case .folder(let path), .file(let path), .comic(.library(let path)): path
            default: nil
            }
        }
        lock.withLock { libraryNumbers.prepare(paths) }
    }

    func id(for node: Node) -> NodeID {
        if node == root { return Self.rootID }
        return lock.withLock {
            switch node {
            case .folder(let path): Self.pack(.folder, libraryNumbers.number(path))
            case .file(let path): Self.pack(.file, libraryNumbers.number(path))
            case .link(let path): Self.pack(.link, libraryNumbers.number(path))
            case .continueLink(let path): Self.pack(.continueLink, libraryNumbers.number(path))
            case .continueReading: Self.pack(.continueReading, 0)
            case .vaultFolder(let path): Self.pack(.vaultFolder, vaultNumbers.number(path))
            case .comic(.library(let path)): Self.pack(.comic, libraryNumbers.number(path))
            case .comic(.vault(let name)): Self.pack(.vaultComic, vaultNumbers.number(name))
            case .page(let comic, let generation, let index):
                pagePack(comic, .page, .vaultPage, generation, index)
            case .comicInfo(let comic, let generation):
                pagePack(comic, .comicInfo, .vaultComicInfo, generation, 0)
            case .errorText(let comic, let generation):
                pagePack(comic, .errorText, .vaultErrorText, generation, 0)
            case .comicFile(let comic, let generation):
                // Only library comics are served as files; a vault comic has no such node.
                pagePack(comic, .comicFile, .comicFile, generation, 0)
            }
        }
    }

    func node(_ id: NodeID) -> Node? {
        if id == Self.rootID { return root }
        guard let kind = Kind(rawValue: id >> 60) else { return nil }
        let low = id & (1 << 60 - 1)
        let pathNumber = UInt32(truncatingIfNeeded: low >> 32)
        let generation = Int((low >> 16) & 0xFFFF)
        let index = Int(low & 0xFFFF)
        return lock.withLock { () -> Node? in
            func library(_ number: UInt64) -> String? { number <= UInt32.max ? libraryNumbers.path(UInt32(number)) : nil }
            func vault(_ number: UInt64) -> String? { number <= UInt32.max ? vaultNumbers.path(UInt32(number)) : nil }
            switch kind {
            case .root: return nil
            case .folder: return library(low).map(Node.folder)
            case .file: return library(low).map(Node.file)
            case .link: return library(low).map(Node.link)
            case .comic: return library(low).map { .comic(.library($0)) }
            case .continueLink: return library(low).map { .continueLink(comic: $0) }
            case .continueReading: return low == 0 ? .continueReading : nil
            case .vaultFolder: return vault(low).map(Node.vaultFolder)
            case .vaultComic: return vault(low).map { .comic(.vault($0)) }
            case .page: return library(UInt64(pathNumber)).map { .page(comic: .library($0), generation: generation, index: index) }
            case .comicInfo: return library(UInt64(pathNumber)).map { .comicInfo(comic: .library($0), generation: generation) }
            case .errorText: return library(UInt64(pathNumber)).map { .errorText(comic: .library($0), generation: generation) }
            case .vaultPage: return vault(UInt64(pathNumber)).map { .page(comic: .vault($0), generation: generation, index: index) }
            case .vaultComicInfo: return vault(UInt64(pathNumber)).map { .comicInfo(comic: .vault($0), generation: generation) }
            case .vaultErrorText: return vault(UInt64(pathNumber)).map { .errorText(comic: .vault($0), generation: generation) }
            case .comicFile: return library(UInt64(pathNumber)).map { .comicFile(comic: .library($0), generation: generation) }
            }
        }
    }

    /// Whether `id` numbers a file of a vault comic, known or not: once the vault is locked its
    /// numbers decode to nothing, but a reader holding such a file open gets EIO (the content
    /// is gone), not ENOENT (which says the name went away).
    func isVaultFile(_ id: NodeID) -> Bool {
        guard let kind = Kind(rawValue: id >> 60) else { return false }
        return [.vaultPage, .vaultComicInfo, .vaultErrorText].contains(kind)
    }

    /// The kernel got a counted reference (readdirplus). Numbers are computed, so there is
    /// nothing to keep; the call is where a table of held nodes would count.
    func remember(_ id: NodeID) {}

    /// The kernel dropped references: nothing is held per inode, so nothing is freed.
    func forget(_ id: NodeID, count: UInt64) {}

    /// Every vault number handed out since the last lock, then none: lock tells the kernel to
    /// forget them and the names behind them go. The numbers are never handed out again in
    /// this daemon: a name the kernel still held from before the lock (a lookup racing it)
    /// must not lead to another comic that happens to get its number after the next unlock.
    func dropVault() -> [NodeID] {
        lock.withLock {
            let numbered = vaultNumbers.all
            let ids = numbered.flatMap { number, _ in
                [Kind.vaultFolder, .vaultComic].map { Self.pack($0, number) }
            }
            let next = (numbered.map(\.0).max() ?? 0) + 1
            vaultNumbers = PathNumbers(store: MemoryPathNumbering(first: max(next, vaultNumbers.first)))
            return ids
        }
    }

    private func pagePack(_ comic: ComicRef, _ libraryKind: Kind, _ vaultKind: Kind, _ generation: Int, _ index: Int) -> NodeID {
        let (kind, number) = switch comic {
        case .library(let path): (libraryKind, libraryNumbers.number(path))
        case .vault(let name): (vaultKind, vaultNumbers.number(name))
        }
        precondition(number < 1 << 28, "more than 2^28 library paths")
        return kind.rawValue << 60 | UInt64(number) << 32 | UInt64(generation & 0xFFFF) << 16 | UInt64(min(index, Self.maxPageIndex))
    }

    private static func pack(_ kind: Kind, _ number: UInt32) -> NodeID { kind.rawValue << 60 | UInt64(number) }
}

/// Where library paths get their numbers, and back.
protocol PathNumbering: Sendable {
    /// Numbers for `paths`, new ones for paths never seen (in one go); may leave out a path
    /// it cannot number, which then gets no node.
    func numbers(_ paths: [String]) -> [String: UInt32]
    func path(_ number: UInt32) -> String?
}

/// Numbers in memory, in the order paths are first seen, from `first`: for the vault, and for
/// a library mounted without a state database.
final class MemoryPathNumbering: PathNumbering, @unchecked Sendable {
    private let lock = NSLock()
    private var numbers: [String: UInt32] = [:]
    private var paths: [String] = []
    let first: UInt32

    init(first: UInt32 = 1) { self.first = first }

    func numbers(_ paths: [String]) -> [String: UInt32] {
        lock.withLock {
            var found: [String: UInt32] = [:]
            for path in paths {
                if let number = numbers[path] { found[path] = number; continue }
                let number = first + UInt32(self.paths.count)
                self.paths.append(path)
                numbers[path] = number
                found[path] = number
            }
            return found
        }
    }

    func path(_ number: UInt32) -> String? {
        lock.withLock { number >= first && Int(number - first) < paths.count ? paths[Int(number - first)] : nil }
    }

    var all: [(UInt32, String)] { lock.withLock { numbers.map { ($0.value, $0.key) } } }
}

/// The numbers in use, both ways, in front of the numbering: cleared when it passes `limit`
/// entries (the numbering answers again), so it never grows with the library.
private struct PathNumbers {
    static let limit = 65_536
    let store: any PathNumbering
    private var numbers: [String: UInt32] = [:]
    private var paths: [UInt32: String] = [:]

    init(store: any PathNumbering) { self.store = store }

    mutating func number(_ path: String) -> UInt32 {
        if let number = numbers[path] { return number }
        prepare([path])
        return numbers[path] ?? 0
    }

    mutating func prepare(_ wanted: [String]) {
        let missing = wanted.filter { numbers[$0] == nil }
        guard !missing.isEmpty else { return }
        if numbers.count + missing.count > Self.limit { numbers.removeAll(); paths.removeAll() }
        for (path, number) in store.numbers(missing) { remember(path, number) }
    }

    mutating func path(_ number: UInt32) -> String? {
        if let path = paths[number] { return path }
        guard let path = store.path(number) else { return nil }
        remember(path, number)
        return path
    }

    private mutating func remember(_ path: String, _ number: UInt32) {
        numbers[path] = number
        paths[number] = path
    }

    /// Every number handed out (the vault's: forgotten at lock).
    var all: [(UInt32, String)] { (store as? MemoryPathNumbering)?.all ?? paths.map { ($0.key, $0.value) } }

    /// The first number the store hands out (memory numbering).
    var first: UInt32 { (store as? MemoryPathNumbering)?.first ?? 1 }
}

/// Library paths numbered by the state database: the same numbers in every mount. A path the
/// database cannot number (it failed) is numbered in memory, from `NodeTable.memoryNumbers`.
final class StoredPathNumbering: PathNumbering, @unchecked Sendable {
    private let root: String
    private let state: StateDatabase
    private let fallback = MemoryPathNumbering(first: NodeTable.memoryNumbers)

    init(root: String, state: StateDatabase) {
        self.root = root
        self.state = state
    }

    func numbers(_ paths: [String]) -> [String: UInt32] {
        let files = paths.map(file)
        guard let stored = state.nodeNumbers(files) else { return fallback.numbers(paths) }
        var numbers: [String: UInt32] = [:]
        for (path, file) in zip(paths, files) { numbers[path] = stored[file] }
        return numbers
    }

    func path(_ number: UInt32) -> String? {
        if number >= NodeTable.memoryNumbers { return fallback.path(number) }
        guard let path = state.nodePath(number)?.path else { return nil }
        if path == root { return "" }
        return path.hasPrefix(root + "/") ? String(path.dropFirst(root.count + 1)) : nil
    }

    private func file(_ relative: String) -> LibraryFile {
        LibraryFile(path: relative.isEmpty ? root : root + "/" + relative)
    }
}
