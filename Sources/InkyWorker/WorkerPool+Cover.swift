import InkyCore

extension WorkerPool {
    /// The cover of a comic made from `entry` in a worker: a JPEG at most `height` pixels high.
    public func cover(_ source: ComicSource, identity: FileIdentity, entry: EntryRequest, height: Int, limits: ComicLimits) throws(ComicError) -> [UInt8] {
        let path = source.path
        var collector = PageCollector(path: path, entries: [EntryRequest(source: entry.source, size: limits.maxPageBytes, name: entry.name)])
        var result: Result<[UInt8], ComicError>?
        try exchange(source, request: .cover(path: path, identity: identity, entry: entry, height: height, limits: limits)) { reply, data throws(ComicError) in
            try collector.accept(reply: reply, data: data) { _, delivered in result = delivered }
        }
        if let failure = collector.requestFailure { throw failure }
        guard let result else { throw .parserFailed(path: path, detail: "the worker made no cover") }
        return try result.get()
    }
}
