import Foundation
import InkyCore
import InkyLibrary
import InkyStore
import InkyTree
import Synchronization

/// Inode numbers computed from what a node is, so the daemon keeps no node per inode the
/// kernel holds: a page's number is its comic's path number, its generation and its index, and
/// is decoded back without a table. Only paths (folders, files, comics) get a number each, the
/// same for the life of the daemon; the kernel's lookups and FORGETs cost nothing to honour.
///
/// Layout (64 bits): view slot (8, `ViewSlot`) | kind (4) | path number (24) | generation (12) |
/// page index (16) for the page-level kinds; slot | kind | path number (52) for the others.
/// Library nodes are in the base slot (0), whose root is the mount's root (1); vault nodes in
/// the slot of the `Vault/` view (`VaultView`), whose root is that slot's root. A page index past
/// 65,535 has no number (`--max-pages` stays below it). The generation's 12 bits
/// (`ComicGenerations`) tell a changed comic's pages apart here: the kernel gets the file's whole
/// hash (`NodeAttributes.generation`).
///
/// Library paths are numbered by `PathNumbering` (the state database, so a path has the same
/// number, and its nodes the same inodes, in every mount); a bounded cache keeps the numbers in
/// use. Vault nodes are numbered from a separate table in memory that `dropVault` empties at
/// lock: no vault folder name outlives the unlock in here, and none reaches the database.
final class NodeTable: Sendable {
    static let rootID: NodeID = 1
    static let maxPageIndex = 0xFFFF
    static let generationMask = 0xFFF
    static let pathNumberLimit: UInt32 = 1 << 24
    /// Numbers from here on are made in memory, when the state database cannot number a path
    /// (or its number is past what fits): they never meet the database's, which count from 1.
    static let memoryNumbers: UInt32 = 1 << 23

    /// In the vault's slot the same kinds are its folders, comics and their files.
    private enum Kind: UInt64 {
        case root = 0, folder, file, comic, link
        case page, comicInfo, errorText
        /// A comic as one CBZ file (`--as cbz`): library comics only.
        case comicFile
        /// `folder.jpg` and `.directory` of a series folder, `.directory` of a comic (`LibraryCovers`).
        case folderCover, folderDesktop, comicDesktop
    }

    private static let kindShift: UInt64 = 52

    private let root: Node
    private struct State {
        var libraryNumbers: PathNumbers
        var vaultNumbers = PathNumbers(store: MemoryPathNumbering())
        /// Where vault nodes are numbered: the `Vault/` view's slot, set when it is attached.
        var vaultSlot = ViewSlot(255)
    }
    /// Held while a number is looked up, and while the numbering asked (the state database) answers.
    private let state: Mutex<State>

    init(root: Node, numbering: any PathNumbering = MemoryPathNumbering()) {
        self.root = root
        state = Mutex(State(libraryNumbers: PathNumbers(store: numbering)))
    }

    func setVaultSlot(_ slot: ViewSlot) { state.withLock { $0.vaultSlot = slot } }

    /// Numbers the library paths of `nodes` in one go (a folder's listing): one transaction
    /// instead of one per child.
    func prepare(_ nodes: some Sequence<Node>) {
        numberLibraryPaths(nodes.compactMap(\.libraryPathNumbered))
    }

    /// Numbers the library paths not numbered yet, reading the database outside the table's
    /// lock, which every request takes: listing ahead numbered the next folder's comics one
    /// database read at a time under it, and 1 in 10 comic listings waited 40 µs or more.
    private func numberLibraryPaths(_ paths: [String]) {
        let (missing, store) = state.withLock { ($0.libraryNumbers.missing(paths), $0.libraryNumbers.store) }
        guard !missing.isEmpty else { return }
        let found = store.numbers(missing)
        state.withLock { $0.libraryNumbers.remember(found) }
    }

    /// A library path's number and back, for views that number their nodes after comics.
    func pathNumber(_ path: String) -> UInt32 { state.withLock { $0.libraryNumbers.number(path) } }
    func libraryPath(_ number: UInt32) -> String? { state.withLock { $0.libraryNumbers.path(number) } }

