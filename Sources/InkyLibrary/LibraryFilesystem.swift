import Foundation
import InkyCore
import InkyStore
import InkyVault
import InkyWorker

/// The mounted library as a tree of nodes, independent of FUSE: the adapter asks it for
/// lookups, attributes, listings and bytes, and turns the answers into replies.
///
/// Errors are POSIX error numbers (ENOENT for what vanished, ESTALE for a page of a comic
/// that changed since it was looked up, EIO for what cannot be read).
public final class LibraryFilesystem: @unchecked Sendable {
    public let libraryPath: String
    let options: MountOptions
    let backend: any ComicBackend
    let nodes: NodeTable
    let cache: PageCache
    let lock = NSLock()
    private var folders: [String: FolderIndex] = [:]
    var watcher: LibraryWatcher?
    private var _kernelCache: (any KernelCacheInvalidating)?
    /// Comics listed because the watcher saw them change, one at a time, off the FUSE threads.
    let reindexQueue = DispatchQueue(label: "inkyfs.reindex", qos: .utility)
    var comics: [String: ComicState] = [:]
    /// Identity and generation of comics whose file went missing, for `ComicState` to resume.
    private var retiredComics: [String: (identity: FileIdentity, generation: Int)] = [:]
    var unlockedVault: UnlockedVault?
    var lastVaultUse = Date()
    var openVaultFiles = 0
    /// Locks and unlocks so far: a vault page fetched across one is discarded.
    let vaultEpoch = VaultEpoch()
    let logger: @Sendable (String) -> Void
    /// The index and reading state; nil runs without memory between mounts.
    let state: StateDatabase?
    /// Reading-state writes happen here, off the FUSE threads.
    let stateQueue = DispatchQueue(label: "inkyfs.state")
    let isFolderLibrary: Bool
    private var _isStopping = false
    /// Set at unmount: background listing stops taking new comics.
    var isStopping: Bool { lock.withLock { _isStopping } }
    public func stopBackgroundWork() { lock.withLock { _isStopping = true } }

    /// Set by the FUSE layer while mounted.
    public var kernelCache: (any KernelCacheInvalidating)? {
        get { lock.withLock { _kernelCache } }
        set { lock.withLock { _kernelCache = newValue } }
    }
    /// How many comics were listed by the backend (not the index): the cost a warm index saves.
    public var backendListings: Int { lock.withLock { _backendListings } }
    private var _backendListings = 0

    /// `library` may be a folder (the tree) or one comic file (the root is its pages).
    public init(library: String, options: MountOptions, backend: any ComicBackend, state: StateDatabase? = nil,
                log: @escaping @Sendable (String) -> Void = { _ in }) {
        libraryPath = library
        self.options = options
        self.backend = backend
        self.state = state
        logger = log
        var isDirectory: ObjCBool = false
        _ = FileManager.default.fileExists(atPath: library, isDirectory: &isDirectory)
        isFolderLibrary = isDirectory.boolValue
        nodes = NodeTable(root: isDirectory.boolValue ? .folder("") : .comic(""))
        cache = PageCache(budget: options.cacheBytes)
    }

    public static let rootID: NodeID = 1

    // MARK: - Names and attributes

    public func lookup(parent: NodeID, name: String) -> Result<NodeAttributes, Errno> {
        guard let parentNode = nodes.node(parent) else { return .failure(.ENOENT) }
        touchVault(parentNode)
        switch parentNode {
        case .folder("") where isFolderLibrary && name == options.vaultName && vaultIsUnlocked:
            return attributes(of: nodes.id(for: .vaultFolder("")), node: .vaultFolder(""))
        case .vaultFolder(let folder):
            guard let child = vaultChildren(folder)?[name] else { return .failure(.ENOENT) }
            return attributes(of: nodes.id(for: child), node: child)
        case .folder("") where isFolderLibrary && name == options.continueReadingName:
            return attributes(of: nodes.id(for: .continueReading), node: .continueReading)
        case .continueReading:
            guard let comic = continueReadingLinks().first(where: { $0.name == name })?.comic else { return .failure(.ENOENT) }
            let node = Node.continueLink(comic: comic)
            return attributes(of: nodes.id(for: node), node: node)
        case .folder(let path):
            return folderIndex(path).flatMap { index in
                guard let child = index.nodes[name] else { return .failure(.ENOENT) }
                return attributes(of: nodes.id(for: child), node: child)
            }
        case .comic(let path):
            return comicChild(path, name: name).flatMap { attributes(of: nodes.id(for: $0), node: $0) }
        default:
            return .failure(.ENOTDIR)
        }
    }

