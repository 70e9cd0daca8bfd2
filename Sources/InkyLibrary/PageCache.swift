import Foundation
import InkyCore
import InkyVault

/// The window cache's storage: decoded pages under one global byte budget, least recently used
/// first out, with the waiters of pages being fetched. Every page byte served comes through here.
final class PageCache: @unchecked Sendable {
    struct Key: Hashable, Sendable {
        var comic: ComicRef
        var generation: Int
        var index: Int
    }

    typealias Waiter = @Sendable (Result<[UInt8], ComicError>) -> Void

    let budget: Int
    private let lock = NSLock()
    private var pages: [Key: (bytes: [UInt8], lastUse: UInt64)] = [:]
    private var inFlight: [Key: [Waiter]] = [:]
    private var clock: UInt64 = 0
    private(set) var totalBytes = 0
    /// One page larger than the whole budget, kept only while it is being read.
    private var oversize: (key: Key, bytes: [UInt8])?

    init(budget: Int) { self.budget = max(1, budget) }

    func page(_ key: Key) -> [UInt8]? {
        lock.withLock {
            if let oversize, oversize.key == key { return oversize.bytes }
            guard let entry = pages[key] else { return nil }
            clock += 1
            pages[key]!.lastUse = clock
            return entry.bytes
        }
    }

    func contains(_ key: Key) -> Bool {
        lock.withLock { pages[key] != nil || inFlight[key] != nil }
    }

    /// Marks the keys that are neither cached nor being fetched as in flight and returns them.
    func claim(_ keys: [Key]) -> [Key] {
        lock.withLock {
            keys.filter { key in
                guard pages[key] == nil, inFlight[key] == nil, oversize?.key != key else { return false }
                inFlight[key] = []
                return true
            }
        }
    }

    /// Waits for a page: false when it is neither cached nor in flight (the caller must fetch).
    func wait(for key: Key, _ waiter: @escaping Waiter) -> Bool {
        lock.lock()
        if inFlight[key] != nil {
            inFlight[key]!.append(waiter)
            lock.unlock()
            return true
        }
        let cached = pages[key]?.bytes ?? (oversize?.key == key ? oversize?.bytes : nil)
        lock.unlock()
        guard let cached else { return false }
        waiter(.success(cached))
        return true
    }

    /// Stores a fetched page (unless it alone exceeds the budget) and wakes its waiters.
    /// `discard` is asked under the cache's lock, so no `drop` can run between its answer and
    /// the store: an error from it replaces the page (a vault page whose read began before a
    /// lock), whose bytes are then wiped in place, since they were never handed to anyone.
    func complete(_ key: Key, _ result: Result<[UInt8], ComicError>, discard: () -> ComicError? = { nil }) {
        lock.lock()
        let waiters = inFlight.removeValue(forKey: key) ?? []
        var result = result
        if case .success(let bytes) = result, let error = discard() {
            bytes.withUnsafeBytes { Wipe.memory(UnsafeMutableRawBufferPointer(mutating: $0)) }
            result = .failure(error)
        }
        if case .success(let bytes) = result {
            if bytes.count > budget {
                oversize = (key, bytes)
            } else if pages[key] == nil {
                clock += 1
                pages[key] = (bytes, clock)
                totalBytes += bytes.count
                evictOverBudget()
            }
        }
        lock.unlock()
        for waiter in waiters { waiter(result) }
    }

    /// Drops a comic's pages that `shouldDrop` selects (window eviction, stale generations).
    func drop(comic: ComicRef, where shouldDrop: (Key) -> Bool) {
        lock.withLock {
            for key in pages.keys where key.comic == comic && shouldDrop(key) {
                totalBytes -= pages.removeValue(forKey: key)!.bytes.count
            }
            if let oversize, oversize.key.comic == comic, shouldDrop(oversize.key) { self.oversize = nil }
        }
    }

    /// Drops pages of every comic `shouldDrop` selects (all of the vault's, at lock, `wiping`
    /// them: their bytes are zeroed before they are released).
    ///
    /// A page a reply is sending at that moment shares its storage with the reply: zeroing it
    /// under the reply would send zeros to a read that began before the lock (and the kernel
    /// might keep them), so only the copy is zeroed and the reply releases its bytes when sent.
    func drop(where shouldDrop: (Key) -> Bool, wiping: Bool = false) {
        lock.withLock {
            // The keys first: iterating `pages.keys` while removing would keep the dictionary's
            // old storage alive, and with it a second reference to every page's bytes.
            for key in pages.keys.filter(shouldDrop) {
                var dropped = pages.removeValue(forKey: key)
                totalBytes -= dropped?.bytes.count ?? 0
                if wiping, dropped != nil { wipe(&dropped!.bytes) }
            }
            if let key = oversize?.key, shouldDrop(key) {
                var dropped = oversize
                oversize = nil
                if wiping { wipe(&dropped!.bytes) }
            }
        }
    }

    /// Pages whose own storage `drop(wiping:)` zeroed, and pages it found shared with a reply
    /// (only a copy zeroed), since the start: the vault's debug report shows them.
    var wipedPages: (inPlace: Int, shared: Int) { lock.withLock { (wipedInPlace, wipedShared) } }
    private var wipedInPlace = 0
    private var wipedShared = 0

    private func wipe(_ bytes: inout [UInt8]) {
        let storage = bytes.withUnsafeBytes { $0.baseAddress }
        // Copy-on-write: a mutation of storage shared with a reply first copies it.
        let wiped = bytes.withUnsafeMutableBytes { buffer in
            Wipe.memory(buffer)
            return UnsafeRawPointer(buffer.baseAddress)
        }
        if wiped == storage { wipedInPlace += 1 } else { wipedShared += 1 }
    }

    var count: Int { lock.withLock { pages.count } }

    func count(where matches: (Key) -> Bool) -> Int {
        lock.withLock { pages.keys.filter(matches).count + (oversize.map { matches($0.key) ? 1 : 0 } ?? 0) }
    }

    private func evictOverBudget() {
        while totalBytes > budget, let oldest = pages.min(by: { $0.value.lastUse < $1.value.lastUse }) {
            totalBytes -= oldest.value.bytes.count
            pages.removeValue(forKey: oldest.key)
        }
    }
}
