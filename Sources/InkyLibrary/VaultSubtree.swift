import Foundation
import InkyCore
import InkyStore
import InkyVault
import Synchronization

/// The unlocked vault under the mount: `Vault/` mirrors the manifest's display paths, each comic
/// a directory of pages like the library's. Vault comics are keyed apart from library paths so
/// nothing about them reaches the state database (no index rows, no reading state), and lock
/// drops every node, cached page and kernel entry of them before the keys are wiped.
extension LibraryFilesystem {
    /// Shows the vault (replacing any vault shown before).
    public func unlockVault(_ vault: UnlockedVault) {
        lock.withLock {
            unlockedVault = vault
            lastVaultUse = Date()
            // A lookup racing the last lock can have put a vault comic back after lock dropped
            // them all, listed without its key ("not a comic archive"): kept, that failure
            // showed as ERROR.txt until the next remount. Every unlock starts from nothing.
            comics.removeAll { $0.isVault }
        }
        vaultEpoch.advance(unlocked: true)
        cache.drop(where: { $0.comic.isVault }, wiping: true)
        vaultView?.shownChanged()
        // Its views' trees are made now, in the background, so `Vault/By Series/` is there soon.
        _ = vaultMetadataViews?.catalog.current()
    }

    /// Hides the vault: its subtree answers ENOENT, open files EIO, cached pages and kernel
    /// entries are dropped, and then its keys are wiped. Returns whether a vault was unlocked.
    @discardableResult
    public func lockVault() -> Bool {
        // `Vault/` keeps its number across lock and unlock, so after an unlock the kernel can
        // bring its old directory entry back (a reader still holding a page open keeps it
        // alive) with the old names in it, each pointing at a number lock dropped: ENOENT for
        // that comic until its entry timed out. Each name is unhashed at lock instead.
        let shownNames = Array((vaultChildren("") ?? [:]).keys) + MetadataViewKind.allCases.map(\.folderName)
        guard let (vault, states) = lock.withLock({ () -> (UnlockedVault, [ComicState])? in
            guard let vault = unlockedVault else { return nil }
            unlockedVault = nil
            let states = comics.removeAll { $0.isVault }
            return (vault, states)
        }) else { return false }
        // Before the drop: a page completed after it is discarded (`vaultPageCheck`), one
        // completed before it is dropped and wiped with the rest.
        vaultEpoch.advance(unlocked: false)
        cache.drop(where: { $0.comic.isVault }, wiping: true)
        let covers = vaultCovers.wipeAll()
        if covers > 0 { logger("vault locked: \(covers) covers wiped from memory") }
        let kernel = kernelCache
        vaultView?.shownChanged()
        // Every file of every vault comic (the kernel's cached page bytes go with its inode's
        // data), then the folders and comics, whose numbers are forgotten with their names.
        for state in states {
            guard let snapshot = state.snapshot() else { continue }
            for node in Self.files(of: state.comic, snapshot) { kernel?.invalidateNode(nodes.id(for: node)) }
        }
        let vaultRoot = nodes.id(for: .vaultFolder(""))
        for name in shownNames { kernel?.invalidateEntry(parent: vaultRoot, name: name) }
        for id in nodes.dropVault() { kernel?.invalidateNode(id) }
        // The vault's views: their tags and names go with the rest.
        for id in vaultMetadataViews?.drop() ?? [] { kernel?.invalidateNode(id) }
        vault.lock()
        return true
    }

    public var vaultIsUnlocked: Bool { lock.withLock { unlockedVault != nil } }

    /// The name of the folder the unlocked vault shows as under the mount root (`--vault-name`);
    /// nil when it is shown nowhere.
    public var vaultFolderName: String? { options.vaultName }

    /// Decrypted vault pages in the window cache right now.
    public var cachedVaultPages: Int { cache.count(where: { $0.comic.isVault }) }

    /// Vault pages whose bytes lock zeroed in the cache, and those a reply still held then
    /// (only their copy zeroed; the reply released them once sent), since the mount.
    public var wipedVaultPages: (inPlace: Int, shared: Int) { cache.wipedPages }

