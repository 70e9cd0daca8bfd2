import Foundation
#if canImport(Glibc)
import Glibc
#endif
import InkyCore

/// A read-only archive file, read with `pread`. Owns its descriptor; closes it in deinit.
final class ArchiveFile: RandomAccessBytes {
    let path: String
    let size: Int64
    private let fd: Int32

    init(path: String) throws(ComicError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw FileSource.ioError(path: path, errno: errno, action: "cannot open") }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            throw FileSource.ioError(path: path, errno: code, action: "cannot stat")
        }
        self.fd = fd
        self.path = path
        self.size = Int64(info.st_size)
        whole = Self.readWhole(fd, size: size)
    }

    /// Takes ownership of `descriptor`, a file the caller opened (`label` names it in messages).
    init(descriptor: Int32, label: String) throws(ComicError) {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let code = errno
            close(descriptor)
            throw FileSource.ioError(path: label, errno: code, action: "cannot stat")
        }
        fd = descriptor
        path = label
        size = Int64(info.st_size)
        whole = Self.readWhole(fd, size: size)
    }

    deinit {
        close(fd)
        whole?.deallocate()
    }

    /// Files up to this size are read whole, once, when opened. Listing a 45 KB comic otherwise
    /// made ~33 preads (the format sniff, the ZIP end record and directory, libarchive's blocks,
    /// every local header again for `ZipStoredEntries`), each a system call, a seccomp check and
    /// a page-cache walk; the kernel's first readahead (128 KiB) fetches such a file whole anyway.
    static let readWholeLimit: Int64 = 256 << 10

    /// The whole file, read when it was opened; nil for a larger file, or when that read came
    /// short or failed (then every read goes to the file as it comes, and fails where it fails:
    /// an unreadable sector costs only the pages behind it).
    private var whole: UnsafeMutableRawBufferPointer?

    private static func readWhole(_ fd: Int32, size: Int64) -> UnsafeMutableRawBufferPointer? {
        guard size > 0, size <= readWholeLimit else { return nil }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Int(size), alignment: 16)
        var filled = 0
        while filled < buffer.count {
            let got = Syscall.retrying { pread(fd, buffer.baseAddress! + filled, buffer.count - filled, off_t(filled)) }
            if got <= 0 { break }
            filled += got
        }
        if filled == buffer.count { return buffer }
        buffer.deallocate()
        return nil
    }

    /// Asks the kernel to start reading these ranges now (posix_fadvise WILLNEED); a hint only,
    /// and none needed for a file already read whole.
    func willNeed(_ ranges: [(offset: Int64, length: Int)]) {
        guard whole == nil else { return }
        for range in ranges { _ = posix_fadvise(fd, off_t(range.offset), off_t(range.length), 3 /* POSIX_FADV_WILLNEED */) }
    }

    func read(at offset: Int64, into buffer: UnsafeMutableRawPointer, count: Int) throws(ComicError) -> Int {
        if let whole, offset >= 0, count >= 0 {
            let start = Int(min(offset, Int64(whole.count)))
            let got = min(count, whole.count - start)
            if got > 0 { buffer.copyMemory(from: whole.baseAddress! + start, byteCount: got) }
            return got
        }
        let got = Syscall.retrying { pread(fd, buffer, count, off_t(offset)) }
        if got >= 0 { return got }
        throw FileSource.ioError(path: path, errno: errno, action: "read failed")
    }
}

/// A cursor over an archive's bytes (a file, or a vault object decrypted on demand), counting
/// every byte it hands out, so tests and benchmarks can prove what a read really touched.
final class FileSource {
    /// What messages call the archive: its path, or a vault comic's display name.
    let path: String
    let size: Int64
    private let bytes: any RandomAccessBytes
    private(set) var position: Int64 = 0
    private(set) var bytesRead: Int64 = 0

    convenience init(path: String) throws(ComicError) {
        self.init(bytes: try ArchiveFile(path: path), label: path)
    }

    /// Announces ranges about to be read (`RandomAccessBytes.willNeed`).
    func willNeed(_ ranges: [(offset: Int64, length: Int)]) {
        bytes.willNeed(ranges)
    }

    init(bytes: any RandomAccessBytes, label: String) {
        self.bytes = bytes
        path = label
        size = bytes.size
    }

    /// The same bytes from `offset` on, as a new source at position 0.
    func shifted(by offset: Int64) -> FileSource { FileSource(bytes: ShiftedBytes(bytes, from: offset), label: path) }

    /// Reads up to `count` bytes at the current position; 0 at end of file.
    func read(into buffer: UnsafeMutableRawPointer, count: Int) throws(ComicError) -> Int {
        let got = try bytes.read(at: position, into: buffer, count: count)
        position += Int64(got)
        bytesRead += Int64(got)
        return got
    }

    /// Reads exactly the bytes at `offset` (fewer only at the end), leaving `position` alone.
    func bytes(at offset: Int64, count: Int) throws(ComicError) -> [UInt8] {
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: max(1, count), alignment: 16)
        defer { buffer.deallocate() }
        var filled = 0
        while filled < count {
            let got = try bytes.read(at: offset + Int64(filled), into: buffer + filled, count: count - filled)
            if got == 0 { break }
            filled += got
            bytesRead += Int64(got)
        }
        return Array(UnsafeRawBufferPointer(start: buffer, count: filled))
    }

    /// Moves the position like lseek; returns the new position or nil for a negative offset.
    func seek(to offset: Int64) -> Int64? {
        guard offset >= 0 else { return nil }
        position = offset
        return offset
    }

    static func ioError(path: String, errno code: Int32, action: String) -> ComicError {
        .io(path: path, errno: code, detail: "\(action): \(String(cString: strerror(code)))")
    }
}
