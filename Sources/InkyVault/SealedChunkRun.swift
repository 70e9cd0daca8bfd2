#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import InkyCore

/// Several consecutive sealed chunks of one object, read from the file with one `pread`, so a
/// large read (a whole stored page, in the daemon) costs one system call instead of one per
/// 64 KiB chunk. Holds ciphertext only: nothing here is secret, nothing is decrypted here.
///
/// With direct I/O (`O_DIRECT`, on a descriptor of its own) the chunks go from the disk into
/// this buffer without passing through the page cache: a cold read then costs no page-cache
/// fill (which, at 0.3-1 s of system time per GB, was the largest part of the daemon's CPU
/// reading a vault comic) and leaves no second copy of the object cached beside the pages
/// the daemon keeps itself. Direct reads must start and end on the device's block boundaries,
/// so the run is read from the boundary before its first chunk to the one after its last.
/// A file system that refuses direct I/O gets ordinary reads.
final class SealedChunkRun {
    /// Bytes a run holds at most: about 16 chunks of the default size.
    static let capacity = 1 << 20
    /// Offsets, lengths and memory of direct reads are multiples of this (every Linux block
    /// device's logical block size is at most 4 KiB).
    static let alignment = 4096

    private let layout: VaultChunkLayout
    private let buffer: UnsafeMutableRawBufferPointer
    /// The descriptor for direct reads; nil once the file system refused one.
    private var direct: FileDescriptor?
    /// File offset of `buffer`'s first byte, and how many bytes of it hold the file's.
    private var start: UInt64 = 0
    private var valid = 0

    init(layout: VaultChunkLayout, direct: FileDescriptor?) {
        self.layout = layout
        self.direct = direct
        buffer = .allocate(byteCount: Self.capacity + 2 * Self.alignment, alignment: Self.alignment)
    }

    deinit { buffer.deallocate() }

    /// Whether runs are read with direct I/O (until the file system refuses one).
    var isDirect: Bool { direct != nil }

    /// How many chunks from `first` (at most `count`) fit in one run.
    func chunksFitting(from first: UInt64, count: UInt64) -> UInt64 {
        let stored = UInt64(layout.chunkSize + VaultChunkLayout.overheadPerChunk)
        return max(1, min(count, UInt64(Self.capacity) / stored))
    }

    /// Reads chunks `chunks` (which must fit: `chunksFitting`) from `file`, or from the direct
    /// descriptor when there is one. False when the file ends before the last of them does.
    func load(_ chunks: Range<UInt64>, from file: FileDescriptor) throws(VaultError) -> Bool {
        valid = 0
        let first = layout.storedOffset(ofChunk: chunks.lowerBound)
        let end = layout.storedOffset(ofChunk: chunks.upperBound - 1) + UInt64(layout.storedLength(ofChunk: chunks.upperBound - 1))
        if let direct {
            let alignment = UInt64(Self.alignment)
            let alignedStart = first / alignment * alignment
            let alignedEnd = (end + alignment - 1) / alignment * alignment
            switch Self.readDirect(direct, into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<Int(alignedEnd - alignedStart)]),
                                   at: alignedStart, needed: Int(end - alignedStart)) {
            case .success(let got):
                start = alignedStart
                valid = got
                return UInt64(got) >= end - alignedStart
            case .failure(let code) where code.code == EINVAL:
                self.direct = nil   // not for this file system: ordinary reads from now on
            case .failure(let code):
                throw .io(path: direct.path, operation: "pread (direct)", errno: code)
            }
        }
        let got = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<Int(end - first)]), at: first)
        start = first
        valid = got
        return UInt64(got) == end - first
    }

    /// Chunk `index`'s sealed bytes (nonce, ciphertext, tag) if the last run read holds them.
    func sealed(_ index: UInt64) -> UnsafeRawBufferPointer? {
        guard valid > 0, index < layout.chunkCount else { return nil }
        let offset = layout.storedOffset(ofChunk: index)
        let length = UInt64(layout.storedLength(ofChunk: index))
        guard offset >= start, offset + length <= start + UInt64(valid) else { return nil }
        let from = Int(offset - start)
        return UnsafeRawBufferPointer(rebasing: buffer[from..<(from + Int(length))])
    }

    /// Forgets what was read (the chunks' bytes are the file's, so only for a clean start).
    func forget() { valid = 0 }

    /// One direct read, continued while it stops on a block boundary short of `needed` (a
    /// direct read may end early; one that ends off a boundary has met the end of the file).
    private static func readDirect(_ file: FileDescriptor, into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64,
                                   needed: Int) -> Result<Int, Errno> {
        var done = 0
        while done < needed {
            let got = Syscall.retrying { pread(file.raw, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done)) }
            if got < 0 { return .failure(.current) }
            done += got
            if got == 0 || done % alignment != 0 { break }
        }
        return .success(done)
    }

    /// A second descriptor of the object `file` opened at `path`, for direct reads: nil when
    /// the file system has no direct I/O, or the path no longer names the same file.
    static func directDescriptor(path: String, sameAs file: FileDescriptor) -> FileDescriptor? {
        guard let directFlag,
              let opened = try? FileDescriptor(path: path, flags: O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | directFlag),
              let mine = try? file.status(), let its = try? opened.status(),
              mine.st_dev == its.st_dev, mine.st_ino == its.st_ino else { return nil }
        return opened
    }

    /// O_DIRECT, which Swift's Glibc module leaves out (it is a _GNU_SOURCE flag); its value is
    /// per architecture (the kernel's asm/fcntl.h). nil elsewhere: ordinary reads.
    static var directFlag: Int32? {
        #if arch(x86_64) || arch(i386) || arch(riscv64) || arch(s390x)
        return 0o40000
        #elseif arch(arm64) || arch(arm)
        return 0o200000
        #else
        return nil
        #endif
    }
}
