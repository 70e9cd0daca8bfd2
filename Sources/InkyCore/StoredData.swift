/// Where a page's bytes lie, unchanged, in the archive's bytes: a ZIP member stored (method 0)
/// without encryption. The worker that listed the archive found it; the daemon then reads such
/// a page itself instead of asking a worker (one `pread` of a library file; for a vault object,
/// whose archive bytes are its plaintext, that range decrypted), checks it against `crc32`, and
/// never parses a header to do so (it only checks the range against the archive's size).
public struct StoredData: Sendable, Equatable, Hashable, Codable {
    /// Absolute offset of the member's first data byte in the archive's bytes: the file's, or a
    /// vault object's plaintext.
    public var offset: Int64
    /// The CRC-32 (ZIP's, as zlib computes it) the central directory declares for the member.
    public var crc32: UInt32

    public init(offset: Int64, crc32: UInt32) {
        self.offset = offset
        self.crc32 = crc32
    }

    /// True when `size` bytes from `offset` lie inside an archive of `fileSize` bytes.
    public func fits(size: Int64, inFileOf fileSize: Int64) -> Bool {
        guard offset >= 0, size >= 0, fileSize >= 0 else { return false }
        let (end, overflow) = offset.addingReportingOverflow(size)
        return !overflow && end <= fileSize
    }
}
