import InkyCore

extension WorkerPool {
    /// Lists a comic in a worker.
    public func list(_ path: String, limits: ComicLimits) throws(ComicError) -> (ComicListing, FileIdentity) {
        var result: Result<(ComicListing, FileIdentity), ComicError>?
        try exchange(path: path, request: .list(path: path, limits: limits)) { reply, _ throws(ComicError) in
            switch reply {
            case .progress: return false
            case .listing(let wire, let identity):
                // Checked again here: a hijacked worker's names and sizes must not trap the daemon.
                let breach = wire.listing.breach(of: limits, fileSize: identity.size)
                result = breach.map { .failure(.parserFailed(path: path, detail: "the worker's listing is impossible: \($0)")) }
                    ?? .success((wire.listing, identity))
            case .failure(let error): result = .failure(error)
            default: throw .parserFailed(path: path, detail: "the worker answered out of turn")
            }
            return true
        }
        guard let result else { throw .parserFailed(path: path, detail: "the worker gave no listing") }
        if case .success(let (listing, _)) = result { startDecoding(path, listing: listing) }
        return try result.get()
    }

    /// The ComicInfo.xml bytes, nil when the comic has none.
    public func comicInfo(_ path: String, identity: FileIdentity, limits: ComicLimits) throws(ComicError) -> [UInt8]? {
        var collector = PageCollector(path: path, entries: [EntryRequest(source: .comicInfo, size: limits.maxPageBytes, name: "ComicInfo.xml")])
        var bytes: [UInt8]?
        try exchange(path: path, request: .comicInfo(path: path, identity: identity, limits: limits)) { reply, data throws(ComicError) in
            try collector.accept(reply: reply, data: data) { _, result in bytes = try? result.get() }
        }
        if let failure = collector.requestFailure { throw failure }
        return bytes
    }
}
