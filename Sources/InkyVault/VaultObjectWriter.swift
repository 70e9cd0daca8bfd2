#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Encrypts one object (one comic's original bytes) to a new file, streaming: feed the
/// plaintext in pieces of any size with `write`, then `finish`.
///
/// The plaintext size must be known up front because the padded stream's size is part of the
/// header, and the header is part of every chunk's AAD; `finish` refuses if a different number
/// of bytes arrived, then appends the padding and the comic's size (format version 2). Crash safety: the ciphertext goes to a temporary file created with O_EXCL in
/// the destination's directory; `finish` fsyncs it, gives it its final name without ever
/// replacing an existing file (objects are write-once), and fsyncs the directory. Until
/// `finish` returns, the final name does not exist; a writer dropped unfinished, or one
/// that failed, deletes its temporary file.
public final class VaultObjectWriter {
    public let path: String
    public let header: VaultObjectHeader
    private let layout: VaultChunkLayout
    private let key: SecureBytes
    private let randomness: RandomSource
    private var file: FileDescriptor?
    private let temporaryPath: String
    private var aad: ChunkAAD
    private var plaintext: [UInt8]
    private var buffered = 0
    private var sealed: [UInt8]
    private var nextChunk: UInt64 = 0
    /// Comic bytes received, and stream bytes (comic, then padding and trailer) fed to chunks.
    private var received: UInt64 = 0
    private var streamed: UInt64 = 0
    private let contentSize: UInt64
    private var finished = false

    /// Starts writing an object of exactly `plaintextSize` bytes to `path`, with 64 KiB
    /// chunks and fresh random nonces. `key` is the object key for `fileID`
    /// (`VaultKeys.objectKey(fileID:)`).
    public convenience init(path: String, key: SecureBytes, fileID: VaultFileID, plaintextSize: UInt64) throws(VaultError) {
        try self.init(path: path, key: key, fileID: fileID, plaintextSize: plaintextSize,
                      chunkSize: VaultObjectHeader.defaultChunkSize, randomness: .system)
    }

    /// `version` 1 writes the unpadded format, for tests of how old vaults still read.
    init(
        path: String, key: SecureBytes, fileID: VaultFileID, plaintextSize: UInt64,
        chunkSize: Int, randomness: RandomSource, version: UInt16 = VaultObjectHeader.formatVersion
    ) throws(VaultError) {
        guard key.count == AESGCM.keyLength else { throw .crypto(.invalidKeyLength) }
        let streamSize = version >= 2 ? VaultPadding.objectStreamSize(contentSize: plaintextSize) : plaintextSize
        guard VaultObjectHeader.chunkSizeRange.contains(chunkSize), plaintextSize < UInt64(Int64.max) / 2,
              let layout = VaultChunkLayout(plaintextSize: streamSize, chunkSize: chunkSize) else {
            throw .plaintextSizeMismatch(expected: plaintextSize, actual: 0)
        }
        self.path = path
        self.key = key
        self.randomness = randomness
        self.layout = layout
        contentSize = plaintextSize
        header = VaultObjectHeader(version: version, chunkSize: chunkSize, fileID: fileID, plaintextSize: streamSize)
        aad = ChunkAAD(header: header.bytes)
        plaintext = [UInt8](repeating: 0, count: chunkSize)
        sealed = [UInt8](repeating: 0, count: chunkSize + VaultChunkLayout.overheadPerChunk)
        let (file, temporaryPath) = try DurableFiles.createTemporary(besides: path)
        self.file = file
        self.temporaryPath = temporaryPath
        do throws(VaultError) {
            try file.writeAll(header.bytes)
        } catch {
            abandon()
            throw error
        }
    }

    deinit {
        if !finished { abandon() }
        Wipe.array(&plaintext)
    }

    public func write(_ bytes: [UInt8]) throws(VaultError) {
        try bytes.withBytes { (bytes) throws(VaultError) in try write(bytes) }
    }

    public func write(_ bytes: UnsafeRawBufferPointer) throws(VaultError) {
        guard file != nil, !finished else { throw .io(path: path, operation: "write after finish or failure", errno: .init(EBADF)) }
        guard UInt64(bytes.count) <= contentSize - received else {
            abandon()
            throw .plaintextSizeMismatch(expected: contentSize, actual: received + UInt64(bytes.count))
        }
        try feed(bytes)
        received += UInt64(bytes.count)
    }

