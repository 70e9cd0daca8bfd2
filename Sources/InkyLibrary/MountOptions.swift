import Foundation
import InkyCore
import InkyWorker

/// Everything that shapes a mount's behaviour, with the defaults a reader wants.
public struct MountOptions: Sendable {
    public var limits: ComicLimits
    public var window: WindowPolicy
    /// The one memory budget for decoded pages across all comics.
    public var cacheBytes: Int
    /// Seconds the kernel may cache names and attributes of folders, comics and passthrough
    /// files. 0: every path walk asks us, so a change on disk shows at the next lookup.
    public var treeTimeout: Double
    /// Seconds the kernel may keep a page name → inode mapping. A page of a changed archive
    /// answers ESTALE, which makes the kernel look the name up again, so this can be longer.
    public var pageEntryTimeout: Double
    /// Seconds for attributes of pages, which never change within a generation.
    public var pageAttributeTimeout: Double
    /// Record pages read into the state database.
    public var recordProgress = true
    /// Name of the virtual folder of comics in progress; nil hides it.
    public var continueReadingName: String? = "Continue Reading"
    /// The metadata views shown at the mount root, in this order (`--views`); each shows only
    /// with something in it.
    public var metadataViews: [MetadataViewKind] = MetadataViewKind.allCases
    /// A folder of ComicRack reading lists (`.cbl`) shown in `Reading Lists/` besides the library's.
    public var readingListsDirectory: String?
    /// Name of the unlocked vault's subtree; nil never shows a vault.
    public var vaultName: String? = "Vault"
    /// Give the vault the library's modes (0555/0444). Off, the vault is 0500/0400: with
    /// `-o allow_other` other users see the library, but never the vault's pages.
    public var vaultAllowOther = false
    /// Comics of a folder listed at once in the background when the folder is opened (the
    /// worker count is the useful most); 1 or less: each comic is listed when looked up.
    public var listingParallelism = 4
    /// After mounting a library folder, list every comic in the background, in the order a
    /// recursive listing reaches them (`listLibraryAhead`).
    public var listLibraryAhead = false
    /// Serve every comic as one synthesized CBZ file (`--as cbz`) instead of a folder of pages.
    public var comicsAsCBZ = false
    /// Where covers are kept (`folder.jpg` and `.directory` in the folder view); nil: no covers.
    public var covers: CoverCache?
    /// Where converted pages are kept between mounts (`--page-cache-size`); nil: converted anew each mount.
    public var pageCache: ConvertedPageCache?
    /// Where pages around the last one read of solid comics are kept between mounts (`ResumePages`,
    /// in the page cache's folder and cap); nil: a remount decodes a solid stream from its start.
    public var resumePages: ResumePages?

    public init(limits: ComicLimits = .default, window: WindowPolicy = WindowPolicy(), cacheBytes: Int = 256 << 20,
                treeTimeout: Double = 0, pageEntryTimeout: Double = 1, pageAttributeTimeout: Double = 3600) {
        self.limits = limits
        self.window = window
        self.cacheBytes = cacheBytes
        self.treeTimeout = treeTimeout
        self.pageEntryTimeout = pageEntryTimeout
        self.pageAttributeTimeout = pageAttributeTimeout
    }
}

/// Where comic listings and page bytes come from: the worker pool in the daemon, anything
/// that can list and stream in tests. Each request carries its comic's source: a library file,
/// or a vault object with its key (`ComicSource`), so the backend never asks which it was.
public protocol ComicBackend: Sendable {
    func list(_ source: ComicSource, limits: ComicLimits) throws(ComicError) -> (ComicListing, FileIdentity)
    func read(_ source: ComicSource, identity: FileIdentity, entries: [EntryRequest], limits: ComicLimits,
              deliver: (PageSource, Result<[UInt8], ComicError>) -> Void) throws(ComicError)
    func comicInfo(_ source: ComicSource, identity: FileIdentity, limits: ComicLimits) throws(ComicError) -> [UInt8]?
    /// A cover made from `entry` (a JPEG at most `height` pixels high), decoded where pages are.
    func cover(_ source: ComicSource, identity: FileIdentity, entry: EntryRequest, height: Int, limits: ComicLimits) throws(ComicError) -> [UInt8]
    /// At every lock, before the vault's keys are wiped: nothing the backend keeps may hold a
    /// vault object's key, reader or decrypted bytes past it.
    func vaultLocked()
}

extension ComicBackend {
    public func cover(_ source: ComicSource, identity: FileIdentity, entry: EntryRequest, height: Int, limits: ComicLimits) throws(ComicError) -> [UInt8] {
        throw .io(path: source.path, errno: ENOTSUP, detail: "this backend makes no covers")
    }

    public func vaultLocked() {}
}

extension WorkerPool: ComicBackend {
    /// Every worker stops (idle ones and busy vault ones now, others when their request ends),
    /// so none keeps a key, reader or decrypted chunk, and the pool's own readers of vault
    /// objects go with their keys.
    public func vaultLocked() { retireAll() }
}
