import InkyCore
import InkyWorker

/// Everything that shapes a mount's behaviour, with the defaults a reader wants.
public struct MountOptions: Sendable {
    public var limits: ComicLimits
    public var window: WindowPolicy
    /// The one memory budget for decoded pages across all comics.
    public var cacheBytes: Int
    /// Seconds the kernel may cache names and attributes of things that can change on disk.
    public var volatileTimeout: Double
    /// Seconds for attributes of pages, which never change within a generation.
    public var pageAttributeTimeout: Double

    public init(limits: ComicLimits = .default, window: WindowPolicy = WindowPolicy(), cacheBytes: Int = 256 << 20,
                volatileTimeout: Double = 1, pageAttributeTimeout: Double = 3600) {
        self.limits = limits
        self.window = window
        self.cacheBytes = cacheBytes
        self.volatileTimeout = volatileTimeout
        self.pageAttributeTimeout = pageAttributeTimeout
    }
}

/// Where comic listings and page bytes come from: the worker pool in the daemon, anything
/// that can list and stream in tests.
public protocol ComicBackend: Sendable {
    func list(_ path: String, limits: ComicLimits) throws(ComicError) -> (ComicListing, FileIdentity)
    func read(_ path: String, identity: FileIdentity, entries: [EntryRequest], limits: ComicLimits,
              deliver: (Int, Result<[UInt8], ComicError>) -> Void) throws(ComicError)
    func comicInfo(_ path: String, identity: FileIdentity, limits: ComicLimits) throws(ComicError) -> [UInt8]?
}

extension WorkerPool: ComicBackend {}
