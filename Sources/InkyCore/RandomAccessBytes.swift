/// Bytes that can be read at any offset: an archive file, or a vault object decrypted chunk by
/// chunk on demand. Archive readers take this instead of a path, so encrypted comics stream
/// through the same parsers without a plaintext copy anywhere.
public protocol RandomAccessBytes: AnyObject {
    var size: Int64 { get }
    /// Reads up to `count` bytes at `offset` into `buffer`; returns 0 at the end.
    func read(at offset: Int64, into buffer: UnsafeMutableRawPointer, count: Int) throws(ComicError) -> Int
}