    func id(for node: Node) -> NodeID {
        if node == root { return Self.rootID }
        if let path = node.libraryPathNumbered { numberLibraryPaths([path]) }
        return state.withLock { Self.numbered(node, &$0) }
    }

    /// The numbers of many nodes, numbered and packed under one hold of the lock: a comic's
    /// files, which share their comic's path (one lock per page was a tenth of a listing's time).
    /// Each path is looked up once when all are known (a folder listed again), which is most of
    /// the time: looking up which are missing first, then each number, hashed every path twice.
    /// A comic's files, one after another, look up their comic's path once (a comic of 16 pages
    /// hashed its path 32 times).
    func ids(for nodes: [Node]) -> [NodeID] {
        let known = state.withLock { s -> [NodeID]? in
            var ids: [NodeID] = []
            ids.reserveCapacity(nodes.count)
            var comic: (path: String, number: UInt32)?
            for node in nodes {
                guard node != root else { ids.append(Self.rootID); continue }
                if let (kind, path) = Self.libraryPathKind(node) {
                    guard let number = s.libraryNumbers.known(path) else { return nil }
                    ids.append(Self.pack(.base, kind, number))
                } else if let file = Self.libraryComicFile(node) {
                    if comic?.path != file.comic {
                        guard let number = s.libraryNumbers.known(file.comic) else { return nil }
                        comic = (file.comic, number)
                    }
                    ids.append(Self.pagePack(.base, file.kind, comic!.number, file.generation, file.index))
                } else {
                    ids.append(Self.numbered(node, &s))  // a vault node: numbered in memory
                }
            }
            return ids
        }
        if let known { return known }
        var paths: [String] = []
        for node in nodes {
            if let path = node.libraryPathNumbered, paths.last != path { paths.append(path) }
        }
        numberLibraryPaths(paths)
        return state.withLock { s in nodes.map { $0 == root ? Self.rootID : Self.numbered($0, &s) } }
    }

    /// A library node numbered by its own path alone (no generation, no page), with its kind.
    private static func libraryPathKind(_ node: Node) -> (Kind, String)? {
        switch node {
        case .folder(let path): (.folder, path)
        case .file(let path): (.file, path)
        case .link(let path): (.link, path)
        case .comic(.library(let path)): (.comic, path)
        case .folderCover(let path): (.folderCover, path)
        case .folderDesktop(let path): (.folderDesktop, path)
        default: nil
        }
    }

    /// A file of a comic (page-level kinds): its kind, comic, generation and index.
    private static func comicFile(_ node: Node) -> (kind: Kind, comic: ComicRef, generation: Int, index: Int)? {
        switch node {
        case .page(let comic, let generation, let index): (.page, comic, generation, index)
        case .comicInfo(let comic, let generation): (.comicInfo, comic, generation, 0)
        case .errorText(let comic, let generation): (.errorText, comic, generation, 0)
        case .comicFile(let comic, let generation): (.comicFile, comic, generation, 0)
        case .comicDesktop(let comic, let generation): (.comicDesktop, comic, generation, 0)
        default: nil
        }
    }

    /// A file of a library comic, with its comic's path.
    private static func libraryComicFile(_ node: Node) -> (kind: Kind, comic: String, generation: Int, index: Int)? {
        guard let file = comicFile(node), case .library(let path) = file.comic else { return nil }
        return (file.kind, path, file.generation, file.index)
    }

    /// `node`'s number, its path numbered already; the lock held.
    private static func numbered(_ node: Node, _ s: inout State) -> NodeID {
        if let (kind, path) = libraryPathKind(node) { return pack(.base, kind, s.libraryNumbers.number(path)) }
        if let file = comicFile(node) {
            let (slot, number) = switch file.comic {
            case .library(let path): (ViewSlot.base, s.libraryNumbers.number(path))
            case .vault(let name): (s.vaultSlot, s.vaultNumbers.number(name))
            }
            return pagePack(slot, file.kind, number, file.generation, file.index)
        }
        return switch node {
        case .vaultFolder(""): s.vaultSlot.rootID
        case .vaultFolder(let path): Self.pack(s.vaultSlot, .folder, s.vaultNumbers.number(path))
        case .comic(.vault(let name)): Self.pack(s.vaultSlot, .comic, s.vaultNumbers.number(name))
        case .vaultFolderCover(let path): Self.pack(s.vaultSlot, .folderCover, s.vaultNumbers.number(path))
        case .vaultFolderDesktop(let path): Self.pack(s.vaultSlot, .folderDesktop, s.vaultNumbers.number(path))
        case .folder, .file, .link, .comic(.library), .folderCover, .folderDesktop:
            preconditionFailure("numbered by its path (libraryPathKind)")
        case .page, .comicInfo, .errorText, .comicFile, .comicDesktop:
            preconditionFailure("numbered with its comic (comicFile)")
        }
    }

