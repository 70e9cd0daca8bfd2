import Foundation
import InkyCore
import InkyVault
import Synchronization

/// The window cache's storage: decoded pages under one global byte budget, least recently used
/// first out, with the waiters of pages being fetched. Every page byte served comes through here.
final class PageCache: Sendable {
    struct Key: Hashable, Sendable {
        var comic: ComicRef
        var generation: Int
        var index: Int
    }

    typealias Waiter = @Sendable (Result<[UInt8], ComicError>) -> Void

    let budget: Int
    fileprivate struct State {
        var pages: [Key: (bytes: [UInt8], lastUse: UInt64)] = [:]
        var inFlight: [Key: [Waiter]] = [:]
        var clock: UInt64 = 0
        var totalBytes = 0
        /// One page larger than the whole budget, kept only while it is being read.
        var oversize: (key: Key, bytes: [UInt8])?
        var wipedInPlace = 0
        var wipedShared = 0
        /// Each comic's pages: a read that moves the window drops that comic's pages without
        /// looking at every page cached (a cache full of small pages holds 100,000).
        var keysByComic: [ComicRef: Set<Key>] = [:]
        /// Pages by last use, oldest last, as of when it was made; made again once used up.
        /// An entry whose page was used since is skipped (it is younger than the rest), and a page
        /// stored since is younger than all of them: the first entry left standing is the least
        /// recently used page. Finding it by a scan of every page cost one per page stored.
        var evictionOrder: [(lastUse: UInt64, key: Key)] = []
    }
    private let state = Mutex(State())

    var totalBytes: Int { state.withLock { $0.totalBytes } }

    init(budget: Int) { self.budget = max(1, budget) }

    func page(_ key: Key) -> [UInt8]? {
        state.withLock { state in
            if let oversize = state.oversize, oversize.key == key { return oversize.bytes }
            guard let entry = state.pages[key] else { return nil }
            state.clock += 1
            state.pages[key]!.lastUse = state.clock
            return entry.bytes
        }
    }

    func contains(_ key: Key) -> Bool {
        state.withLock { $0.pages[key] != nil || $0.inFlight[key] != nil }
    }

    /// Whether a page is being fetched and not here yet.
    func isInFlight(_ key: Key) -> Bool { state.withLock { $0.inFlight[key] != nil } }

    /// Marks the keys that are neither cached nor being fetched as in flight and returns them.
    /// `waiter` waits for the first key when it is claimed, from the claim on: no completion can
    /// come between, so it is never called here (a caller may hold a lock the waiter's reply needs).
    func claim(_ keys: [Key], first waiter: Waiter? = nil) -> [Key] {
        state.withLock { state in
            keys.filter { key in
                guard state.pages[key] == nil, state.inFlight[key] == nil, state.oversize?.key != key else { return false }
                state.inFlight[key] = key == keys.first ? waiter.map { [$0] } ?? [] : []
                return true
            }
        }
    }

    /// Waits for a page: false when it is neither cached nor in flight (the caller must fetch).
    func wait(for key: Key, _ waiter: @escaping Waiter) -> Bool {
        let cached = state.withLock { state -> [UInt8]?? in
            if state.inFlight[key] != nil {
                state.inFlight[key]!.append(waiter)
                return .some(nil)
            }
            return (state.pages[key]?.bytes ?? (state.oversize?.key == key ? state.oversize?.bytes : nil)).map { .some($0) }
        }
        // Called outside the lock: a waiter may ask the cache again.
        guard let cached else { return false }
        if let cached { waiter(.success(cached)) }
        return true
    }

    /// Stores a fetched page (unless it alone exceeds the budget) and wakes its waiters.
    /// `discard` is asked under the cache's lock, so no `drop` can run between its answer and
    /// the store: an error from it replaces the page (a vault page whose read began before a
    /// lock), whose bytes are then wiped in place, since they were never handed to anyone.
    func complete(_ key: Key, _ result: Result<[UInt8], ComicError>, discard: () -> ComicError? = { nil }) {
        var evicted: [[UInt8]] = []
        let (waiters, result) = state.withLock { state in
            let waiters = state.inFlight.removeValue(forKey: key) ?? []
            var result = result
            if case .success(let bytes) = result, let error = discard() {
                bytes.withUnsafeBytes { Wipe.memory(UnsafeMutableRawBufferPointer(mutating: $0)) }
                result = .failure(error)
            }
            if case .success(let bytes) = result {
                if bytes.count > budget {
                    state.oversize = (key, bytes)
                } else if state.pages[key] == nil {
                    state.clock += 1
                    state.store(key, bytes)
                    state.totalBytes += bytes.count
                    evicted = state.evict(over: budget)
                }
            }
            return (waiters, result)
        }
        for waiter in waiters { waiter(result) }
        evicted.removeAll()  // freed outside the lock (see `drop(comic:where:)`)
    }