    public func attributes(of id: NodeID) -> Result<NodeAttributes, Errno> {
        guard let node = nodes.node(id) else { return .failure(.ENOENT) }
        return attributes(of: id, node: node)
    }

    private func attributes(of id: NodeID, node: Node) -> Result<NodeAttributes, Errno> {
        let volatile = options.treeTimeout
        switch node {
        case .folder(let path), .file(let path):
            var info = stat()
            guard stat(realPath(path), &info) == 0 else { return .failure(Errno.current) }
            let isFolder = { if case .folder = node { true } else { false } }()
            var attributes = NodeAttributes(id: id, kind: isFolder ? .directory : .regularFile,
                                            size: isFolder ? 0 : Int64(info.st_size), permissions: isFolder ? 0o555 : 0o444,
                                            modifiedNanoseconds: FileIdentity(info).modifiedNanoseconds,
                                            entryTimeout: volatile, attributeTimeout: volatile)
            // The root's link count follows the vault's lock state too: unlock and lock tell
            // the kernel to forget the root's attributes (a zero timeout here would cost a
            // GETATTR of the root for every path looked up through the mount).
            if case .folder(let path) = node { attributes.linkCount = 2 + subdirectoryCount(path) }
            return .success(attributes)
        case .comic(let path):
            return currentComic(path).map { _, snapshot in comicAttributes(id, path, snapshot.identity) }
        case .page(let path, let generation, let index):
            return sameGeneration(path, generation).flatMap { snapshot in
                guard case .success(let listing) = snapshot.listing, index < listing.pages.count else { return .failure(.ENOENT) }
                let page = listing.pages[index]
                if page.isSizeKnown { return .success(fileAttributes(id, path, size: page.size, snapshot)) }
                return renderedSize(path, snapshot, listing, index).map { fileAttributes(id, path, size: $0, snapshot) }
            }
        case .comicInfo(let path, let generation):
            return sameGeneration(path, generation).flatMap { snapshot in
                guard case .success(let listing) = snapshot.listing, let size = listing.comicInfo?.declaredSize else { return .failure(.ENOENT) }
                return .success(fileAttributes(id, path, size: size, snapshot))
            }
        case .errorText(let path, let generation):
            return sameGeneration(path, generation).flatMap { snapshot in
                guard let text = Self.errorText(snapshot.listing, path: realPath(path)) else { return .failure(.ENOENT) }
                return .success(fileAttributes(id, path, size: Int64(text.utf8.count), snapshot))
            }
        case .vaultFolder(let folder):
            guard let children = vaultChildren(folder) else { return .failure(.ENOENT) }
            // Every child of a vault folder is a folder or a comic: a directory.
            return .success(NodeAttributes(id: id, kind: .directory, size: 0, permissions: directoryPermissions(Self.vaultComicPrefix),
                                           modifiedNanoseconds: Int64(Date().timeIntervalSince1970 * 1e9),
                                           entryTimeout: 0, attributeTimeout: 0, linkCount: 2 + children.count))
        case .continueReading:
            return .success(NodeAttributes(id: id, kind: .directory, size: 0, permissions: 0o555,
                                           modifiedNanoseconds: Int64(Date().timeIntervalSince1970 * 1e9),
                                           entryTimeout: 0, attributeTimeout: 0, linkCount: 2))
        case .continueLink(let comic):
            guard let target = linkTarget(comic) else { return .failure(.ENOENT) }
            return .success(NodeAttributes(id: id, kind: .symlink, size: Int64(target.utf8.count), permissions: 0o777,
                                           modifiedNanoseconds: Int64(Date().timeIntervalSince1970 * 1e9),
                                           entryTimeout: 0, attributeTimeout: 0))
        }
    }