    func node(_ id: NodeID) -> Node? {
        if id == Self.rootID { return root }
        let slot = ViewSlot(of: id)
        let local = slot.local(id)
        guard let kind = Kind(rawValue: local >> Self.kindShift) else { return nil }
        let low = local & (1 << Self.kindShift - 1)
        let pathNumber = UInt32(truncatingIfNeeded: low >> 28)
        let generation = Int((low >> 16) & UInt64(Self.generationMask))
        let index = Int(low & 0xFFFF)
        return state.withLock { s -> Node? in
            func library(_ number: UInt64) -> String? { number <= UInt32.max ? s.libraryNumbers.path(UInt32(number)) : nil }
            func vault(_ number: UInt64) -> String? { number <= UInt32.max ? s.vaultNumbers.path(UInt32(number)) : nil }
            if slot == s.vaultSlot {
                switch kind {
                case .root: return local == 1 ? .vaultFolder("") : nil
                case .folder: return vault(low).map(Node.vaultFolder)
                case .comic: return vault(low).map { .comic(.vault($0)) }
                case .page: return vault(UInt64(pathNumber)).map { .page(comic: .vault($0), generation: generation, index: index) }
                case .comicInfo: return vault(UInt64(pathNumber)).map { .comicInfo(comic: .vault($0), generation: generation) }
                case .errorText: return vault(UInt64(pathNumber)).map { .errorText(comic: .vault($0), generation: generation) }
                case .folderCover: return vault(low).map(Node.vaultFolderCover)
                case .folderDesktop: return vault(low).map(Node.vaultFolderDesktop)
                case .comicDesktop: return vault(UInt64(pathNumber)).map { .comicDesktop(comic: .vault($0), generation: generation) }
                case .file, .link, .comicFile: return nil
                }
            }
            guard slot == .base else { return nil }
            switch kind {
            case .root: return nil
            case .folder: return library(low).map(Node.folder)
            case .file: return library(low).map(Node.file)
            case .link: return library(low).map(Node.link)
            case .comic: return library(low).map { .comic(.library($0)) }
            case .page: return library(UInt64(pathNumber)).map { .page(comic: .library($0), generation: generation, index: index) }
            case .comicInfo: return library(UInt64(pathNumber)).map { .comicInfo(comic: .library($0), generation: generation) }
            case .errorText: return library(UInt64(pathNumber)).map { .errorText(comic: .library($0), generation: generation) }
            case .comicFile: return library(UInt64(pathNumber)).map { .comicFile(comic: .library($0), generation: generation) }
            case .folderCover: return library(low).map(Node.folderCover)
            case .folderDesktop: return library(low).map(Node.folderDesktop)
            case .comicDesktop: return library(UInt64(pathNumber)).map { .comicDesktop(comic: .library($0), generation: generation) }
            }
        }
    }

    /// Whether `id` numbers a file of a vault comic, known or not: once the vault is locked its
    /// numbers decode to nothing, but a reader holding such a file open gets EIO (the content
    /// is gone), not ENOENT (which says the name went away).
    func isVaultFile(_ id: NodeID) -> Bool {
        guard let kind = Kind(rawValue: ViewSlot(of: id).local(id) >> Self.kindShift) else { return false }
        return state.withLock { ViewSlot(of: id) == $0.vaultSlot } && [.page, .comicInfo, .errorText, .folderCover, .folderDesktop, .comicDesktop].contains(kind)
    }

