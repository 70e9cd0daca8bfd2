import InkyCore

/// Where a forward-only decoder stands, and what reaching another entry costs from there.
/// Shared by every stream backend so "cheap" and "restart" mean the same everywhere.
struct StreamPosition {
    /// Entry whose header was read and whose data has not been touched yet, if any.
    var pendingEntry: Int?
    /// Index of the next header the decoder will return.
    var nextEntry = 0

    func cost(of entryIndex: Int, isSolid: Bool) -> ReadCost {
        if entryIndex == pendingEntry || entryIndex == nextEntry { return .direct }
        if !isSolid { return .direct }
        if entryIndex > nextEntry { return .forward(skippedEntries: entryIndex - nextEntry) }
        return .restart(skippedEntries: entryIndex)
    }

    /// True when the decoder must be reopened to reach `entryIndex`.
    func needsRestart(for entryIndex: Int) -> Bool {
        entryIndex != pendingEntry && entryIndex < nextEntry
    }
}

/// Enforces, while bytes stream out of a decoder, the promises a listing made: exactly the
/// declared size (headers lie in both directions), and no bomb-like compression ratio.
struct PageBudget {
    let path: String
    let entryName: String
    let declaredSize: Int64
    let limits: ComicLimits
    private(set) var produced: Int64 = 0

    init(path: String, entryName: String, declaredSize: Int64, limits: ComicLimits) {
        self.path = path
        self.entryName = entryName
        self.declaredSize = declaredSize
        self.limits = limits
    }

    /// Accounts for `count` more bytes; `consumed` is the compressed input read for them so far.
    mutating func accept(_ count: Int, consumed: Int64?) throws(ComicError) {
        produced += Int64(count)
        if produced > limits.maxPageBytes {
            throw .pageTooLarge(path: path, entry: entryName, limit: limits.maxPageBytes)
        }
        if produced > declaredSize {
            throw .corrupted(path: path, detail: "'\(entryName)' yields more data than the \(declaredSize) bytes its header declares")
        }
        if let consumed, produced > limits.ratioCheckAfterBytes,
           produced > max(consumed, 1) * limits.maxCompressionRatio {
            throw .limitExceeded(path: path, detail: "'\(entryName)' expands more than \(limits.maxCompressionRatio):1 (a decompression bomb?)")
        }
    }

    func finish() throws(ComicError) {
        if produced != declaredSize {
            throw .corrupted(path: path, detail: "'\(entryName)' ended after \(produced) of the \(declaredSize) bytes its header declares")
        }
    }
}
