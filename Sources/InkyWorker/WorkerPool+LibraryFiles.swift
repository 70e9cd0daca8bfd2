import InkyCore

/// Requests for a comic named by its path alone: a library file (or a comic given on the command
/// line), never a vault object, whose requests carry their key (`ComicSource`).
extension WorkerPool {
    public func list(_ path: String, limits: ComicLimits) throws(ComicError) -> (ComicListing, FileIdentity) {
        try list(.file(path), limits: limits)
    }

    public func read(_ path: String, identity: FileIdentity, entries: [EntryRequest], limits: ComicLimits,
                     deliver: (PageSource, Result<[UInt8], ComicError>) -> Void) throws(ComicError) {
        try read(.file(path), identity: identity, entries: entries, limits: limits, deliver: deliver)
    }

    public func comicInfo(_ path: String, identity: FileIdentity, limits: ComicLimits) throws(ComicError) -> [UInt8]? {
        try comicInfo(.file(path), identity: identity, limits: limits)
    }

    public func cover(_ path: String, identity: FileIdentity, entry: EntryRequest, height: Int, limits: ComicLimits) throws(ComicError) -> [UInt8] {
        try cover(.file(path), identity: identity, entry: entry, height: height, limits: limits)
    }
}
