/// Where everything is in an object file, as pure arithmetic (no I/O, no keys), so it can
/// be tested on its own the way gocryptfs tests its contentenc offsets.
///
///     | header (56) | chunk 0 | chunk 1 | ... | chunk n-1 |
///     chunk i = | nonce (12) | ciphertext (chunkSize, or less for the last) | tag (16) |
///
/// n = ceil(plaintextSize / chunkSize), except that an empty object still has ONE chunk
/// (empty ciphertext, but a nonce and a tag). Without it an empty object would be just a
/// header, and an object truncated to its header would be indistinguishable from one.
public struct VaultChunkLayout: Sendable, Equatable {
    public static let headerLength = VaultObjectHeader.length
    public static let nonceLength = AESGCM.nonceLength
    public static let tagLength = AESGCM.tagLength
    public static let overheadPerChunk = nonceLength + tagLength

    public let chunkSize: Int
    public let plaintextSize: UInt64
    public let chunkCount: UInt64
    /// The exact size the object file must have; anything else is truncation or extension.
    public let fileSize: UInt64

    /// Nil if `chunkSize` is not positive or the file would exceed `Int64.max` bytes
    /// (a size read from a hostile header must not overflow the arithmetic).
    public init?(plaintextSize: UInt64, chunkSize: Int) {
        guard chunkSize > 0 else { return nil }
        let size = UInt64(chunkSize)
        let fullChunks = plaintextSize / size
        let chunkCount = plaintextSize == 0 ? 1 : fullChunks + (plaintextSize % size == 0 ? 0 : 1)
        let (overhead, overflow1) = chunkCount.multipliedReportingOverflow(by: UInt64(Self.overheadPerChunk))
        let (withHeader, overflow2) = overhead.addingReportingOverflow(UInt64(Self.headerLength))
        let (fileSize, overflow3) = withHeader.addingReportingOverflow(plaintextSize)
        guard !overflow1, !overflow2, !overflow3, fileSize <= UInt64(Int64.max) else { return nil }
        self.chunkSize = chunkSize
        self.plaintextSize = plaintextSize
        self.chunkCount = chunkCount
        self.fileSize = fileSize
    }

    public func isLastChunk(_ index: UInt64) -> Bool { index == chunkCount - 1 }

    /// The plaintext bytes chunk `index` holds. `index` must be < `chunkCount`.
    public func plaintextRange(ofChunk index: UInt64) -> Range<UInt64> {
        precondition(index < chunkCount, "chunk \(index) of \(chunkCount)")
        let start = index * UInt64(chunkSize)
        return start..<min(start + UInt64(chunkSize), plaintextSize)
    }

    public func plaintextLength(ofChunk index: UInt64) -> Int { plaintextRange(ofChunk: index).count }

    /// File offset of chunk `index`'s nonce. Every chunk before it is full-sized.
    public func storedOffset(ofChunk index: UInt64) -> UInt64 {
        precondition(index < chunkCount, "chunk \(index) of \(chunkCount)")
        return UInt64(Self.headerLength) + index * UInt64(chunkSize + Self.overheadPerChunk)
    }

    /// Nonce + ciphertext + tag of chunk `index`.
    public func storedLength(ofChunk index: UInt64) -> Int { plaintextLength(ofChunk: index) + Self.overheadPerChunk }

    /// The chunk holding plaintext byte `offset` (which must be < `plaintextSize`).
    public func chunkIndex(containing offset: UInt64) -> UInt64 {
        precondition(offset < plaintextSize, "offset \(offset) beyond size \(plaintextSize)")
        return offset / UInt64(chunkSize)
    }

    /// The chunks a read of `count` bytes at `offset` touches, after clamping the read to
    /// the end of the plaintext. Empty when nothing would be read.
    public func chunks(coveringOffset offset: UInt64, count: Int) -> Range<UInt64> {
        guard count > 0, offset < plaintextSize else { return 0..<0 }
        let end = offset + min(UInt64(count), plaintextSize - offset)
        return chunkIndex(containing: offset)..<(chunkIndex(containing: end - 1) + 1)
    }

    /// The inverse of `fileSize`: the plaintext size an object file of `fileSize` bytes
    /// must hold, or nil if no plaintext size gives that file size (so the file is damaged).
    public static func plaintextSize(forFileSize fileSize: UInt64, chunkSize: Int) -> UInt64? {
        guard chunkSize > 0 else { return nil }
        let minimum = UInt64(headerLength + overheadPerChunk)
        guard fileSize >= minimum else { return nil }
        // The empty object: a header and one empty chunk.
        if fileSize == minimum { return 0 }
        let body = fileSize - UInt64(headerLength)
        let storedChunk = UInt64(chunkSize + overheadPerChunk)
        let fullChunks = body / storedChunk
        let rest = body % storedChunk
        let plaintext: UInt64
        if rest == 0 {
            plaintext = fullChunks * UInt64(chunkSize)
        } else {
            // A partial last chunk needs at least one byte beyond its 28 bytes of overhead;
            // exactly 28 would be an empty chunk, which only an empty object may have.
            guard rest > UInt64(overheadPerChunk) else { return nil }
            plaintext = fullChunks * UInt64(chunkSize) + (rest - UInt64(overheadPerChunk))
        }
        guard let layout = VaultChunkLayout(plaintextSize: plaintext, chunkSize: chunkSize),
              layout.fileSize == fileSize else { return nil }
        return plaintext
    }
}
