import Foundation
import InkyCore
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
/// Vault nodes are numbered from a separate table that `dropVault` empties at lock: no vault
/// folder name outlives the unlock in here.
final class NodeTable: @unchecked Sendable {
    static let rootID: NodeID = 1
    static let maxPageIndex = 0xFFFF

    private enum Kind: UInt64 {
        case root = 0, folder, file, comic, continueLink, continueReading
        case page, comicInfo, errorText
        case vaultFolder, vaultComic, vaultPage, vaultComicInfo, vaultErrorText
        case link
    }

    private let lock = NSLock()
    private let root: Node
    private var libraryNumbers = PathNumbers()
    private var vaultNumbers = PathNumbers()

    init(root: Node) { self.root = root }

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
            }
        }
    }

    /// The kernel got a counted reference (readdirplus). Numbers are computed, so there is
    /// nothing to keep; the call is where a table of held nodes would count.
    func remember(_ id: NodeID) {}

    /// The kernel dropped references: nothing is held per inode, so nothing is freed.
    func forget(_ id: NodeID, count: UInt64) {}

    /// Every vault number handed out since the last lock, then none: lock tells the kernel to
    /// forget them and the names behind them go.
    func dropVault() -> [NodeID] {
        lock.withLock {
            let ids = vaultNumbers.all.flatMap { number, _ in
                [Kind.vaultFolder, .vaultComic].map { Self.pack($0, number) }
            }
            vaultNumbers = PathNumbers()
            return ids
        }
    }

    /// A generation as the inode number carries it: the low 16 bits.
    static func numberedGeneration(_ generation: Int) -> Int { generation & 0xFFFF }

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

/// Paths numbered in the order first seen, from 1.
private struct PathNumbers {
    private var numbers: [String: UInt32] = [:]
    private var paths: [String] = [""]

    mutating func number(_ path: String) -> UInt32 {
        if let number = numbers[path] { return number }
        let number = UInt32(paths.count)
        paths.append(path)
        numbers[path] = number
        return number
    }

    func path(_ number: UInt32) -> String? {
        number > 0 && Int(number) < paths.count ? paths[Int(number)] : nil
    }

    var all: [(UInt32, String)] { numbers.map { ($0.value, $0.key) } }
}
