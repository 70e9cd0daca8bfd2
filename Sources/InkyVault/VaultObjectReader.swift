#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Random-access, authenticated reads of one object's plaintext: what will sit behind
/// libarchive's read and seek callbacks in a worker that holds only this object's key.
///
/// Opening checks the file's real size against the size its header implies (so a
/// truncated or extended object is refused before anything is served) and authenticates
/// chunk 0, whose AAD contains the whole header: from then on `size` and `header` are
/// authentic, and a wrong key fails at open, not at the first read.
///
/// `read` decrypts only the chunks a request touches and verifies each one; a chunk that
/// fails authentication throws `.objectNotAuthentic` and none of its plaintext is ever
/// returned (AES-GCM's open wipes its output on failure, and the cache is invalidated
/// first). The last decrypted chunk is cached, so sequential small reads (libarchive asks
/// for 4–64 KiB at a time) decrypt each chunk once. A read spanning several chunks fetches
/// their sealed bytes with one `pread` (`SealedChunkRun`), each still authenticated on its
/// own before any of its bytes is written out. Buffers are allocated once per reader, not
/// per chunk.
///
/// Not thread-safe (the cache is mutable state): use one reader per thread.
public final class VaultObjectReader {
    public let path: String
    /// Authenticated by the successful open.
    public let header: VaultObjectHeader
    public let layout: VaultChunkLayout
    /// The comic's size in bytes: the stream less its padding and trailer in format version 2
    /// (read from the authenticated trailer at open), the whole stream in version 1.
    public private(set) var size: UInt64

    private let file: FileDescriptor
    private let key: SecureBytes
    /// One GCM context for every chunk: the key is expanded once per reader, not per chunk.
    private let opener: AESGCMOpener
    private var aad: ChunkAAD
    private let sealed: UnsafeMutableRawBufferPointer
    private let cache: UnsafeMutableRawBufferPointer
    private var cachedChunk: UInt64?
    /// Runs of sealed chunks read with one `pread` for reads that span several chunks; made at
    /// the first such read (a worker's small reads never need one).
    private var run: SealedChunkRun?
    /// The second descriptor, for direct reads (`SealedChunkRun`), when asked for and possible.
    private let direct: FileDescriptor?
    /// Chunks authenticated and decrypted so far: lets tests prove reads decrypt each chunk once.
    private(set) var chunksDecrypted = 0
    /// Whether runs of chunks are read with direct I/O (for tests).
    var readsDirectly: Bool { run?.isDirect ?? (direct != nil) }

    /// Opens the object at `path` with its object key (`VaultKeys.objectKey(fileID:)`).
    /// `directReads`: reads spanning several chunks bypass the page cache (`SealedChunkRun`),
    /// for a reader that keeps what it decrypts itself (the daemon's stored pages).
    public convenience init(path: String, key: SecureBytes, directReads: Bool = false) throws(VaultError) {
        // Never through a symlink, never blocking on a FIFO planted as an object.
        let file: FileDescriptor
        do { file = try FileDescriptor.regularFile(path) } catch {
            if case .io(_, _, let code) = error, code.code != EINVAL && code.code != ELOOP { throw error }
            throw .damagedObject(path: path, detail: "not a regular file")
        }
        try self.init(file: file, key: key, direct: directReads ? SealedChunkRun.directDescriptor(path: path, sameAs: file) : nil)
    }

    /// Reads the object through `descriptor`, opened by someone else (the daemon, for a worker
    /// that opens nothing by name), which it takes and closes; `path` names it in messages.
    public convenience init(descriptor: Int32, path: String, key: SecureBytes) throws(VaultError) {
        let file = FileDescriptor(adopting: descriptor, path: path)
        guard (try file.status().st_mode & S_IFMT) == S_IFREG else { throw .damagedObject(path: path, detail: "not a regular file") }
        try self.init(file: file, key: key, direct: nil)
    }