    /// For a fetch of `comic`'s pages starting now: what discards them on completion. A vault
    /// page whose fetch began while the vault was locked, or that finishes after a lock (or a
    /// lock and an unlock) since, must not enter the cache: lock has already dropped and wiped
    /// the vault's pages, and decrypted bytes must not outlive it. Library comics keep theirs.
    func vaultPageCheck(for comic: ComicRef, path: String) -> @Sendable () -> ComicError? {
        guard comic.isVault else { return { nil } }
        let started = vaultEpoch.current
        return { [vaultEpoch] in
            guard started.unlocked, vaultEpoch.current.count == started.count else {
                return .io(path: path, errno: EIO, detail: "the vault was locked while the page was read")
            }
            return nil
        }
    }

    /// Seconds since the vault was last used, nil when it is locked or one of its files is
    /// open (the idle lock never takes a page from under a reader).
    public var vaultIdleSeconds: Double? {
        lock.withLock {
            guard unlockedVault != nil, openVaultFiles == 0 else { return nil }
            return Date().timeIntervalSince(lastVaultUse)
        }
    }

    /// Notes use of a vault node (lookup, listing, open, read), for the idle lock.
    func touchVault(_ node: Node) {
        guard node.isVault else { return }
        lock.withLock { lastVaultUse = Date() }
    }

    /// The key of the vault object at `objectPath`, for the worker that reads it.
    public func objectKey(forObjectPath objectPath: String) -> SecureBytes? {
        guard let vault = lock.withLock({ unlockedVault }),
              let entries = try? vault.entries,
              let entry = entries.first(where: { vault.objectPath(for: $0) == objectPath }),
              let keys = try? vault.keys() else { return nil }
        return try? keys.objectKey(fileID: entry.fileID)
    }

    /// The object file of the vault comic `name` (its object's name), nil when locked or unknown.
    func vaultObjectPath(_ name: String) -> String? {
        guard let vault = lock.withLock({ unlockedVault }), let entries = try? vault.entries,
              let entry = entries.first(where: { $0.name == name }) else { return nil }
        return vault.objectPath(for: entry)
    }

    /// The children of a folder of the vault, named like the library's: a comic loses its
    /// extension unless that collides with a sibling, and a control character in a name added
    /// before they were refused shows as U+FFFD, as in the library.
    func vaultChildren(_ folder: String) -> [String: Node]? {
        guard let vault = lock.withLock({ unlockedVault }), let entries = try? vault.entries else { return nil }
        var candidates: [(name: String, display: String, node: Node)] = []
        var folders: Set<String> = []
        for entry in entries {
            let parts = entry.displayPath.split(separator: "/").map(String.init)
            guard let file = parts.last else { continue }
            let parent = parts.dropLast().joined(separator: "/")
            if parent == folder {
                let shown = ComicFiles.printable(file)
                candidates.append((shown, ComicFiles.displayStem(shown) ?? shown, .comic(.vault(entry.name))))
            } else if parent.hasPrefix(folder.isEmpty ? "" : folder + "/") || (folder.isEmpty && !parent.isEmpty) {
                let rest = folder.isEmpty ? parent : String(parent.dropFirst(folder.count + 1))
                if let first = rest.split(separator: "/").first { folders.insert(String(first)) }
            }
        }
        var uses: [String: Int] = [:]
        for name in folders { uses[ComicFiles.printable(name), default: 0] += 1 }
        for candidate in candidates { uses[candidate.display, default: 0] += 1 }
        var children: [String: Node] = [:]
        for name in folders { children[ComicFiles.printable(name)] = .vaultFolder(folder.isEmpty ? name : folder + "/" + name) }
        for candidate in candidates {
            children[uses[candidate.display]! > 1 ? candidate.name : candidate.display] = candidate.node
        }
        return children
    }
}

/// Counts the vault's locks and unlocks, with whether it is unlocked now. Its own lock, taken
/// last (inside the page cache's), so checking it never waits for the filesystem's.
final class VaultEpoch: Sendable {
    private let state = Mutex((count: 0, unlocked: false))

    var current: (count: Int, unlocked: Bool) { state.withLock { $0 } }

    func advance(unlocked: Bool) {
        state.withLock { $0 = ($0.count + 1, unlocked) }
    }
}
