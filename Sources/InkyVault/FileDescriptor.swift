#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import InkyCore

/// Sole owner of one open file descriptor: closed in deinit on every path, retried on
/// EINTR, and every failure becomes `VaultError.io` naming the path and the call.
final class FileDescriptor {
    let raw: Int32
    let path: String

    init(path: String, flags: Int32, mode: mode_t = 0o600) throws(VaultError) {
        var descriptor: Int32
        repeat { descriptor = open(path, flags | O_CLOEXEC, mode) } while descriptor < 0 && errno == EINTR
        guard descriptor >= 0 else { throw .io(path: path, operation: "open", errno: .current) }
        raw = descriptor
        self.path = path
    }

    deinit { close(raw) }

    func status() throws(VaultError) -> stat {
        var info = stat()
        guard fstat(raw, &info) == 0 else { throw .io(path: path, operation: "fstat", errno: .current) }
        return info
    }

    /// Reads until `buffer` is full or the file ends; returns how many bytes were read.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(VaultError) -> Int {
        var done = 0
        while done < buffer.count {
            let result = pread(raw, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            if result < 0 {
                if errno == EINTR { continue }
                throw .io(path: path, operation: "pread", errno: .current)
            }
            if result == 0 { break }
            done += result
        }
        return done
    }

    /// Sequential read from the current position (for sources that may be pipes one day).
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(VaultError) -> Int {
        var done = 0
        while done < buffer.count {
            let result = systemRead(raw, buffer.baseAddress! + done, buffer.count - done)
            if result < 0 {
                if errno == EINTR { continue }
                throw .io(path: path, operation: "read", errno: .current)
            }
            if result == 0 { break }
            done += result
        }
        return done
    }

    func writeAll(_ bytes: UnsafeRawBufferPointer) throws(VaultError) {
        var done = 0
        while done < bytes.count {
            let result = write(raw, bytes.baseAddress! + done, bytes.count - done)
            if result < 0 {
                if errno == EINTR { continue }
                throw .io(path: path, operation: "write", errno: .current)
            }
            done += result
        }
    }

    func writeAll(_ bytes: [UInt8]) throws(VaultError) {
        try bytes.withBytes { (bytes) throws(VaultError) in try writeAll(bytes) }
    }

    /// Data and metadata to stable storage: the step that makes a following rename safe.
    func sync() throws(VaultError) {
        var result: Int32
        repeat { result = fsync(raw) } while result != 0 && errno == EINTR
        guard result == 0 else { throw .io(path: path, operation: "fsync", errno: .current) }
    }
}

/// `read(2)`, reachable by this name inside a type that has its own `read` methods.
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}