    func comicAttributes(_ id: NodeID, _ comic: String, _ archive: FileIdentity) -> NodeAttributes {
        NodeAttributes(id: id, kind: .directory, size: 0, permissions: directoryPermissions(comic),
                       modifiedNanoseconds: archive.modifiedNanoseconds,
                       entryTimeout: options.treeTimeout, attributeTimeout: options.treeTimeout, linkCount: 2)
    }

    private func fileAttributes(_ id: NodeID, _ comic: String, size: Int64, _ snapshot: ComicState.Snapshot) -> NodeAttributes {
        NodeAttributes(id: id, kind: .regularFile, size: size, permissions: Self.isVaultComic(comic) && !options.vaultAllowOther ? 0o400 : 0o444,
                       modifiedNanoseconds: snapshot.identity.modifiedNanoseconds,
                       entryTimeout: options.pageEntryTimeout, attributeTimeout: options.pageAttributeTimeout)
    }

    /// The vault's directories are the mounting user's alone unless the mount says otherwise.
    private func directoryPermissions(_ comic: String) -> UInt32 {
        Self.isVaultComic(comic) && !options.vaultAllowOther ? 0o500 : 0o555
    }

    /// Directories under a library folder as the mount shows them: its sub-folders and comics,
    /// and at the root the virtual folders.
    private func subdirectoryCount(_ path: String) -> Int {
        guard case .success(let index) = folderIndex(path) else { return 0 }
        var count = index.nodes.values.count { node in
            switch node {
            case .folder, .comic: true
            default: false
            }
        }
        if path.isEmpty, isFolderLibrary {
            if options.continueReadingName != nil { count += 1 }
            if options.vaultName != nil, vaultIsUnlocked { count += 1 }
        }
        return count
    }

    /// The directory `..` names in a listing of `id`: the root is its own parent.
    public func parent(of id: NodeID) -> NodeID {
        func up(_ path: String) -> String { path.contains("/") ? String(path[..<path.lastIndex(of: "/")!]) : "" }
        switch nodes.node(id) {
        case .folder(let path)?:
            return path.isEmpty ? Self.rootID : nodes.id(for: .folder(up(path)))
        case .comic(let path)? where !Self.isVaultComic(path):
            return path.isEmpty ? Self.rootID : nodes.id(for: .folder(up(path)))
        case .comic(let path)?:
            let name = String(path.dropFirst(Self.vaultComicPrefix.count))
            guard let vault = lock.withLock({ unlockedVault }), let entry = (try? vault.entries)?.first(where: { $0.name == name }) else {
                return nodes.id(for: .vaultFolder(""))
            }
            return nodes.id(for: .vaultFolder(up(entry.displayPath)))
        case .vaultFolder(let folder)?:
            return folder.isEmpty ? Self.rootID : nodes.id(for: .vaultFolder(up(folder)))
        default:
            return Self.rootID
        }
    }

    // MARK: - Directories

    public func directoryEntries(of id: NodeID) -> Result<[DirectoryEntry], Errno> {
        guard let node = nodes.node(id) else { return .failure(.ENOENT) }
        touchVault(node)
        switch node {
        case .folder(let path):
            return folderIndex(path).map { index in
                var entries = index.names.map { name in
                    let child = index.nodes[name]!
                    let kind: NodeAttributes.Kind = if case .file = child { .regularFile } else { .directory }
                    return DirectoryEntry(name: name, id: nodes.id(for: child), kind: kind)
                }
                if path.isEmpty, isFolderLibrary, let name = options.continueReadingName {
                    entries.append(DirectoryEntry(name: name, id: nodes.id(for: .continueReading), kind: .directory))
                }
                if path.isEmpty, isFolderLibrary, let name = options.vaultName, vaultIsUnlocked {
                    entries.append(DirectoryEntry(name: name, id: nodes.id(for: .vaultFolder("")), kind: .directory))
                }
                return entries
            }
        case .vaultFolder(let folder):
            guard let children = vaultChildren(folder) else { return .failure(.ENOENT) }
            return .success(children.keys.sorted().map { name in
                DirectoryEntry(name: name, id: nodes.id(for: children[name]!), kind: .directory)
            })
        case .continueReading:
            return .success(continueReadingLinks().map { link in
                DirectoryEntry(name: link.name, id: nodes.id(for: .continueLink(comic: link.comic)), kind: .symlink)
            })
        case .comic(let path):
            return currentComic(path).map { _, snapshot in
                comicChildren(path, snapshot).map { DirectoryEntry(name: $0.name, id: nodes.id(for: $0.node), kind: .regularFile) }
            }
        default:
            return .failure(.ENOTDIR)
        }
    }

