import Foundation
import InkyCore
import InkyVault

/// Stored ZIP pages of vault comics, read in the daemon: such a page is one range of the
/// object's plaintext (the worker that listed it located it, `StoredData`), so the daemon
/// decrypts that range straight into the page's buffer instead of asking a worker to decode it
/// and stream it over its socket (decode, frame, copy: most of the vault's CPU per GB).
///
/// Nothing is parsed here, a byte range is read: every chunk it touches is authenticated as
/// always, the range is only trusted to lie inside the object, and the object must still be
/// the file that was listed. Anything that does not fit, fails or mismatches goes to a worker,
/// which reads the page its own way and gives its own answer.
///
/// Readers are kept between pages (a reader is not thread-safe: one per concurrent fetch), the
/// most recently used few only, since each holds a descriptor and an mlocked key page. All are
/// dropped at lock (and unlock), which wipes their keys and chunk buffers; a page whose read
/// began before a lock is wiped, not served, and its reader is not taken back.
// @unchecked: hands non-Sendable VaultObjectReaders from thread to thread, one owner at a time.
final class VaultStoredPageReader: @unchecked Sendable {
    enum Outcome {
        /// Neither a reader nor a key for this object: the vault was locked.
        case locked
        case read(Result<[UInt8], ComicError>)
        /// Left to a worker.
        case toWorker
    }

    static let keptReaders = 8
    private let lock = NSLock()
    /// Most recently used last.
    private var idle: [(path: String, reader: VaultObjectReader)] = []
    /// Readers checked out before the last `dropAll()` are not taken back.
    private var epoch = 0
    private var served = 0

    /// Pages served this way since the mount (the daemon's debug report shows it).
    var pagesServed: Int { lock.withLock { served } }

    /// Reads a stored page of the vault object at `path`; `key` gives the object's key when no
    /// reader of it is idle (nil once lock revoked it).
    func read(_ path: String, identity: FileIdentity, entry: EntryRequest, stored: StoredData, limits: ComicLimits,
              key: () -> SecureBytes?) -> Outcome {
        let (kept, started) = lock.withLock {
            (idle.lastIndex { $0.path == path }.map { idle.remove(at: $0).reader }, epoch)
        }
        let reader: VaultObjectReader
        if let kept {
            reader = kept
        } else {
            guard let key = key() else { return .locked }
            // Direct reads: the ciphertext is not cached beside the pages this reader's caller keeps.
            guard let opened = try? VaultObjectReader(path: path, key: key, directReads: true) else { return .toWorker }
            reader = opened
        }
        // The object must still be the file that was listed (objects are write-once, so this
        // fails only if someone swapped it), and the range is the worker's word: trusted only
        // to stay inside this object's plaintext.
        guard case .success(identity) = FileIdentity.of(path) else { return .toWorker }   // the reader goes too
        guard entry.size >= 0, entry.size <= limits.maxPageBytes,
              stored.fits(size: entry.size, inFileOf: Int64(clamping: reader.size)) else {
            giveBack(reader, path, started)
            return .toWorker
        }
        let count = Int(entry.size)
        var complete = false
        var crc: UInt32 = 0
        var bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            // A failed read wipes what it wrote, so nothing of it is left in the buffer.
            let got = count == 0 ? 0 : try? reader.read(at: UInt64(stored.offset), into: UnsafeMutableRawBufferPointer(buffer)) {
                crc = ZipCRC32.checksum($0, continuing: crc)   // each chunk's bytes while they are in the CPU's cache
            }
            complete = got == count
            initialized = complete ? count : 0
        }
        // Every chunk was authenticated, so these are the object's bytes; the CRC-32 (as for a
        // library file, at memory speed) also catches a range that is not this page's.
        let checked = complete && StoredPageReader.mismatch(crc: crc, stored: stored, entry: entry, path: path) == nil
        guard giveBack(reader, path, started) else {
            // Locked while this page was read: its bytes were never handed out, so they are
            // wiped in place here and nothing is served.
            bytes.withUnsafeMutableBytes { Wipe.memory($0) }
            return .read(.failure(.io(path: path, errno: EIO, detail: "the vault was locked while the page was read")))
        }
        guard checked else { return .toWorker }
        lock.withLock { served += 1 }
        return .read(.success(bytes))
    }

    /// Drops every reader (lock, unlock, shutdown): their keys and decrypted chunks go with them.
    func dropAll() {
        let dropped = lock.withLock {
            epoch += 1
            defer { idle.removeAll() }
            return idle
        }
        _ = dropped  // released here, outside the lock
    }

    /// Keeps `reader` for the next page; false (and the reader not kept) when a lock came since
    /// it was checked out at `started`.
    @discardableResult
    private func giveBack(_ reader: VaultObjectReader, _ path: String, _ started: Int) -> Bool {
        var oldest: VaultObjectReader?
        let kept = lock.withLock {
            guard started == epoch else { return false }
            idle.append((path, reader))
            if idle.count > Self.keptReaders { oldest = idle.removeFirst().reader }
            return true
        }
        _ = oldest  // a reader pushed out is released here, outside the lock
        return kept
    }
}
