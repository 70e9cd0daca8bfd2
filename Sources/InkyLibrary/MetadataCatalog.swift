import Foundation
import InkyCore
import InkyStore
import Synchronization

/// The library comics' metadata as the views share it: the state database, asked on demand
/// (`MetadataViewQueries`), and a stamp that moves when the metadata moved
/// (`StateDatabase.metadataGeneration`: the watcher re-lists a changed comic, which stores its
/// metadata), at most four times a second while the views are used. A timer checks twice a
/// second, so that the views tell the kernel what changed (a view appearing at the mount root,
/// a comic moving between folders) without anyone looking: the kernel keeps listings until told.
public final class MetadataCatalog: Sendable {
    /// The metadata as last read.
    public struct Snapshot: Sendable {
        /// When it was read (ns since 1970): the views' folders carry it as their mtime, so a
        /// kernel that kept a listing drops it once it sees the attributes again.
        public var stamp: Int64 = 0
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
    private struct Locked {
        var generation: UInt64?
        var snapshot = Snapshot()
        var lastRead = DispatchTime(uptimeNanoseconds: 0)
        /// What the views' trees made again after the last move cost (ns): moves are spaced at least
        /// five times that apart, so a library being listed for the first time (the metadata moving
        /// all along) spends at most a sixth of a core on its views.
        var lastCost: UInt64 = 0
        var listeners: [@Sendable () -> Void] = []
        var timer: DispatchSourceTimer?
    }
    private let locked = Mutex(Locked())
    static let minimumInterval: UInt64 = 250_000_000

    init(state: StateDatabase, libraryPath: String, comicSuffix: String = "") {
        self.state = state
        self.libraryPath = libraryPath
        self.comicSuffix = comicSuffix
    }

    deinit { locked.withLock { $0.timer?.cancel() } }

    /// The current stamp, moved if the metadata moved and the last move is old enough.
    public func current() -> Snapshot {
        locked.withLock { locked in
            let now = DispatchTime.now()
            let moved = locked.generation != state.metadataGeneration
            let gap = max(Self.minimumInterval, 5 * locked.lastCost)
            if moved, locked.generation == nil || now.uptimeNanoseconds - locked.lastRead.uptimeNanoseconds >= gap {
                locked.generation = state.metadataGeneration
                locked.lastRead = now
                locked.snapshot = Snapshot(stamp: Int64(Date().timeIntervalSince1970 * 1e9))
                locked.lastCost = DispatchTime.now().uptimeNanoseconds - now.uptimeNanoseconds
            }
            return locked.snapshot
        }
    }

    /// Calls `listener` after each check of the timer (a view then sees whether it shows).
    public func onCheck(_ listener: @escaping @Sendable () -> Void) {
        locked.withLock { $0.listeners.append(listener) }
    }

    /// Starts the twice-a-second check (idempotent).
    public func start() {
        locked.withLock { locked in
            guard locked.timer == nil else { return }
            let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "inkyfs.metadata-views", qos: .utility))
            timer.schedule(deadline: .now() + 0.5, repeating: 0.5, leeway: .milliseconds(100))
            timer.setEventHandler { [weak self] in
                guard let self else { return }
                let started = DispatchTime.now().uptimeNanoseconds
                let stamp = self.current().stamp
                // Each view makes its tree again only if what it is made of moved.
                for listener in self.locked.withLock({ $0.listeners }) { listener() }
                let cost = DispatchTime.now().uptimeNanoseconds - started
                self.locked.withLock { if $0.snapshot.stamp == stamp, stamp != 0 { $0.lastCost = max($0.lastCost, cost) } }
            }
            timer.resume()
            locked.timer = timer
        }
    }
}

extension LibraryFilesystem {
    /// The library comics' metadata for the metadata views (`--views`), its timer's check
    /// started; nil when the mount shows none or keeps no state database.
    public func startMetadataCatalog() -> MetadataCatalog? {
        guard let state, !options.metadataViews.isEmpty else { return nil }
        let catalog = MetadataCatalog(state: state, libraryPath: libraryPath, comicSuffix: options.comicsAsCBZ ? CBZFiles.suffix : "")
        catalog.start()
        return catalog
    }
}