    /// Every vault number handed out since the last lock, then none: lock tells the kernel to
    /// forget them and the names behind them go. The numbers are never handed out again in
    /// this daemon: a name the kernel still held from before the lock (a lookup racing it)
    /// must not lead to another comic that happens to get its number after the next unlock.
    func dropVault() -> [NodeID] {
        state.withLock { s in
            let numbered = s.vaultNumbers.all
            let ids = numbered.flatMap { number, _ in
                [Kind.folder, .comic, .folderCover, .folderDesktop].map { Self.pack(s.vaultSlot, $0, number) }
            }
            let next = (numbered.map(\.0).max() ?? 0) + 1
            s.vaultNumbers = PathNumbers(store: MemoryPathNumbering(first: max(next, s.vaultNumbers.first)))
            // `Vault/` keeps its number across lock and unlock (its slot's root), so the kernel's
            // cached listing of it (directories are never opened: it keeps them) must go too,
            // or the next unlock lists the names and numbers of the last one.
            return ids + [s.vaultSlot.rootID]
        }
    }

    private static func pagePack(_ slot: ViewSlot, _ kind: Kind, _ number: UInt32, _ generation: Int, _ index: Int) -> NodeID {
        precondition(number < Self.pathNumberLimit, "a path number past 24 bits")
        return slot.id(kind.rawValue << Self.kindShift | UInt64(number) << 28
                       | UInt64(generation & Self.generationMask) << 16 | UInt64(min(index, Self.maxPageIndex)))
    }

    private static func pack(_ slot: ViewSlot, _ kind: Kind, _ number: UInt32) -> NodeID {
        slot.id(kind.rawValue << kindShift | UInt64(number))
    }
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
final class MemoryPathNumbering: PathNumbering, Sendable {
    private struct State {
        var numbers: [String: UInt32] = [:]
        var paths: [String] = []
    }
    private let state = Mutex(State())
    let first: UInt32

    init(first: UInt32 = 1) { self.first = first }

    func numbers(_ paths: [String]) -> [String: UInt32] {
        state.withLock { state in
            var found: [String: UInt32] = [:]
            for path in paths {
                if let number = state.numbers[path] { found[path] = number; continue }
                let number = first + UInt32(state.paths.count)
                state.paths.append(path)
                state.numbers[path] = number
                found[path] = number
            }
            return found
        }
    }

    func path(_ number: UInt32) -> String? {
        state.withLock { number >= first && Int(number - first) < $0.paths.count ? $0.paths[Int(number - first)] : nil }
    }

    var all: [(UInt32, String)] { state.withLock { $0.numbers.map { ($0.value, $0.key) } } }
}

/// The numbers in use, both ways, in front of the numbering: cleared when it passes `limit`
/// entries (the numbering answers again), so it never grows with the library. The limit holds
/// the paths of a library of about 125,000 comics (about 150 bytes a path): at 65,536, a walk of 100,000
/// comics (104,000 paths) cleared it before coming back to any, and every folder listed again
/// asked the state database for its comics' numbers. Cleared, it keeps its capacity: grown
/// back by doubling each time, the resizing was 4% of a walk.
private struct PathNumbers: Sendable {
    static let limit = 131_072
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
        let missing = missing(wanted)
        guard !missing.isEmpty else { return }
        remember(store.numbers(missing))
    }

    func missing(_ wanted: [String]) -> [String] { wanted.filter { numbers[$0] == nil } }

    /// `path`'s number if it is in use, without asking the numbering.
    func known(_ path: String) -> UInt32? { numbers[path] }

    mutating func remember(_ found: [String: UInt32]) {
        if numbers.count + found.count > Self.limit { numbers.removeAll(keepingCapacity: true); paths.removeAll(keepingCapacity: true) }
        for (path, number) in found { remember(path, number) }
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
final class StoredPathNumbering: PathNumbering, Sendable {
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
        var beyond: [String] = []
        for (path, file) in zip(paths, files) {
            // A number past what a page's inode can carry (a database that numbered millions of
            // paths over its life) is replaced by one made in memory for this mount.
            if let number = stored[file], number >= NodeTable.memoryNumbers { beyond.append(path) } else { numbers[path] = stored[file] }
        }
        if !beyond.isEmpty { numbers.merge(fallback.numbers(beyond)) { $1 } }
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
