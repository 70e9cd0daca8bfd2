import Foundation
import InkyCore
import InkyStore
import InkyTree
import InkyVault
import InkyWorker
import Synchronization

/// The library as a tree of typed nodes (`Node`), independent of FUSE and of inode numbers: a
/// front end asks it for lookups, attributes, listings and bytes by what a node stands for (a
/// mount numbers them: InkyMount's `NumberedLibrary`). Its parts live in files by concept: names and attributes (`LibraryNames`), the
/// comics and folders it knows (`ComicCatalog`), opening and reading (`FileReads`), the window
/// cache and its fetching (`ComicPages`, `PageFetching`), the vault (`VaultSubtree`), reading
/// state, listing ahead.
///
/// Errors are POSIX error numbers (ENOENT for what vanished, ESTALE for a page of a comic
/// that changed since it was looked up, EIO for what cannot be read).
///
/// It has no lock of its own: each concern's state sits in its owner (`ComicCatalog`,
/// `VaultSession`, `ComicPages`...) behind that owner's lock, and its few flags in their own.
public final class LibraryFilesystem: Sendable {
    public let libraryPath: String
    /// Every read of the library goes through here, never following a link (`LibraryRoot`).
    let root: LibraryRoot
    /// What the library was made to show and how (the mount's views read which they are).
    public let options: MountOptions
    let backend: any ComicBackend
    /// The window cache and the bounds of its fetches (`ComicPages`).
    let pages: ComicPages
    /// The folders and comics it knows, and their generations (`ComicCatalog`).
    let catalog: ComicCatalog
    /// Comics' `lstat`s of the last second, for what directory listings show.
    let recentChecks = RecentComicChecks()
    /// The inotify watcher, from `startWatching` on (`LibraryChanges`).
    let watching = Mutex<LibraryWatcher?>(nil)
    /// Others told of what the watcher saw (`LibraryChanges`).
    let changeListeners = LibraryChangeListeners()
    private let _changeObserver = Mutex<(any LibraryChangeObserver)?>(nil)
    /// Comics listed because the watcher saw them change, one at a time, off the FUSE threads.
    let reindexQueue = DispatchQueue(label: "inkyfs.reindex", qos: .utility)
    /// Series folders' covers: which comic gives one, their cache and making (`FolderCovers`).
    let covers: FolderCovers
    /// One KOReader digest pass at a time (`DocumentDigesting`), and when the last one started.
    let digestPass = Mutex(())
    let lastDigestPass = Mutex(Date.distantPast)
    /// The vault, from unlock to lock: its keys, names, covers and use (`VaultSession`).
    public let vault: VaultSession
    /// Where the library's log lines go (a view says there when it appears).
    public let logger: LogSink
    /// The index and reading state; nil runs without memory between mounts.
    public let state: StateDatabase?
    /// Reading-state and index writes happen here, off the FUSE threads.
    let stateQueue = DispatchQueue(label: "inkyfs.state")
    /// What counts as reading, and the reads recorded (`ReadingLog`); nil without a state database.
    let reading: ReadingLog?
    /// Listings stored and removed in the index, batched on the state queue.
    let indexWriter: IndexWriter?
    /// A folder mounted, not one comic file (which shows only its pages, no views).
    public let isFolderLibrary: Bool
    private let stopping = Atomic<Bool>(false)
    /// Set at unmount: background listing stops taking new comics.
    var isStopping: Bool { stopping.load(ordering: .acquiring) }
    public func stopBackgroundWork() { stopping.store(true, ordering: .releasing) }

    /// Who is told what changed (`LibraryChangeObserver`), by type: a mount, whose kernel keeps
    /// what it showed (InkyMount numbers the changes for it); nil when nobody keeps anything.
    public var changeObserver: (any LibraryChangeObserver)? {
        get { _changeObserver.withLock { $0 } }
        set { _changeObserver.withLock { $0 = newValue } }
    }

    /// The node the tree starts at: the library folder, or the one comic mounted.
    public var rootNode: Node { isFolderLibrary ? .folder("") : .comic(.library("")) }

    /// `library` may be a folder (the tree) or one comic file (the root is its pages).
    public convenience init(library: String, options: MountOptions, backend: any ComicBackend, state: StateDatabase? = nil,
                            log: @escaping LogSink = { _ in }) {
        self.init(root: Self.openRoot(library), options: options, backend: backend, state: state, log: log)
    }

    /// The library as the core opens it: a listing reaches the same few folders for every comic
    /// in them, so they are kept open. A mount or server opens it once, for its workers' pool too.
    public static func openRoot(_ library: String) -> LibraryRoot { LibraryRoot(path: library, cachedFolders: 64) }

    /// The library opened already (`openRoot`).
    public init(root: LibraryRoot, options: MountOptions, backend: any ComicBackend, state: StateDatabase? = nil,
                log: @escaping LogSink = { _ in }) {
        let library = root.path
        libraryPath = library
        self.options = options
        self.backend = backend
        self.state = state
        let queue = stateQueue
        indexWriter = state.map { IndexWriter(database: $0, queue: queue) }
        reading = state.map { ReadingLog(database: $0, queue: queue, log: log) }
        logger = log
        self.root = root
        isFolderLibrary = root.isFolder
        catalog = ComicCatalog(root: root, comicSuffix: options.comicsAsCBZ ? CBZFiles.suffix : "", recentChecks: recentChecks)
        covers = FolderCovers(cache: options.covers, log: log)
        // As many fetches at once as there are workers to serve them, and one more for stored
        // ZIP pages, which the daemon reads itself while every worker decodes.
        pages = ComicPages(budget: options.cacheBytes, fetchLimit: options.listingParallelism + 1, window: options.window)
        vault = VaultSession(pages: pages.cache, log: log)
        // The library's part of the vault's unlock and lock: its comics' states, the kernel's
        // names and numbers for them, the backend's keys and readers. A view's part comes after
        // (the mount's `Vault/` view).
        vault.whenUnlocked { [weak self] in self?.vaultUnlocked() }
        vault.whenLocking { [weak self] shown in
            // The backend first: the kernel's invalidation of a vault file waits for a read in
            // flight, which the backend ends at once.
            self?.backend.vaultLocked()
            self?.vaultLocking(shown: shown)
        }
        // A folder listed with a `folder.jpg` none of its comics gives: the kernel forgets the name.
        covers.whenNoCover { [weak self] folder in self?.forgetCover(of: folder) }
        // The vault's own metadata views' trees, where `Vault/` shows (the mount numbers them).
        if root.isFolder, options.vaultName != nil, !options.metadataViews.isEmpty {
            vault.keep(views: VaultMetadataCatalog(kinds: options.metadataViews, library: self))
        }
    }

    /// The real path of a library folder or file given relative to the root.
    func realPath(_ relative: String) -> String {
        relative.isEmpty ? libraryPath : libraryPath + "/" + relative
    }

    /// The file a comic is read from: a library file, or the object of a vault comic (a path
    /// that exists nowhere once the vault is locked).
    func realPath(_ comic: ComicRef) -> String {
        switch comic {
        case .library(let path): realPath(path)
        case .vault(let name): vault.objectPath(name) ?? "/nonexistent/inkyfs-vault-locked"
        }
    }

    /// What the index and reading state know a comic by: library comics only.
    func libraryFile(_ comic: ComicRef) -> LibraryFile? {
        comic.libraryPath.map { LibraryFile(path: realPath($0)) }
    }
}
