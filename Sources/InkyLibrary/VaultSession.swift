import Foundation
import InkyCore
import InkyVault
import InkyWorker
import Synchronization

/// The vault of one mount, from unlock to lock: the single owner of the unlocked vault, its
/// objects' keys, its use (for the idle lock), its covers, its views' trees and the count of
/// locks. `lock()` is the one place where everything of the vault is dropped: keys revoked,
/// decrypted pages in the window cache zeroed, covers zeroed, names and views gone, the epoch
/// moved, and then the vault's own keys wiped.
///
/// It knows nothing of node numbers or the kernel: what the tree must do when the vault opens
/// or closes (forget its nodes, tell the kernel) it registers with `whenUnlocked` and
/// `whenLocking`, which run in the order they were registered.
public final class VaultSession: Sendable {
    private struct State {
        var vault: UnlockedVault?
        var lastUse = Date()
        var openFiles = 0
        /// Objects' keys handed to requests since unlock, by object name: lock revokes them all.
        var keys: [String: VaultObjectKey] = [:]
        /// The trees of the vault's own metadata views (`Vault/By Series/`...), when shown.
        var views: VaultMetadataCatalog?
        var unlockedHooks: [@Sendable () -> Void] = []
        var lockingHooks: [@Sendable (_ shown: [VaultEntry]) -> Void] = []
    }
    private let state = Mutex(State())
    /// Its own lock, taken last (inside the page cache's): checking it never waits for this one.
    let epoch = VaultEpoch()
    /// The vault's covers, in memory only.
    let covers = VaultCoverMemory()
    /// The window cache the vault's decrypted pages share with the library's.
    private let pages: PageCache
    private let logger: LogSink

    init(pages: PageCache, log: @escaping LogSink) {
        self.pages = pages
        logger = log
    }

    /// The vault's metadata views' trees, nil when the mount shows none.
    public var views: VaultMetadataCatalog? { state.withLock { $0.views } }

    /// Keeps the views' trees (once, as the library is made): made at unlock, dropped at lock.
    func keep(views: VaultMetadataCatalog) {
        state.withLock { $0.views = views }
    }

    /// Runs after every unlock, once the vault answers.
    public func whenUnlocked(_ hook: @escaping @Sendable () -> Void) {
        state.withLock { $0.unlockedHooks.append(hook) }
    }

    /// Runs at every lock, after the vault stopped answering and its pages were dropped, before
    /// its keys are wiped; given the entries it showed, for the names the kernel may hold.
    public func whenLocking(_ hook: @escaping @Sendable (_ shown: [VaultEntry]) -> Void) {
        state.withLock { $0.lockingHooks.append(hook) }
    }

    public var isUnlocked: Bool { state.withLock { $0.vault != nil } }

    /// The unlocked vault's entries, nil when locked.
    var entries: [VaultEntry]? {
        guard let vault = state.withLock({ $0.vault }) else { return nil }
        return try? vault.entries
    }

    /// Shows `vault` (replacing any vault shown before).
    public func unlock(_ vault: UnlockedVault) {
        let (replaced, hooks, views) = state.withLock { state in
            defer {
                state.vault = vault
                state.lastUse = Date()
                state.keys = [:]
            }
            return (Array(state.keys.values), state.unlockedHooks, state.views)
        }
        replaced.forEach { $0.revoke() }
        epoch.advance(unlocked: true)
        pages.drop(where: { $0.comic.isVault }, wiping: true)
        for hook in hooks { hook() }
        // The views' trees are made now, in the background, so `Vault/By Series/` is there soon.
        _ = views?.current()
    }

    /// Hides the vault: its names answer nothing, requests in flight find their keys revoked
    /// and the pages they fetch discarded, cached pages and covers are zeroed, the tree forgets
    /// it (`whenLocking`), and then its keys are wiped. Returns whether a vault was unlocked.
    @discardableResult
    public func lock() -> Bool {
        typealias Taken = (vault: UnlockedVault, keys: [VaultObjectKey], hooks: [@Sendable ([VaultEntry]) -> Void], views: VaultMetadataCatalog?)
        guard let (vault, keys, hooks, views) = state.withLock({ state -> Taken? in
            guard let vault = state.vault else { return nil }
            defer {
                state.vault = nil
                state.keys = [:]
            }
            return (vault, Array(state.keys.values), state.lockingHooks, state.views)
        }) else { return false }
        let shown = (try? vault.entries) ?? []
        // Before the drop: a page completed after it is discarded (`pageCheck`), one completed
        // before it is dropped and wiped with the rest.
        epoch.advance(unlocked: false)
        // A request in flight sends no key from now on; one a step holds goes when it ends.
        keys.forEach { $0.revoke() }
        pages.drop(where: { $0.comic.isVault }, wiping: true)
        let wiped = covers.wipeAll()
        if wiped > 0 { logger("vault locked: \(wiped) covers wiped from memory") }
        // The views' tags and names (their node numbers are the mount's: its `Vault/` view drops them).
        views?.drop()
        for hook in hooks { hook(shown) }
        vault.lock()
        return true
    }

