import Foundation

/// The one place system calls are made safe against signals: a call interrupted by a signal
/// (EINTR, the daemon has SIGTERM and SIGHUP handlers and the workers a heartbeat timer) is
/// made again, and a short read or write goes on where it stopped. Callers keep their own
/// error types; these return the errno.
public enum Syscall {
    /// `call` again while it returns -1 with errno EINTR; its last result otherwise, with errno
    /// as it left it.
    @inlinable
    public static func retrying<Result: BinaryInteger>(_ call: () -> Result) -> Result {
        while true {
            let result = call()
            if result == -1 && errno == EINTR { continue }
            return result
        }
    }

    /// Writes all of `bytes` with `write` (short writes continued); nil, or the errno of a
    /// failed write.
    public static func writeFully(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Errno? {
        var done = 0
        while done < bytes.count {
            let wrote = retrying { write(descriptor, bytes.baseAddress! + done, bytes.count - done) }
            if wrote < 0 { return .current }
            done += wrote
        }
        return nil
    }

    /// Reads with `read` until `count` bytes arrived or the input ends; the number read, or the
    /// errno of a failed read.
    public static func readFully(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, count: Int) -> Swift.Result<Int, Errno> {
        var done = 0
        while done < count {
            let got = retrying { read(descriptor, buffer + done, count - done) }
            if got < 0 { return .failure(.current) }
            if got == 0 { break }
            done += got
        }
        return .success(done)
    }

    /// Reads up to `count` bytes at `offset` until that many arrived or the file ends; the
    /// number read, or the errno of a failed read.
    public static func preadFully(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, count: Int,
                                  at offset: Int64) -> Swift.Result<Int, Errno> {
        var done = 0
        while done < count {
            let got = retrying { pread(descriptor, buffer + done, count - done, off_t(offset) + off_t(done)) }
            if got < 0 { return .failure(.current) }
            if got == 0 { break }
            done += got
        }
        return .success(done)
    }
}
