import InkyCore

/// Reassembles streamed entries and checks them against what was asked: a subverted worker
/// cannot make the daemon keep more bytes than the listing promised.
struct PageCollector {
    let path: String
    let sizes: [PageSource: Int64]
    /// The whole request failed (the file changed, the archive would not open); `.done` follows.
    private(set) var requestFailure: ComicError?
    private var current: (source: PageSource, size: Int64, bytes: [UInt8])?

    /// An entry asked for with an unknown size (a page rendered on demand) may be up to
    /// `renderedLimit` bytes; the worker's `pageStart` says how many it has.
    init(path: String, entries: [EntryRequest], renderedLimit: Int64 = 0) {
        self.path = path
        sizes = Dictionary(entries.map { ($0.source, $0.size < 0 ? renderedLimit : $0.size) }, uniquingKeysWith: { first, _ in first })
    }

    /// Returns true when the exchange is finished.
    /// `data` is only borrowed: it is copied into the page being assembled.
    mutating func accept(reply: WorkerReply?, data: UnsafeRawBufferPointer?,
                         deliver: (PageSource, Result<[UInt8], ComicError>) -> Void) throws(ComicError) -> Bool {
        if let data {
            guard current != nil, Int64(current!.bytes.count + data.count) <= current!.size else {
                throw .parserFailed(path: path, detail: "the worker sent data it was not asked for")
            }
            current!.bytes.append(contentsOf: data)   // in place: the reserved page buffer, no copy of it
            return false
        }
        switch reply {
        case .pageStart(let source, let size)?:
            guard let limit = sizes[source], size >= 0, size <= limit else {
                throw .parserFailed(path: path, detail: "the worker started an entry it was not asked for")
            }
            var bytes: [UInt8] = []
            bytes.reserveCapacity(Int(size))
            current = (source, size, bytes)
        case .pageEnd(let source)?:
            guard let page = current, page.source == source, Int64(page.bytes.count) == page.size else {
                throw .parserFailed(path: path, detail: "the worker ended an entry with the wrong size")
            }
            current = nil
            deliver(source, .success(page.bytes))
        case .pageFailed(let source, let error)?:
            current = nil
            deliver(source, .failure(error))
        case .failure(let error)?:
            current = nil
            requestFailure = error
        case .done?:
            return true
        case .progress?:
            return false
        case .listing?, nil:
            throw .parserFailed(path: path, detail: "the worker answered out of turn")
        }
        return false
    }
}
