import Foundation
#if canImport(Glibc)
import Glibc
#endif
import InkyCore
import Synchronization

/// Reads stored ZIP members straight from the archive file, in the daemon: one `pread` of the
/// range the worker's listing named, then the CRC-32 the central directory declared, instead of
/// a round trip through a worker (and a copy through its socket).
///
/// It parses nothing: the range is only checked against the file's size, and the file against
/// the identity it was listed with. A lying listing can at worst point at other bytes of the
/// same archive, and those fail the CRC unless they are what was promised. Thread-safe: reads
/// of one comic run concurrently on one descriptor.
final class StoredPageReader: Sendable {
    /// One archive file opened for reading, kept while it still is the file that was listed.
    private final class OpenArchive: Sendable {
        let fd: Int32
        let identity: FileIdentity

        init(fd: Int32, identity: FileIdentity) {
            self.fd = fd
            self.identity = identity
        }

        deinit { close(fd) }
    }

    /// The mounted library: files are opened beneath it, never through a link (`ConfinedFile`).
    /// The library, also where the pool opens the comics it sends workers (`RequestFiles`); the
    /// pool keeps its folders open a second: a folder's comics are opened one after another.
    let root: LibraryRoot?

    init(root: LibraryRoot? = nil) { self.root = root }

    /// Most recently used last; a reader going through a library keeps a few comics open.
    private let archives = Mutex<[(path: String, archive: OpenArchive)]>([])
    static let keptArchives = 16

    func read(_ path: String, identity: FileIdentity, entry: EntryRequest, stored: StoredData,
              limits: ComicLimits) -> Result<[UInt8], ComicError> {
        guard entry.size >= 0, entry.size <= limits.maxPageBytes, stored.fits(size: entry.size, inFileOf: identity.size) else {
            return .failure(.corrupted(path: path, detail: "\(entry.name): its listed place (\(entry.size) bytes at \(stored.offset)) is not inside the archive"))
        }
        let archive: OpenArchive
        switch self.archive(path, identity: identity) {
        case .success(let value): archive = value
        case .failure(let error): return .failure(error)
        }
        let size = Int(entry.size)
        // The whole range in large requests now: prefetched pages are read concurrently through
        // one descriptor, whose readahead state their interleaved offsets would otherwise reset
        // to small random reads (a cold sequential read ran at half the speed of a worker's).
        _ = posix_fadvise(archive.fd, off_t(stored.offset), off_t(size), 3 /* POSIX_FADV_WILLNEED */)
        var failure: ComicError?
        let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            switch Syscall.preadFully(archive.fd, buffer.baseAddress!, count: size, at: stored.offset) {
            case .failure(let code):
                failure = .io(path: path, errno: code.code, detail: "read failed: \(code)")
            case .success(let filled) where filled < size:
                failure = .io(path: path, errno: ESTALE, detail: "the file ends before \(entry.name) does: it changed on disk since it was listed")
            case .success:
                break
            }
            count = failure == nil ? size : 0
        }
        if let failure { return .failure(failure) }
        if let mismatch = Self.mismatch(bytes, stored: stored, entry: entry, path: path) { return .failure(mismatch) }
        return .success(bytes)
    }

    /// The error when `bytes` do not have the CRC-32 the archive declares for the page.
    static func mismatch(_ bytes: [UInt8], stored: StoredData, entry: EntryRequest, path: String) -> ComicError? {
        mismatch(crc: bytes.withUnsafeBytes { ZipCRC32.checksum($0) }, stored: stored, entry: entry, path: path)
    }

    /// The error when `crc`, a page's CRC-32, is not the one the archive declares for it.
    static func mismatch(crc: UInt32, stored: StoredData, entry: EntryRequest, path: String) -> ComicError? {
        guard crc != stored.crc32 else { return nil }
        return .corrupted(path: path, detail: "\(entry.name): CRC-32 is \(hex(crc)), the archive says \(hex(stored.crc32))")
    }

    /// Forgets every open file (the pool's shutdown).
    func closeAll() {
        archives.withLock { $0.removeAll() }
    }

    /// The open file for `path` if it still is the one listed with `identity`, else opened anew.
    /// The path is checked on every call, as a worker does: a replaced archive answers ESTALE
    /// even while the old file is still open here.
    private func archive(_ path: String, identity: FileIdentity) -> Result<OpenArchive, ComicError> {
        let now = root.flatMap { $0.relative(of: path) }.map { root!.identity($0) } ?? FileIdentity.of(path)
        switch now {
        case .success(let current) where current == identity: break
        case .success: return .failure(Self.changed(path))
        case .failure(let code): return .failure(.io(path: path, errno: code.code, detail: code.description))
        }
        let kept: OpenArchive? = archives.withLock { archives in
            guard let index = archives.firstIndex(where: { $0.path == path }) else { return nil }
            let found = archives.remove(at: index)
            guard found.archive.identity == identity else { return nil }
            archives.append(found)
            return found.archive
        }
        if let kept { return .success(kept) }
        let fd: Int32
        do throws(ComicError) {
            if let opened = try ConfinedFile.open(path, beneath: root) {
                fd = opened.descriptor
            } else {
                fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)  // a FIFO must not hang the worker
                guard fd >= 0 else {
                    let code = errno
                    return .failure(.io(path: path, errno: code, detail: "cannot open: \(String(cString: strerror(code)))"))
                }
            }
        } catch {
            return .failure(error)
        }
        var info = stat()
        guard fstat(fd, &info) == 0, FileIdentity(info) == identity else {
            close(fd)
            return .failure(Self.changed(path))
        }
        let opened = OpenArchive(fd: fd, identity: identity)
        archives.withLock { archives in
            archives.removeAll { $0.path == path }
            archives.append((path, opened))
            if archives.count > Self.keptArchives { archives.removeFirst() }
        }
        return .success(opened)
    }

    private static func changed(_ path: String) -> ComicError {
        .io(path: path, errno: ESTALE, detail: "the file changed on disk since it was listed")
    }

    private static func hex(_ value: UInt32) -> String { String(format: "%08x", value) }
}
