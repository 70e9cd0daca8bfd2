import Foundation
#if canImport(Glibc)
import Glibc
#endif
import InkyCore

/// A read-only archive file read with `pread`, counting every byte it hands out, so tests and
/// benchmarks can prove what a read really touched. Owns its descriptor; closes it in deinit.
final class FileSource {
    let path: String
    let size: Int64
    private let fd: Int32
    private(set) var position: Int64 = 0
    private(set) var bytesRead: Int64 = 0

    init(path: String) throws(ComicError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Self.ioError(path: path, errno: errno, action: "cannot open") }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            throw Self.ioError(path: path, errno: code, action: "cannot stat")
        }
        self.fd = fd
        self.path = path
        self.size = Int64(info.st_size)
    }

    deinit { close(fd) }

    /// Reads up to `count` bytes at the current position; 0 at end of file.
    func read(into buffer: UnsafeMutableRawPointer, count: Int) throws(ComicError) -> Int {
        while true {
            let got = pread(fd, buffer, count, off_t(position))
            if got >= 0 {
                position += Int64(got)
                bytesRead += Int64(got)
                return got
            }
            if errno == EINTR { continue }
            throw Self.ioError(path: path, errno: errno, action: "read failed")
        }
    }

    /// Reads exactly the bytes at `offset` (fewer only at end of file), leaving `position` alone.
    func bytes(at offset: Int64, count: Int) throws(ComicError) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let got = result.withUnsafeMutableBytes { raw in
                pread(fd, raw.baseAddress! + filled, count - filled, off_t(offset) + off_t(filled))
            }
            if got < 0 {
                if errno == EINTR { continue }
                throw Self.ioError(path: path, errno: errno, action: "read failed")
            }
            if got == 0 { break }
            filled += got
            bytesRead += Int64(got)
        }
        result.removeLast(count - filled)
        return result
    }

    /// Moves the position like lseek; returns the new position or nil when it would leave the file's range.
    func seek(to offset: Int64) -> Int64? {
        guard offset >= 0 else { return nil }
        position = offset
        return offset
    }

    static func ioError(path: String, errno code: Int32, action: String) -> ComicError {
        .io(path: path, errno: code, detail: "\(action): \(String(cString: strerror(code)))")
    }
}