    /// A comic directory's files: its pages and hidden ComicInfo.xml, or only ERROR.txt.
    private func comicChildren(_ path: String, _ snapshot: ComicState.Snapshot) -> [(name: String, node: Node)] {
        if Self.errorText(snapshot.listing, path: realPath(path)) != nil {
            return [("ERROR.txt", .errorText(comic: path, generation: snapshot.generation))]
        }
        guard case .success(let listing) = snapshot.listing else { return [] }
        var children = listing.pages.map { ($0.name, Node.page(comic: path, generation: snapshot.generation, index: $0.number)) }
        if listing.comicInfo != nil { children.append((".ComicInfo.xml", .comicInfo(comic: path, generation: snapshot.generation))) }
        return children
    }

    private func comicChild(_ path: String, name: String) -> Result<Node, Errno> {
        currentComic(path).flatMap { state, snapshot in
            if name == "ERROR.txt", Self.errorText(snapshot.listing, path: realPath(path)) != nil {
                return .success(.errorText(comic: path, generation: snapshot.generation))
            }
            guard case .success(let listing) = snapshot.listing, !listing.pages.isEmpty else { return .failure(.ENOENT) }
            if name == ".ComicInfo.xml", listing.comicInfo != nil {
                return .success(.comicInfo(comic: path, generation: snapshot.generation))
            }
            guard let number = state.pageNumber(named: name) else { return .failure(.ENOENT) }
            return .success(.page(comic: path, generation: snapshot.generation, index: number))
        }
    }

    // MARK: - Opening and reading

