import Foundation
import InkyCore
import InkyStore

/// The library comics' metadata as the views share it: the state database, asked on demand
/// (`MetadataViewQueries`), and a stamp that moves when the metadata moved
/// (`StateDatabase.metadataGeneration`: the watcher re-lists a changed comic, which stores its
/// metadata), at most four times a second while the views are used. A timer checks twice a
/// second, so that the views tell the kernel what changed (a view appearing at the mount root,
/// a comic moving between folders) without anyone looking: the kernel keeps listings until told.
final class MetadataCatalog: @unchecked Sendable {
    struct Snapshot: Sendable {
        /// When it was read (ns since 1970): the views' folders carry it as their mtime, so a
        /// kernel that kept a listing drops it once it sees the attributes again.
        var stamp: Int64 = 0
    }

    let state: StateDatabase
    /// The library's path: the views show only comics under it.
    let libraryPath: String
    /// After each link's name: ".cbz" when comics are served as CBZ files.
    let comicSuffix: String

    /// A row of the index as the views see it, its path made relative to the library.
    func record(_ row: IndexedMetadata) -> ComicRecord {
        ComicRecord(id: row.id, comic: String(row.file.path.dropFirst(libraryPath.count + 1)),
                    modifiedNanoseconds: row.modifiedNanoseconds, metadata: row.metadata, comicSuffix: comicSuffix)
    }
    private let lock = NSLock()
    private var generation: UInt64?
    private var snapshot = Snapshot()
    private var lastRead = DispatchTime(uptimeNanoseconds: 0)
    /// What the views' trees made again after the last move cost (ns): moves are spaced at least
    /// five times that apart, so a library being listed for the first time (the metadata moving
    /// all along) spends at most a sixth of a core on its views.
    private var lastCost: UInt64 = 0
    private var listeners: [@Sendable () -> Void] = []
    private var timer: DispatchSourceTimer?
    static let minimumInterval: UInt64 = 250_000_000

    init(state: StateDatabase, libraryPath: String, comicSuffix: String = "") {
        self.state = state
        self.libraryPath = libraryPath
        self.comicSuffix = comicSuffix
    }

    deinit { timer?.cancel() }

    /// The current stamp, moved if the metadata moved and the last move is old enough.
    func current() -> Snapshot {
        lock.lock()
        defer { lock.unlock() }
        let now = DispatchTime.now()
        let moved = generation != state.metadataGeneration
        let gap = max(Self.minimumInterval, 5 * lastCost)
        if moved, generation == nil || now.uptimeNanoseconds - lastRead.uptimeNanoseconds >= gap {
            generation = state.metadataGeneration
            lastRead = now
            snapshot = Snapshot(stamp: Int64(Date().timeIntervalSince1970 * 1e9))
            lastCost = DispatchTime.now().uptimeNanoseconds - now.uptimeNanoseconds
        }
        return snapshot
    }

    /// Calls `listener` after each check of the timer (a view then sees whether it shows).
    func onCheck(_ listener: @escaping @Sendable () -> Void) {
        lock.withLock { listeners.append(listener) }
    }

    /// Starts the twice-a-second check (idempotent).
    func start() {
        lock.lock()
        defer { lock.unlock() }
        guard timer == nil else { return }
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "inkyfs.metadata-views", qos: .utility))
        timer.schedule(deadline: .now() + 0.5, repeating: 0.5, leeway: .milliseconds(100))
        timer.setEventHandler { [weak self] in
            guard let self else { return }
            let started = DispatchTime.now().uptimeNanoseconds
            let stamp = self.current().stamp
            // Each view makes its tree again only if what it is made of moved.
            for listener in self.lock.withLock({ self.listeners }) { listener() }
            let cost = DispatchTime.now().uptimeNanoseconds - started
            self.lock.withLock { if self.snapshot.stamp == stamp, stamp != 0 { self.lastCost = max(self.lastCost, cost) } }
        }
        timer.resume()
        self.timer = timer
    }
}
