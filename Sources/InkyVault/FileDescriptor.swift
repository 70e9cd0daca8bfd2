#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import InkyCore

/// Sole owner of one open file descriptor: closed in deinit on every path, its calls made
/// through `Syscall` (retried on EINTR, short reads and writes continued), and every failure
/// becomes `VaultError.io` naming the path and the call.
final class FileDescriptor {
    let raw: Int32
    let path: String

    init(path: String, flags: Int32, mode: mode_t = 0o600) throws(VaultError) {
        let descriptor = Syscall.retrying { open(path, flags | O_CLOEXEC, mode) }
        guard descriptor >= 0 else { throw .io(path: path, operation: "open", errno: .current) }
        raw = descriptor
        self.path = path
    }

    /// A descriptor opened elsewhere, now owned here.
    init(adopting descriptor: Int32, path: String) {
        raw = descriptor
        self.path = path
    }

    /// `name` in the folder `parent`, opened relative to that descriptor (`path` is for messages).
    init(at parent: FileDescriptor, name: String, path: String, flags: Int32, mode: mode_t = 0o600) throws(VaultError) {
        let descriptor = Syscall.retrying { openat(parent.raw, name, flags | O_CLOEXEC, mode) }
        guard descriptor >= 0 else { throw .io(path: path, operation: "open", errno: .current) }
        raw = descriptor
        self.path = path
    }

    /// A regular file opened for reading without following a symlink and without blocking on a
    /// FIFO or device planted in its place (both refused as "not a regular file").
    static func regularFile(_ path: String, at parent: FileDescriptor? = nil) throws(VaultError) -> FileDescriptor {
        let flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY
        let file = if let parent {
            try FileDescriptor(at: parent, name: DurableFiles.split(path).name, path: path, flags: flags)
        } else {
            try FileDescriptor(path: path, flags: flags)
        }
        guard (try file.status().st_mode & S_IFMT) == S_IFREG else {
            throw .io(path: path, operation: "open (not a regular file)", errno: Errno(EINVAL))
        }
        return file
    }

    deinit { close(raw) }

    func status() throws(VaultError) -> stat {
        var info = stat()
        guard fstat(raw, &info) == 0 else { throw .io(path: path, operation: "fstat", errno: .current) }
        return info
    }

    /// Reads until `buffer` is full or the file ends; returns how many bytes were read.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(VaultError) -> Int {
        guard buffer.count > 0 else { return 0 }
        switch Syscall.preadFully(raw, buffer.baseAddress!, count: buffer.count, at: Int64(offset)) {
        case .success(let done): return done
        case .failure(let code): throw .io(path: path, operation: "pread", errno: code)
        }
    }

    /// Sequential read from the current position (for sources that may be pipes one day).
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(VaultError) -> Int {
        guard buffer.count > 0 else { return 0 }
        switch Syscall.readFully(raw, buffer.baseAddress!, count: buffer.count) {
        case .success(let done): return done
        case .failure(let code): throw .io(path: path, operation: "read", errno: code)
        }
    }

    func writeAll(_ bytes: UnsafeRawBufferPointer) throws(VaultError) {
        guard bytes.count > 0 else { return }
        if let code = Syscall.writeFully(raw, bytes) { throw .io(path: path, operation: "write", errno: code) }
    }

    func writeAll(_ bytes: [UInt8]) throws(VaultError) {
        try bytes.withBytes { (bytes) throws(VaultError) in try writeAll(bytes) }
    }

    /// Data and metadata to stable storage: the step that makes a following rename safe.
    func sync() throws(VaultError) {
        let result = Syscall.retrying { fsync(raw) }
        guard result == 0 else { throw .io(path: path, operation: "fsync", errno: .current) }
    }
}
