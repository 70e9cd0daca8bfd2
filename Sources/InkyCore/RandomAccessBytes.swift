/// Bytes that can be read at any offset: an archive file, or a vault object decrypted chunk by
/// chunk on demand. Archive readers take this instead of a path, so encrypted comics stream
/// through the same parsers without a plaintext copy anywhere.
public protocol RandomAccessBytes: AnyObject {
    var size: Int64 { get }
    /// Reads up to `count` bytes at `offset` into `buffer`; returns 0 at the end.
    func read(at offset: Int64, into buffer: UnsafeMutableRawPointer, count: Int) throws(ComicError) -> Int
    /// Announces ranges about to be read, so scattered small reads find them in memory instead
    /// of each waiting on the disk in turn: a hint only (posix_fadvise WILLNEED for a file, for
    /// a vault object the sealed chunks that hold them).
    func willNeed(_ ranges: [(offset: Int64, length: Int)])
}

extension RandomAccessBytes {
    /// Bytes already in memory need no hint.
    public func willNeed(_ ranges: [(offset: Int64, length: Int)]) {}
}