    /// Appends stream bytes, sealing each chunk as it fills.
    private func feed(_ bytes: UnsafeRawBufferPointer) throws(VaultError) {
        var consumed = 0
        while consumed < bytes.count {
            let wanted = layout.plaintextLength(ofChunk: nextChunk) - buffered
            let take = min(wanted, bytes.count - consumed)
            plaintext.withUnsafeMutableBytes { buffer in
                buffer.baseAddress!.advanced(by: buffered)
                    .copyMemory(from: bytes.baseAddress!.advanced(by: consumed), byteCount: take)
            }
            buffered += take
            consumed += take
            streamed += UInt64(take)
            if buffered == layout.plaintextLength(ofChunk: nextChunk) {
                try sealChunk()
            }
        }
    }

    /// Completes the object: the empty final chunk of an empty object, fsync, publish
    /// under `path` (never replacing an existing file), fsync the directory.
    public func finish() throws(VaultError) {
        guard let file, !finished else { throw .io(path: path, operation: "finish twice", errno: .init(EBADF)) }
        guard received == contentSize else {
            abandon()
            throw .plaintextSizeMismatch(expected: contentSize, actual: received)
        }
        if header.isPadded { try feedPadding() }
        if nextChunk < layout.chunkCount { try sealChunk() }  // only the empty object's chunk is left
        do throws(VaultError) {
            precondition(nextChunk == layout.chunkCount, "every chunk must have been written")
            try file.sync()
            self.file = nil  // close before publishing
            try DurableFiles.publishWithoutReplacing(temporaryPath, as: path)
            finished = true
        } catch {
            abandon()
            throw error
        }
    }

    private func sealChunk() throws(VaultError) {
        guard let file else { throw .io(path: path, operation: "write after failure", errno: .init(EBADF)) }
        let index = nextChunk
        let length = layout.plaintextLength(ofChunk: index)
        aad.set(chunk: index, isLast: layout.isLastChunk(index))
        do throws(VaultError) {
            let stored = length + VaultChunkLayout.overheadPerChunk
            try sealed.withMutableBytes { (sealed) throws(VaultError) in
                let nonce = UnsafeMutableRawBufferPointer(rebasing: sealed[0..<AESGCM.nonceLength])
                let ciphertext = UnsafeMutableRawBufferPointer(
                    rebasing: sealed[AESGCM.nonceLength..<AESGCM.nonceLength + length])
                let tag = UnsafeMutableRawBufferPointer(
                    rebasing: sealed[(AESGCM.nonceLength + length)..<stored])
                do throws(CryptoError) {
                    try randomness.fill(nonce)
                    try plaintext.withBytes { (plaintext) throws(CryptoError) in
                        try aad.bytes.withBytes { (aad) throws(CryptoError) in
                            try AESGCM.seal(plaintext: UnsafeRawBufferPointer(rebasing: plaintext[0..<length]),
                                            into: ciphertext, tag: tag, key: key,
                                            nonce: UnsafeRawBufferPointer(nonce), aad: aad)
                        }
                    }
                } catch {
                    throw .crypto(error)
                }
                try file.writeAll(UnsafeRawBufferPointer(rebasing: sealed[0..<stored]))
            }
        } catch {
            abandon()
            throw error
        }
        buffered = 0
        nextChunk += 1
    }

    /// Zeros up to the trailer, then the comic's size: the rest of a version 2 stream.
    private func feedPadding() throws(VaultError) {
        let zeros = [UInt8](repeating: 0, count: 65_536)
        var left = layout.plaintextSize - streamed - VaultPadding.objectTrailerLength
        while left > 0 {
            let piece = Int(min(left, UInt64(zeros.count)))
            try zeros.withBytes { (zeros) throws(VaultError) in try feed(UnsafeRawBufferPointer(rebasing: zeros[0..<piece])) }
            left -= UInt64(piece)
        }
        var trailer: [UInt8] = []
        trailer.appendBigEndian(contentSize)
        try trailer.withBytes { (trailer) throws(VaultError) in try feed(trailer) }
    }

    /// Forgets the temporary file; the final name was never created.
    private func abandon() {
        file = nil
        if !finished { unlink(temporaryPath) }
    }
}