    public func open(_ id: NodeID) -> Result<OpenedFile, Errno> {
        guard let node = nodes.node(id) else { return .failure(.ENOENT) }
        if Self.isVaultNode(node) {
            touchVault(node)
            lock.withLock { openVaultFiles += 1 }
        }
        switch node {
        case .file(let path):
            let fd = Glibc.open(realPath(path), O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { return .failure(Errno.current) }
            return .success(OpenedFile(keepCache: false, descriptor: fd))
        case .page(let path, let generation, _), .comicInfo(let path, let generation), .errorText(let path, let generation):
            let opened = sameGeneration(path, generation).map { _ in OpenedFile(keepCache: true, descriptor: nil) }
            if case .failure = opened, Self.isVaultComic(path) { lock.withLock { openVaultFiles = max(0, openVaultFiles - 1) } }
            return opened
        case .folder, .comic, .continueReading, .vaultFolder:
            return .failure(.EISDIR)
        case .continueLink:
            return .failure(.ELOOP)
        }
    }

    /// Reads `size` bytes at `offset`. Calls `completion` at once on a cache hit (on the
    /// caller's thread), later from the comic's fetch queue on a miss.
    public func read(_ id: NodeID, offset: Int64, size: Int, descriptor: Int32?,
                     completion: @escaping @Sendable (Result<ArraySlice<UInt8>, Errno>) -> Void) {
        guard let node = nodes.node(id) else { return completion(.failure(.ENOENT)) }
        touchVault(node)
        switch node {
        case .file:
            guard let descriptor else { return completion(.failure(.EBADF)) }
            var buffer = [UInt8](repeating: 0, count: size)
            let got = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress!, size, off_t(offset)) }
            completion(got < 0 ? .failure(Errno.current) : .success(buffer[0..<got]))
        case .errorText(let path, let generation):
            switch sameGeneration(path, generation) {
            case .success(let snapshot): completion(.success(Self.slice(Array((Self.errorText(snapshot.listing, path: realPath(path)) ?? "").utf8), offset, size)))
            case .failure(let code): completion(.failure(code))
            }
        case .comicInfo(let path, let generation):
            completion(comicInfoBytes(path, generation).map { Self.slice($0, offset, size) })
        case .page(let path, let generation, let index):
            readPage(path, generation: generation, index: index) { result in
                completion(result.map { Self.slice($0, offset, size) })
            }
        case .folder, .comic, .continueReading, .continueLink, .vaultFolder:
            completion(.failure(.EISDIR))
        }
    }

    /// A file opened with `open` was closed.
    public func release(_ id: NodeID) {
        guard let node = nodes.node(id), Self.isVaultNode(node) else { return }
        lock.withLock {
            openVaultFiles = max(0, openVaultFiles - 1)
            lastVaultUse = Date()
        }
    }

    /// The target of a `Continue Reading/` link.
    public func readLink(_ id: NodeID) -> Result<String, Errno> {
        guard case .continueLink(let comic)? = nodes.node(id), let target = linkTarget(comic) else { return .failure(.EINVAL) }
        return .success(target)
    }

    private func readPage(_ path: String, generation: Int, index: Int,
                          completion: @escaping @Sendable (Result<[UInt8], Errno>) -> Void) {
        guard let state = comicState(path), let snapshot = state.snapshot(), snapshot.generation == generation,
              case .success(let listing) = snapshot.listing, index < listing.pages.count else {
            // A page of a locked vault: the file is still open, its content is gone.
            return completion(.failure(Self.isVaultComic(path) ? .EIO : .ESTALE))
        }
        let key = PageCache.Key(comic: path, generation: generation, index: index)
        let previous = state.moveTo(page: index)
        if index != previous || !state.recordedOnce { recordReading(state.realPath, page: index, of: listing.pages.count, comic: state) }
        if let bytes = cache.page(key) {
            completion(.success(bytes))
        } else {
            let logger = self.logger
            let waiter: PageCache.Waiter = { [self] result in
                completion(result.mapError { error in
                    logger("read failed: \(loggable(error, of: path))")
                    // The archive replaced or deleted since it was listed: what the kernel and
                    // the reader expect for a file that changed or vanished, not an I/O error.
                    switch error {
                    case .io(_, ESTALE, _): return .ESTALE
                    case .io(_, ENOENT, _): return .ENOENT
                    default: return .EIO
                    }
                })
            }
            if !cache.wait(for: key, waiter) {
                fetch(state, snapshot, listing, pages: [index], first: waiter)
            }
        }
        maintainWindow(state, snapshot, listing, current: index, previous: previous)
    }

    /// Evicts pages outside twice the window and fetches the next pages ahead.
    private func maintainWindow(_ state: ComicState, _ snapshot: ComicState.Snapshot, _ listing: ComicListing, current: Int, previous: Int) {
        if current != previous {
            let policy = options.window
            cache.drop(comic: state.relativePath) { key in
                key.generation != snapshot.generation || policy.shouldEvict(key.index, current: current)
            }
        }
        var ahead = options.window.prefetched(after: current, pageCount: listing.pages.count)
        if listing.isSolid, let here = listing.pages[safe: current] {
            // In a solid stream only pages after this one are cheap; the rest wait for their turn.
            ahead = ahead.filter { listing.pages[$0].entryIndex > here.entryIndex }
        }
        if !ahead.isEmpty { fetch(state, snapshot, listing, pages: ahead, first: nil) }
    }

    /// Fetches pages on the comic's queue, in stream order, and completes their waiters.
    func fetch(_ state: ComicState, _ snapshot: ComicState.Snapshot, _ listing: ComicListing,
               pages: [Int], first waiter: PageCache.Waiter?) {
        let keys = pages.map { PageCache.Key(comic: state.relativePath, generation: snapshot.generation, index: $0) }
        let claimed = cache.claim(keys)
        if let waiter, let firstKey = keys.first {
            if claimed.contains(firstKey) { _ = cache.wait(for: firstKey, waiter) } else if !cache.wait(for: firstKey, waiter) {
                waiter(.failure(.parserFailed(path: state.realPath, detail: "page vanished from the cache")))
            }
        }
        guard !claimed.isEmpty else { return }
        if listing.isSolid {
            // One decoder, one stream: the pages in stream order, one request after another.
            request(claimed, state, snapshot, listing, on: state.fetchQueue)
        } else {
            // Entries of a non-solid archive decode independently: one request per page, so the
            // pool spreads them over its workers and the cores (a deflated CBZ reads ~2x faster).
            for key in claimed { request([key], state, snapshot, listing, on: Self.independentFetches) }
        }
    }

    /// Page requests of non-solid comics, several at a time (the worker pool bounds them).
    private static let independentFetches = DispatchQueue(label: "inkyfs.fetch", attributes: .concurrent)

    /// Asks the backend for the claimed pages in one request on `queue` and completes them.
    private func request(_ claimed: [PageCache.Key], _ state: ComicState, _ snapshot: ComicState.Snapshot,
                         _ listing: ComicListing, on queue: DispatchQueue) {
        let byEntry = Dictionary(claimed.map { (listing.pages[$0.index].entryIndex, $0) }, uniquingKeysWith: { first, _ in first })
        let requests = claimed.map { key in
            let page = listing.pages[key.index]
            return EntryRequest(entryIndex: page.entryIndex, size: page.size, name: page.sourcePath, stored: page.storedData)
        }.sorted { $0.entryIndex < $1.entryIndex }
        let backend = self.backend, cache = self.cache, limits = options.limits, path = state.realPath
        let discard = vaultPageCheck(for: state.relativePath, path: path)
        queue.async { [self] in
            var pending = Set(claimed)
            if let locked = discard() {
                // Locked since the claim: the object is not read at all.
                for key in pending { cache.complete(key, .failure(locked)) }
                return
            }
            do throws(ComicError) {
                try backend.read(path, identity: snapshot.identity, entries: requests, limits: limits) { entryIndex, result in
                    guard let key = byEntry[entryIndex], pending.remove(key) != nil else { return }
                    if !listing.pages[key.index].isSizeKnown, case .success(let bytes) = result {
                        // Known before the waiters wake, so a lookup of this page needs no render.
                        keep([key.index: Int64(bytes.count)], of: state, generation: snapshot.generation)
                    }
                    cache.complete(key, result, discard: discard)
                }
                for key in pending { cache.complete(key, .failure(.corrupted(path: path, detail: "the page was not delivered"))) }
            } catch {
                // A parser that crashed or hung on this comic will do so again: show ERROR.txt.
                if case .parserFailed = error {
                    state.markFailed(error, generation: snapshot.generation)
                    // The kernel keeps directory listings: it must read ERROR.txt in this one now.
                    kernelCache?.invalidateNode(nodes.id(for: .comic(state.relativePath)))
                }
                for key in pending { cache.complete(key, .failure(error)) }
            }
        }
    }

    private func comicInfoBytes(_ path: String, _ generation: Int) -> Result<[UInt8], Errno> {
        guard let state = comicState(path), let snapshot = state.snapshot(), snapshot.generation == generation else {
            return .failure(.ESTALE)
        }
        if let bytes = state.comicInfo { return .success(bytes) }
        do throws(ComicError) {
            guard let bytes = try backend.comicInfo(state.realPath, identity: snapshot.identity, limits: options.limits) else {
                return .failure(.ENOENT)
            }
            state.comicInfo = bytes
            return .success(bytes)
        } catch {
            logger("ComicInfo.xml failed: \(loggable(error, of: path))")
            return .failure(.EIO)
        }
    }

    // MARK: - Extended attributes

    public func extendedAttributes(of id: NodeID) -> [String: [UInt8]] {
        guard let node = nodes.node(id), let path = node.comicPath else { return [:] }
        var attributes = ["user.inkyfs.archive": Array(realPath(path).utf8)]
        if case .page(_, let generation, let index) = node, case .success(let snapshot) = sameGeneration(path, generation),
           case .success(let listing) = snapshot.listing, index < listing.pages.count {
            attributes["user.inkyfs.source"] = Array(listing.pages[index].sourcePath.utf8)
        }
        return attributes
    }

    // MARK: - State

    func realPath(_ relative: String) -> String {
        if Self.isVaultComic(relative) { return vaultObjectPath(relative) ?? "/nonexistent/inkyfs-vault-locked" }
        return relative.isEmpty ? libraryPath : libraryPath + "/" + relative
    }

    func folderIndex(_ path: String) -> Result<FolderIndex, Errno> {
        let real = realPath(path)
        let identity: FileIdentity
        switch FileIdentity.of(real) {
        case .success(let value): identity = value
        case .failure(let code): return .failure(code)
        }
        if let index = lock.withLock({ folders[path] }), index.identity == identity { return .success(index) }
        let index = FolderIndex.build(realPath: real, relativePath: path, identity: identity)
        lock.withLock { folders[path] = index }
        return .success(index)
    }

    func comicState(_ path: String) -> ComicState? {
        lock.withLock { comics[path] }
    }

    /// The comic's state after checking the file on disk: vanished → ENOENT, changed → a new
    /// generation (its old pages dropped), unlisted → listed now, through the backend.
    func currentComic(_ path: String) -> Result<(ComicState, ComicState.Snapshot), Errno> {
        let real = realPath(path)
        let identity: FileIdentity
        switch FileIdentity.of(real) {
        case .success(let value): identity = value
        case .failure(let code):
            lock.withLock {
                if let gone = comics.removeValue(forKey: path), let resumable = gone.resumable { retiredComics[path] = resumable }
            }
            cache.drop(comic: path) { _ in true }
            return .failure(code)
        }
        let state = lock.withLock {
            if let existing = comics[path] { return existing }
            let created = ComicState(relativePath: path, realPath: real, resuming: retiredComics.removeValue(forKey: path))
            comics[path] = created
            return created
        }
        if state.refresh(identity) {
            let generation = state.generation
            cache.drop(comic: path) { $0.generation != generation }
            logger("\(real) changed on disk: serving its new content")
        }
        if let snapshot = state.snapshot() { return .success((state, snapshot)) }
        state.listingLock.lock()
        defer { state.listingLock.unlock() }
        if let snapshot = state.snapshot() { return .success((state, snapshot)) }
        let stateDatabase = Self.isVaultComic(path) ? nil : self.state
        if let indexed = stateDatabase?.indexedListing(real, identity: identity), Self.fits(indexed, options.limits.rendering) {
            state.store(indexed, for: identity)
        } else {
            lock.withLock { _backendListings += 1 }
            do throws(ComicError) {
                let (listing, listedIdentity) = try backend.list(real, limits: options.limits)
                if listedIdentity != identity {
                    // Changed while being listed: the next lookup starts over with the new file.
                    _ = state.refresh(listedIdentity)
                }
                state.store(.success(listing), for: listedIdentity)
                stateDatabase?.storeListing(real, identity: listedIdentity, .success(listing))
            } catch {
                // Vault object paths are random hex: the log never learns a vault comic's name.
                logger("cannot open \(loggable(error, of: path))")
                state.store(.failure(error), for: identity)
                stateDatabase?.storeListing(real, identity: identity, .failure(error))
            }
        }
        guard let snapshot = state.snapshot() else { return .failure(.EIO) }
        return .success((state, snapshot))
    }

    /// The comic's snapshot if `generation` is still current; ESTALE for pages of a changed file.
    func sameGeneration(_ path: String, _ generation: Int) -> Result<ComicState.Snapshot, Errno> {
        currentComic(path).flatMap { _, snapshot in
            snapshot.generation == generation ? .success(snapshot) : .failure(.ESTALE)
        }
    }

    /// ERROR.txt's text for a comic that shows no pages, nil for a readable one.
    static func errorText(_ listing: Result<ComicListing, ComicError>, path: String) -> String? {
        switch listing {
        case .failure(let error):
            return "inkyfs cannot show this comic.\n\n\(error.message)\n"
        case .success(let value) where value.pages.isEmpty:
            return "inkyfs cannot show this comic.\n\n\(ComicError.noPages(path: path).message)\n"
        case .success:
            return nil
        }
    }

    static func slice(_ bytes: [UInt8], _ offset: Int64, _ size: Int) -> ArraySlice<UInt8> {
        guard offset < Int64(bytes.count), offset >= 0 else { return [] }
        let start = Int(offset)
        return bytes[start..<min(bytes.count, start + size)]
    }
}
