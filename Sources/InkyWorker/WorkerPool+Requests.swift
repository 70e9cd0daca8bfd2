import InkyCore

extension WorkerPool {
    /// Streams entries of a comic; `deliver` gets each entry's complete bytes or its error,
    /// in the order the worker finishes them.
    /// Stored ZIP members are read here without a worker (`storedPage`).
    public func read(_ source: ComicSource, identity: FileIdentity, entries: [EntryRequest], limits: ComicLimits,
                     deliver: (PageSource, Result<[UInt8], ComicError>) -> Void) throws(ComicError) {
        let path = source.path
        var decoded: [EntryRequest] = []
        for entry in entries {
            if let stored = entry.stored, let result = storedPage(source, identity: identity, entry: entry, stored: stored, limits: limits) {
                deliver(entry.source, result)
            } else {
                decoded.append(entry)
            }
        }
        guard !decoded.isEmpty else { return }
        var collector = PageCollector(path: path, entries: decoded, renderedLimit: limits.maxPageBytes)
        try exchange(source, request: .read(path: path, identity: identity, entries: decoded, limits: limits)) { reply, data throws(ComicError) in
            try collector.accept(reply: reply, data: data, deliver: deliver)
        }
        if let failure = collector.requestFailure { throw failure }
    }

    /// A stored ZIP member read here: a vault object's by decrypting its range of the plaintext,
    /// a library file's with one `pread`; nil leaves it to a worker. A vault object is never
    /// read as a plain file: once lock revoked its key, its pages fail (and the library
    /// discards any vault page whose read began before the lock).
    private func storedPage(_ source: ComicSource, identity: FileIdentity, entry: EntryRequest, stored: StoredData,
                            limits: ComicLimits) -> Result<[UInt8], ComicError>? {
        guard case .vaultObject(let path, let key) = source else {
            return storedPages.read(source.path, identity: identity, entry: entry, stored: stored, limits: limits)
        }
        guard !key.isRevoked else { return .failure(Self.locked(path)) }
        switch vaultPages.read(path, identity: identity, entry: entry, stored: stored, limits: limits, key: { key.current }) {
        case .read(let result): return result
        case .toWorker: return nil
        case .locked: return .failure(Self.locked(path))
        }
    }

    /// Lists a comic in a worker.
    public func list(_ source: ComicSource, limits: ComicLimits) throws(ComicError) -> (ComicListing, FileIdentity) {
        let path = source.path
        var result: Result<(ComicListing, FileIdentity), ComicError>?
        try exchange(source, request: .list(path: path, limits: limits)) { reply, _ throws(ComicError) in
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
    public func comicInfo(_ source: ComicSource, identity: FileIdentity, limits: ComicLimits) throws(ComicError) -> [UInt8]? {
        let path = source.path
        var collector = PageCollector(path: path, entries: [EntryRequest(source: .comicInfo, size: limits.maxPageBytes, name: "ComicInfo.xml")])
        var bytes: [UInt8]?
        try exchange(source, request: .comicInfo(path: path, identity: identity, limits: limits)) { reply, data throws(ComicError) in
            try collector.accept(reply: reply, data: data) { _, result in bytes = try? result.get() }
        }
        if let failure = collector.requestFailure { throw failure }
        return bytes
    }
}