    /// Drops a comic's pages that `shouldDrop` selects (window eviction, stale generations).
    /// Returns their bytes for the caller to let go outside its own locks: freeing a page is a
    /// memset of it once the vault wipes freed memory (M_PERTURB), and done under this lock and
    /// the comic's fetch order it held up every read of the comic meanwhile.
    @discardableResult
    func drop(comic: ComicRef, where shouldDrop: (Key) -> Bool) -> [[UInt8]] {
        state.withLock { state in
            var dropped: [[UInt8]] = []
            for key in state.keysByComic[comic] ?? [] where shouldDrop(key) {
                guard let entry = state.remove(key) else { continue }
                state.totalBytes -= entry.bytes.count
                dropped.append(entry.bytes)
            }
            if let oversize = state.oversize, oversize.key.comic == comic, shouldDrop(oversize.key) {
                dropped.append(oversize.bytes)
                state.oversize = nil
            }
            return dropped
        }
    }

    /// Drops pages of every comic `shouldDrop` selects (all of the vault's, at lock, `wiping`
    /// them: their bytes are zeroed before they are released).
    ///
    /// A page a reply is sending at that moment shares its storage with the reply: zeroing it
    /// under the reply would send zeros to a read that began before the lock (and the kernel
    /// might keep them), so only the copy is zeroed and the reply releases its bytes when sent.
    func drop(where shouldDrop: (Key) -> Bool, wiping: Bool = false) {
        state.withLock { state in
            // The keys first: iterating `pages.keys` while removing would keep the dictionary's
            // old storage alive, and with it a second reference to every page's bytes.
            for key in state.pages.keys.filter(shouldDrop) {
                var dropped = state.remove(key)
                state.totalBytes -= dropped?.bytes.count ?? 0
                if wiping, dropped != nil { state.wipe(&dropped!.bytes) }
            }
            // The eviction order holds keys of pages already gone too: a vault comic's name must
            // not outlive the lock there.
            state.evictionOrder.removeAll { shouldDrop($0.key) }
            if let key = state.oversize?.key, shouldDrop(key) {
                var dropped = state.oversize
                state.oversize = nil
                if wiping { state.wipe(&dropped!.bytes) }
            }
        }
    }

    /// Pages whose own storage `drop(wiping:)` zeroed, and pages it found shared with a reply
    /// (only a copy zeroed), since the start: the vault's debug report shows them.
    var wipedPages: (inPlace: Int, shared: Int) { state.withLock { ($0.wipedInPlace, $0.wipedShared) } }

    var count: Int { state.withLock { $0.pages.count } }

    func count(where matches: (Key) -> Bool) -> Int {
        state.withLock { state in state.pages.keys.filter(matches).count + (state.oversize.map { matches($0.key) ? 1 : 0 } ?? 0) }
    }
}

extension PageCache.State {
    mutating func wipe(_ bytes: inout [UInt8]) {
        let storage = bytes.withUnsafeBytes { $0.baseAddress }
        // Copy-on-write: a mutation of storage shared with a reply first copies it.
        let wiped = bytes.withUnsafeMutableBytes { buffer in
            Wipe.memory(buffer)
            return UnsafeRawPointer(buffer.baseAddress)
        }
        if wiped == storage { wipedInPlace += 1 } else { wipedShared += 1 }
    }

    mutating func store(_ key: PageCache.Key, _ bytes: [UInt8]) {
        pages[key] = (bytes, clock)
        keysByComic[key.comic, default: []].insert(key)
    }

    mutating func remove(_ key: PageCache.Key) -> (bytes: [UInt8], lastUse: UInt64)? {
        guard let entry = pages.removeValue(forKey: key) else { return nil }
        keysByComic[key.comic]?.remove(key)
        if keysByComic[key.comic]?.isEmpty == true { keysByComic[key.comic] = nil }
        return entry
    }

    /// Least recently used first, until the pages fit the budget (`evictionOrder`); returns the
    /// evicted pages' bytes, to be freed outside the lock.
    mutating func evict(over budget: Int) -> [[UInt8]] {
        var evicted: [[UInt8]] = []
        while totalBytes > budget {
            if evictionOrder.isEmpty {
                evictionOrder = pages.map { (lastUse: $0.value.lastUse, key: $0.key) }.sorted { $0.lastUse > $1.lastUse }
                if evictionOrder.isEmpty { break }
            }
            let (lastUse, key) = evictionOrder.removeLast()
            guard pages[key]?.lastUse == lastUse, let entry = remove(key) else { continue }
            totalBytes -= entry.bytes.count
            evicted.append(entry.bytes)
        }
        return evicted
    }
}
