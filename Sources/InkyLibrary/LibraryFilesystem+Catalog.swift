import Foundation
import InkyCore
import InkyTree
import InkyWorker
import Synchronization

/// The comics and folders the mounted library knows (`ComicCatalog`), checked against the disk
/// at each use: a folder's index is rebuilt when its mtime moves, a comic whose file changed
/// starts a new generation, and a comic not listed yet is listed (from the index, else by a worker).
extension LibraryFilesystem {
    /// The index of the library folder `path`; ENOENT when it is gone or no longer a folder.
    func folderIndex(_ path: String) -> Result<FolderIndex, Errno> {
        switch sourceStatus(path, type: S_IFDIR) {
        case .success(let value): catalog.folderIndex(path, identity: FileIdentity(value))
        case .failure(let code): .failure(code)
        }
    }

    /// The comic's state as kept, without looking at its file (nil when none is kept).
    func comicState(_ comic: ComicRef) -> ComicState? {
        catalog.comic(comic)
    }

    /// How many comics were listed by the backend (not the index): the cost a warm index saves.
    public var backendListings: Int { catalog.backendListings }

    /// The comic's state after checking the file on disk: vanished → ENOENT, changed → a new
    /// generation (its old pages dropped), unlisted → listed now, through the backend.
    /// `known`: what listing ahead just learned of the comic (its file, and the index's row if
    /// it read the index for it: a folder's comics are read in one transaction), used instead
    /// of looking again.
    func currentComic(_ comic: ComicRef, known: KnownComic? = nil) -> Result<(ComicState, ComicState.Snapshot), Errno> {
        let real = realPath(comic)
        let identity: FileIdentity
        let permissions: SourcePermissions
        switch known.map({ .success($0.check) }) ?? comicCheck(comic) {
        case .success(let check): (identity, permissions) = (check.identity, check.permissions)
        case .failure(let code):
            catalog.vanished(comic)
            pages.cache.drop(comic: comic) { _ in true }
            return .failure(code)
        }
        let state = catalog.comic(comic, readFrom: real)
        state.permissions = permissions
        let (changed, before) = state.replace(identity, catalog.generations)
        if changed {
            let generation = state.generation
            pages.cache.drop(comic: comic) { $0.generation != generation }
            logger("\(real) changed on disk: serving its new content")
            // Seen here before the watcher said so (or where it cannot see): the kernel still
            // holds the old pages' names. Told from another thread: this may be a request
            // about the comic's own directory, which the kernel locks until it is answered.
            if let before {
                dropResumePages(of: comic, before)
                DispatchQueue.global(qos: .utility).async { [weak self] in self?.forgetChildren(of: comic, before) }
            }
        }
        if let snapshot = state.snapshot() { return .success((state, snapshot)) }
        return state.listingLock.withLock { _ in
            if let snapshot = state.snapshot() { return .success((state, snapshot)) }
            // The index knows library files only: a vault comic is never looked up or stored there.
            let stored = libraryFile(comic).flatMap { file in self.state.map { (file, $0) } }
            let indexed = known.map(\.indexed) ?? stored.flatMap { file, database in database.indexedListing(file, identity: identity) }
            if let listing = indexed,
               Self.fits(listing, options.limits.rendering) {
                state.store(listing, for: identity)
            } else {
                catalog.listedByBackend()
                do throws(ComicError) {
                    let (listing, listedIdentity) = try backend.list(source(of: state), limits: options.limits)
                    if listedIdentity != identity {
                        // Changed while being listed: the next lookup starts over with the new file.
                        _ = state.refresh(listedIdentity, catalog.generations)
                    }
                    state.store(.success(listing), for: listedIdentity)
                    if let (file, _) = stored { indexWriter?.store(file, identity: listedIdentity, .success(listing)) }
                } catch {
                    // Vault object paths are random hex, and a vault comic's error details stay out.
                    logger(.error("cannot open \(loggable(error, of: comic))"))
                    state.store(.failure(error), for: identity)
                    if let (file, _) = stored { indexWriter?.store(file, identity: identity, .failure(error)) }
                }
            }
            // Listed now: the state weighs its pages.
            catalog.listed(comic)
            guard let snapshot = state.snapshot() else { return .failure(.EIO) }
            return .success((state, snapshot))
        }
    }

    /// The comic's snapshot if `generation` is still current; ESTALE for pages of a changed file.
    func sameGeneration(_ comic: ComicRef, _ generation: Int) -> Result<ComicState.Snapshot, Errno> {
        currentComic(comic).flatMap { _, snapshot in
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
}

/// What listing ahead learned of a comic before asking for it: its file, and the index's row
/// for it (nil: the index has none for this file as it is).
struct KnownComic: Sendable {
    var check: ComicCheck
    var indexed: Result<ComicListing, ComicError>?
}
