import Foundation
import InkyCore
import InkyStore
import Synchronization

/// The mount's writes to the library index, made on the state queue in the order they were
/// asked for, many listings to a transaction. A first browse of a fresh library lists comics
/// several at a time: one transaction (and one WAL append) per comic, on the listing thread,
/// was a tenth of the daemon's CPU in a cold `ls -lRA`, and held the thread a lookup waits on.
///
/// A listing is already in the comic's state in memory before it is queued here, so a lookup
/// never needs the row to be written first; a remount after an unmount finds it, because the
/// daemon waits for `flush` before it exits (`finishStateWrites`).
final class IndexWriter: Sendable {
    private enum Write {
        case store(LibraryFile, FileIdentity, Result<ComicListing, ComicError>)
        case remove(LibraryFile)
    }

    private let database: StateDatabase
    private let queue: DispatchQueue
    /// Writes not yet made, oldest first; a flush is queued whenever this stops being empty.
    private let pending = Mutex<[Write]>([])

    init(database: StateDatabase, queue: DispatchQueue) {
        self.database = database
        self.queue = queue
    }

    func store(_ file: LibraryFile, identity: FileIdentity, _ result: Result<ComicListing, ComicError>) {
        enqueue(.store(file, identity, result))
    }

    /// A removal is queued behind the listings asked for before it: a comic listed and then
    /// deleted never comes back as a row after its removal.
    func remove(_ file: LibraryFile) {
        enqueue(.remove(file))
    }

    /// A flush waits this long after the first write it will make, so that it makes many: each
    /// commit appends every page it touched to the WAL, and flushed as soon as queued, a cold
    /// listing committed a comic or two at a time (writing the WAL was a third of the daemon's
    /// CPU). Nothing waits on these rows meanwhile: the listings are in memory already.
    static let gathering: DispatchTimeInterval = .milliseconds(150)
    /// Flushed at once when this many are waiting, however recent.
    static let batch = 1_000

    private func enqueue(_ write: Write) {
        let count = pending.withLock { pending in
            pending.append(write)
            return pending.count
        }
        if count == 1 { queue.asyncAfter(deadline: .now() + Self.gathering) { [self] in flush() } }
        if count == Self.batch { queue.async { [self] in flush() } }
    }

    /// Makes every queued write: consecutive listings in one transaction. On the state queue only.
    func flush() {
        let writes = pending.withLock { pending in
            let taken = pending
            pending = []
            return taken
        }
        guard !writes.isEmpty else { return }
        var listings: [(file: LibraryFile, identity: FileIdentity, result: Result<ComicListing, ComicError>)] = []
        for write in writes {
            switch write {
            case .store(let file, let identity, let result):
                listings.append((file, identity, result))
            case .remove(let file):
                database.storeListings(listings)
                listings.removeAll()
                database.removeFromIndex(file)
            }
        }
        database.storeListings(listings)
    }
}