    private init(file: FileDescriptor, key: SecureBytes, direct: FileDescriptor?) throws(VaultError) {
        let path = file.path
        guard key.count == AESGCM.keyLength else { throw .crypto(.invalidKeyLength) }
        self.path = path
        self.key = key
        do throws(CryptoError) {
            opener = try AESGCMOpener(key: key)
        } catch {
            throw .crypto(error)
        }
        self.file = file
        self.direct = direct
        let info = try file.status()
        var headerBytes = [UInt8](repeating: 0, count: VaultObjectHeader.length)
        let headerRead = try headerBytes.withMutableBytes { (buffer) throws(VaultError) in
            try file.read(into: buffer, at: 0)
        }
        header = try VaultObjectHeader.parse(Array(headerBytes.prefix(headerRead)), path: path)
        guard let layout = VaultChunkLayout(plaintextSize: header.plaintextSize, chunkSize: header.chunkSize) else {
            throw .damagedObject(path: path, detail: "header size \(header.plaintextSize) is impossible")
        }
        guard UInt64(info.st_size) == layout.fileSize else {
            throw .damagedObject(path: path, detail:
                "file is \(info.st_size) bytes, its header implies \(layout.fileSize) (truncated or extended)")
        }
        self.layout = layout
        size = layout.plaintextSize
        // The AAD is built from the very bytes just parsed, so what authenticates is what we use.
        aad = ChunkAAD(header: headerBytes)
        sealed = .allocate(byteCount: header.chunkSize + VaultChunkLayout.overheadPerChunk, alignment: 16)
        cache = .allocate(byteCount: header.chunkSize, alignment: 16)
        try loadChunk(0)
        if header.isPadded { size = try paddedContentSize() }
    }

