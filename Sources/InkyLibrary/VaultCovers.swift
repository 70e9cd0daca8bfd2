import Foundation
import InkyCore
import InkyTree
import InkyVault
import InkyWorker
import Synchronization

/// Covers of the unlocked vault's folders, like the library's (`LibraryCovers`): a folder that
/// holds comics lists `.directory` and, once made, `folder.jpg`, the cover of its first comic.
/// Made in the background by a worker given the comic's key, they are kept in memory only, never
/// in the disk cache, and lock zeroes their bytes before forgetting them.
extension LibraryFilesystem {
    /// The first comic of a vault folder in its listing's order (object name), nil when none.
    private static func firstVaultComic(_ children: [String: Node]) -> String? {
        for name in children.keys.sorted() { if case .comic(.vault(let object))? = children[name] { return object } }
        return nil
    }

    /// The added file `name` of vault folder `folder`, nil when there is none of that name.
    func vaultCoverNode(_ children: [String: Node], folder: String, name: String) -> Node? {
        guard covers.areShown, !options.comicsAsCBZ, let first = Self.firstVaultComic(children) else { return nil }
        switch name {
        case "folder.jpg":
            if vault.covers.cover(first) != nil { return .vaultFolderCover(folder) }
            scheduleVaultCover(folder: folder, comic: first)
            return nil
        case ".directory": return .vaultFolderDesktop(folder)
        default: return nil
        }
    }

    /// `folder.jpg`, if the folder has one; its `.directory` is found by name only, as the
    /// library's are (`coverEntry`).
    func vaultCoverEntry(_ children: [String: Node], folder: String) -> (name: String, node: Node)? {
        vaultCoverNode(children, folder: folder, name: "folder.jpg").map { ("folder.jpg", $0) }
    }

    func vaultFolderCoverBytes(_ folder: String) -> Result<[UInt8], Errno> {
        guard let children = vaultChildren(folder), let first = Self.firstVaultComic(children) else { return .failure(.ENOENT) }
        return vault.covers.cover(first).map { .success($0) } ?? .failure(.ENOENT)
    }

    func vaultFolderDesktopBytes(_ folder: String) -> Result<[UInt8], Errno> {
        guard let children = vaultChildren(folder), Self.firstVaultComic(children) != nil else { return .failure(.ENOENT) }
        return .success(FolderCovers.desktopEntry(icon: "folder.jpg"))
    }

    /// The vault's files are the mounting user's, read-only, never kept by the kernel.
    func vaultCoverAttributes(_ node: Node) -> Result<NodeAttributes, Errno> {
        coverFileBytes(node).map { bytes in
            NodeAttributes(kind: .regularFile, size: Int64(bytes.count), permissions: directoryPermissions(vault: true) & 0o444,
                           modifiedNanoseconds: Int64(Date().timeIntervalSince1970 * 1e9), entryTimeout: 0, attributeTimeout: 0)
        }
    }

    private func scheduleVaultCover(folder: String, comic: String) {
        guard !vault.covers.hasFailed(comic) else { return }
        covers.inBackground("vault:" + folder) { [weak self] in
            guard let self, !self.isStopping else { return }
            // Counted before the worker starts: a lock (and unlock) meanwhile refuses the bytes.
            let round = self.vault.covers.round
            guard self.vault.epoch.current.unlocked, case .success(let (state, snapshot)) = self.currentComic(.vault(comic)),
                  case .success(let listing) = snapshot.listing, let first = listing.pages.first else { return }
            let entry = EntryRequest(source: first.source, size: first.size, name: first.sourcePath)
            do throws(ComicError) {
                let bytes = try self.backend.cover(self.source(of: state), identity: snapshot.identity, entry: entry, height: FolderCovers.height,
                                                   limits: self.options.limits)
                guard self.vault.covers.store(comic, bytes, round: round) else { return }
            } catch {
                if case .io = error {} else { self.vault.covers.markFailed(comic) }
                self.logger(.error("cover failed: \(self.loggable(error, of: .vault(comic)))"))
                return
            }
            let observer = self.changeObserver
            observer?.nameChanged("folder.jpg", in: .vaultFolder(folder))
            observer?.nodeChanged(.vaultFolder(folder))
        }
    }
}

/// The vault's covers by comic (object name), in memory only. A round counts the locks: bytes
/// made across one are zeroed, not kept.
final class VaultCoverMemory: Sendable {
    private struct State {
        var covers: [String: [UInt8]] = [:]
        var failed: Set<String> = []
        var rounds = 0
    }
    private let state = Mutex(State())

    var round: Int { state.withLock { $0.rounds } }

    func cover(_ comic: String) -> [UInt8]? { state.withLock { $0.covers[comic] } }
    func hasFailed(_ comic: String) -> Bool { state.withLock { $0.failed.contains(comic) } }
    func markFailed(_ comic: String) { state.withLock { _ = $0.failed.insert(comic) } }

    /// Keeps a cover made in `round`; one made across a lock is zeroed and refused (false).
    func store(_ comic: String, _ bytes: [UInt8], round: Int) -> Bool {
        let kept = state.withLock { state in
            guard state.rounds == round else { return false }
            state.covers[comic] = bytes
            return true
        }
        if !kept { Self.zero(bytes) }
        return kept
    }

    /// Zeroes every cover's bytes where they lie (a reply still holding them sends zeros), then
    /// forgets them; returns how many there were.
    func wipeAll() -> Int {
        let dropped = state.withLock { state in
            state.rounds += 1
            state.failed = []
            defer { state.covers = [:] }
            return Array(state.covers.values)
        }
        dropped.forEach(Self.zero)
        return dropped.count
    }

    private static func zero(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { Wipe.memory(UnsafeMutableRawBufferPointer(mutating: $0)) }
    }
}