    /// Decrypted vault pages in the window cache right now.
    public var cachedPages: Int { pages.count(where: { $0.comic.isVault }) }

    /// Vault pages whose bytes lock zeroed in the cache, and those a reply still held then
    /// (only their copy zeroed; the reply released them once sent), since the mount.
    public var wipedPages: (inPlace: Int, shared: Int) { pages.wipedPages }

    /// The object file of the vault comic `name` (its object's name), nil when locked or unknown.
    func objectPath(_ name: String) -> String? {
        guard let vault = state.withLock({ $0.vault }), let entries = try? vault.entries,
              let entry = entries.first(where: { $0.name == name }) else { return nil }
        return vault.objectPath(for: entry)
    }

    /// Where a request reads the vault comic `name` from: its object and its key, derived at
    /// the first request and kept until lock revokes it. nil when locked or unknown.
    func source(_ name: String) -> ComicSource? {
        guard let vault = state.withLock({ $0.vault }) else { return nil }
        guard let entries = try? vault.entries, let entry = entries.first(where: { $0.name == name }) else { return nil }
        let path = vault.objectPath(for: entry)
        if let key = state.withLock({ $0.vault === vault ? $0.keys[name] : nil }) { return .vaultObject(path, key: key) }
        guard let keys = try? vault.keys(), let derived = try? keys.objectKey(fileID: entry.fileID) else { return nil }
        let made = VaultObjectKey(derived)
        let key = state.withLock { state -> VaultObjectKey? in
            // Locked (or unlocked again) meanwhile: this key is not kept, and goes now.
            guard state.vault === vault else { return nil }
            if let other = state.keys[name] { return other }
            state.keys[name] = made
            return made
        }
        guard let key else {
            made.revoke()
            return nil
        }
        return .vaultObject(path, key: key)
    }

    /// Seconds since the vault was last used, nil when it is locked or one of its files is
    /// open (the idle lock never takes a page from under a reader).
    public var idleSeconds: Double? {
        state.withLock { state in
            guard state.vault != nil, state.openFiles == 0 else { return nil }
            return Date().timeIntervalSince(state.lastUse)
        }
    }

    /// Notes use of the vault (lookup, listing, open, read), for the idle lock.
    func touch() {
        state.withLock { $0.lastUse = Date() }
    }

    /// A vault file was opened (`closed()` when it is released, or the open failed).
    func opened() {
        state.withLock { state in
            state.openFiles += 1
            state.lastUse = Date()
        }
    }

    func closed(touching: Bool = false) {
        state.withLock { state in
            state.openFiles = max(0, state.openFiles - 1)
            if touching { state.lastUse = Date() }
        }
    }

    /// For a fetch of a vault comic's pages starting now: what discards them on completion. A
    /// page whose fetch began while the vault was locked, or that finishes after a lock (or a
    /// lock and an unlock) since, must not enter the cache: lock has already dropped and wiped
    /// the vault's pages, and decrypted bytes must not outlive it.
    func pageCheck(path: String) -> @Sendable () -> ComicError? {
        let started = epoch.current
        return { [epoch] in
            guard started.unlocked, epoch.current.count == started.count else {
                return .io(path: path, errno: EIO, detail: "the vault was locked while the page was read")
            }
            return nil
        }
    }
}

/// Counts the vault's locks and unlocks, with whether it is unlocked now. Its own lock, taken
/// last (inside the page cache's), so checking it never waits for the session's.
final class VaultEpoch: Sendable {
    private let state = Mutex((count: 0, unlocked: false))

    var current: (count: Int, unlocked: Bool) { state.withLock { $0 } }

    func advance(unlocked: Bool) {
        state.withLock { $0 = ($0.count + 1, unlocked) }
    }
}