    /// The comic's size from the last 8 bytes of the stream (authenticated like every chunk);
    /// one that leaves no room for itself is damage.
    private func paddedContentSize() throws(VaultError) -> UInt64 {
        let trailer = VaultPadding.objectTrailerLength
        guard layout.plaintextSize >= trailer else {
            throw .damagedObject(path: path, detail: "a padded stream of \(layout.plaintextSize) bytes has no room for its size")
        }
        // Decrypted aside, not through the cache: chunk 0, decrypted at open, stays there for
        // the first read, which is nearly always at the start.
        var content: UInt64 = 0
        var end = layout.plaintextSize
        while end > layout.plaintextSize - trailer {
            let index = layout.chunkIndex(containing: end - 1)
            let range = layout.plaintextRange(ofChunk: index)
            let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, range.count), alignment: 16)
            defer {
                Wipe.memory(chunk)
                chunk.deallocate()
            }
            try decrypt(chunk: index, into: UnsafeMutableRawBufferPointer(rebasing: chunk[0..<range.count]))
            // The trailer's bytes in this chunk, most significant first (it may span two chunks).
            let first = max(range.lowerBound, layout.plaintextSize - trailer)
            var value: UInt64 = 0
            for offset in first..<end { value = value << 8 | UInt64(chunk[Int(offset - range.lowerBound)]) }
            content |= value << (8 * (layout.plaintextSize - end))
            end = first
        }
        guard content <= layout.plaintextSize - trailer else {
            throw .damagedObject(path: path, detail: "its padded stream claims \(content) bytes of comic in \(layout.plaintextSize)")
        }
        return content
    }

    deinit {
        Wipe.memory(cache)
        cache.deallocate()
        sealed.deallocate()
    }

    /// Up to `count` plaintext bytes starting at `offset`; fewer only at the end of the
    /// object, none at or beyond it.
    public func read(at offset: UInt64, count: Int) throws(VaultError) -> [UInt8] {
        precondition(count >= 0, "negative read count")
        guard offset < size else { return [] }
        let length = Int(min(UInt64(count), size - offset))
        var bytes = [UInt8](repeating: 0, count: length)
        _ = try bytes.withMutableBytes { (buffer) throws(VaultError) in try read(at: offset, into: buffer) }
        return bytes
    }

    /// Fills `buffer` from `offset` and returns how many bytes it wrote (less than
    /// `buffer.count` only at the end of the object). On failure the part of `buffer`
    /// written so far is wiped, so the caller never holds a partial answer.
    ///
    /// A chunk the range covers whole is decrypted straight into `buffer` (libarchive's
    /// 256 KiB blocks hold several): no pass through the cache and no copy out of it.
    ///
    /// `authentic` sees each piece of `buffer` as soon as it holds a chunk's authenticated bytes
    /// (a chunk or the part of one the range covers), in order, while they are still in the
    /// CPU's cache: a checksum over the whole range then costs no second pass over memory.
    public func read(at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer,
                     authentic: ((UnsafeRawBufferPointer) -> Void)? = nil) throws(VaultError) -> Int {
        guard offset < size else { return 0 }
        let count = Int(min(UInt64(buffer.count), size - offset))
        return try streamRead(at: offset, into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count]), authentic: authentic)
    }

    /// `read(at:into:)` over the whole stream, padding and trailer included.
    private func streamRead(at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer,
                            authentic: ((UnsafeRawBufferPointer) -> Void)? = nil) throws(VaultError) -> Int {
        let chunks = layout.chunks(coveringOffset: offset, count: buffer.count)
        var written = 0
        do throws(VaultError) {
            for index in chunks {
                if cachedChunk != index, chunks.upperBound - index > 1, run?.sealed(index) == nil {
                    try readRun(from: index, to: chunks.upperBound)
                }
                let range = layout.plaintextRange(ofChunk: index)
                let start = Int(offset + UInt64(written) - range.lowerBound)
                let take = min(range.count - start, buffer.count - written)
                let destination = buffer.baseAddress!.advanced(by: written)
                if start == 0 && take == range.count && cachedChunk != index {
                    try decrypt(chunk: index, into: UnsafeMutableRawBufferPointer(start: destination, count: take))
                } else {
                    try loadChunk(index)
                    destination.copyMemory(from: cache.baseAddress!.advanced(by: start), byteCount: take)
                }
                authentic?(UnsafeRawBufferPointer(start: destination, count: take))
                written += take
            }
        } catch {
            Wipe.memory(UnsafeMutableRawBufferPointer(rebasing: buffer[0..<written]))
            throw error
        }
        return written
    }

    /// Asks the kernel to start reading the sealed chunks that hold these plaintext ranges
    /// (posix_fadvise WILLNEED): a listing's scattered small reads (a ZIP's local headers, one
    /// chunk each) then find them in memory instead of each waiting on the disk in turn. A hint
    /// only; nothing is decrypted here.
    public func willNeed(_ ranges: [(offset: UInt64, length: Int)]) {
        for range in ranges where range.offset < size && range.length > 0 {
            let chunks = layout.chunks(coveringOffset: range.offset, count: Int(min(UInt64(range.length), size - range.offset)))
            guard let last = chunks.last else { continue }
            let start = layout.storedOffset(ofChunk: chunks.lowerBound)
            let end = layout.storedOffset(ofChunk: last) + UInt64(layout.storedLength(ofChunk: last))
            _ = posix_fadvise(file.raw, off_t(start), off_t(end - start), 3 /* POSIX_FADV_WILLNEED */)
        }
    }

    /// Reads the sealed chunks from `first` on (up to `end`, as many as a run holds) in one go.
    private func readRun(from first: UInt64, to end: UInt64) throws(VaultError) {
        let run = self.run ?? SealedChunkRun(layout: layout, direct: direct)
        self.run = run
        let chunks = first..<(first + run.chunksFitting(from: first, count: end - first))
        guard try run.load(chunks, from: file) else {
            throw .damagedObject(path: path, detail: "chunks \(chunks.lowerBound)-\(chunks.upperBound - 1) are cut short (file changed while open?)")
        }
    }

    /// Decrypts and verifies chunk `index` into the cache, unless it is already there.
    private func loadChunk(_ index: UInt64) throws(VaultError) {
        if cachedChunk == index { return }
        cachedChunk = nil  // the cache is not valid while being overwritten
        let length = layout.plaintextLength(ofChunk: index)
        try decrypt(chunk: index, into: UnsafeMutableRawBufferPointer(rebasing: cache[0..<length]))
        cachedChunk = index
    }

    /// Reads chunk `index` and decrypts it into `plaintext` (exactly its plaintext length),
    /// which holds nothing but wiped bytes if the chunk is not authentic.
    private func decrypt(chunk index: UInt64, into plaintext: UnsafeMutableRawBufferPointer) throws(VaultError) {
        let length = layout.plaintextLength(ofChunk: index)
        precondition(plaintext.count == length, "a chunk decrypts into exactly its plaintext length")
        let stored = length + VaultChunkLayout.overheadPerChunk
        let sealed: UnsafeRawBufferPointer
        if let inRun = run?.sealed(index) {
            sealed = inRun
        } else {
            let storedChunk = UnsafeMutableRawBufferPointer(rebasing: self.sealed[0..<stored])
            let got = try file.read(into: storedChunk, at: layout.storedOffset(ofChunk: index))
            guard got == stored else {
                throw .damagedObject(path: path, detail: "chunk \(index) is cut short (file changed while open?)")
            }
            sealed = UnsafeRawBufferPointer(storedChunk)
        }
        aad.set(chunk: index, isLast: layout.isLastChunk(index))
        let nonceEnd = AESGCM.nonceLength
        let tagStart = nonceEnd + length
        do {
            try aad.bytes.withBytes { (aad) throws(CryptoError) in
                try opener.open(
                    ciphertext: UnsafeRawBufferPointer(rebasing: sealed[nonceEnd..<tagStart]),
                    tag: UnsafeRawBufferPointer(rebasing: sealed[tagStart..<stored]),
                    into: plaintext,
                    nonce: UnsafeRawBufferPointer(rebasing: sealed[0..<nonceEnd]),
                    aad: aad)
            }
        } catch .authenticationFailed {
            throw .objectNotAuthentic(path: path, chunk: index)
        } catch {
            throw .crypto(error)
        }
        chunksDecrypted += 1
    }
}
