import Foundation
internal import CArchive
import InkyCore

/// The one Swift owner of a libarchive read handle: opens it over a `FileSource` through
/// custom callbacks (so every input byte is counted and I/O errors keep their errno), turns
/// return codes into `ComicError`, and frees the handle in deinit. Not thread-safe, like
/// libarchive itself: one owner at a time.
final class LibArchiveHandle {
    /// What `nextHeader` found.
    enum Header {
        case entry(ArchiveEntry)
        /// libarchive gave up on this header but the archive may go on (ARCHIVE_FAILED).
        case unreadable(String)
        case end
    }

    let source: FileSource
    private let format: ArchiveFormat
    private let archive: OpaquePointer
    private let callbackState: CallbackState
    private var headersRead = 0

    /// Read callback state: libarchive asks for blocks through a C function pointer and
    /// gets this object back as client data.
    ///
    /// Block sizes grow like kernel readahead: 4 KiB after a seek, doubling while reads stay
    /// sequential. libarchive's seekable ZIP reader visits every local header, so a fixed large
    /// block would read most of a comic just to list it; a fixed small one would slow streaming.
    final class CallbackState {
        static let firstBlock = 4 << 10
        static let largestBlock = 256 << 10
        let source: FileSource
        /// Grown with the blocks, not allocated at the largest: listing a small comic needs a
        /// few KiB, and a 256 KiB buffer per archive went back to the kernel (brk) and came
        /// again for every comic listed. libarchive holds a block only until the next read.
        private(set) var buffer = UnsafeMutableRawPointer.allocate(byteCount: firstBlock, alignment: 16)
        private var capacity = firstBlock
        var nextBlock = firstBlock
        var ioError: ComicError?
        init(source: FileSource) { self.source = source }
        deinit { buffer.deallocate() }

        func readBlock() throws(ComicError) -> Int {
            while true {
                if nextBlock > capacity {
                    buffer.deallocate()
                    buffer = .allocate(byteCount: nextBlock, alignment: 16)
                    capacity = nextBlock
                }
                do throws(ComicError) {
                    let got = try source.read(into: buffer, count: nextBlock)
                    nextBlock = min(nextBlock * 2, Self.largestBlock)
                    return got
                } catch .io(_, EIO, _) where nextBlock > Self.firstBlock {
                    // A bad sector somewhere in a large block may lie beyond what libarchive
                    // needs: the page before it must still read. Small blocks get up to it.
                    nextBlock = Self.firstBlock
                }
            }
        }

        func seek(to offset: Int64) -> Int64? {
            if offset != source.position { nextBlock = Self.firstBlock }
            return source.seek(to: offset)
        }
    }

    /// `zipMember`: the source starts at one ZIP member's local header, read with libarchive's
    /// streaming ZIP reader (the seekable one would look for the directory at the end).
    init(source: FileSource, format: ArchiveFormat, zipMember: Bool = false) throws(ComicError) {
        _ = Self.utf8Names
        guard let archive = archive_read_new() else {
            throw .limitExceeded(path: source.path, detail: "out of memory opening the archive")
        }
        self.source = source
        self.format = format
        self.archive = archive
        self.callbackState = CallbackState(source: source)
        if zipMember && format == .zip {
            archive_read_support_format_zip_streamable(archive)
        } else {
            Self.enableFormats(of: format, on: archive)
        }
        let client = Unmanaged.passUnretained(callbackState).toOpaque()
        archive_read_set_read_callback(archive, { _, client, block in
            let state = Unmanaged<CallbackState>.fromOpaque(client!).takeUnretainedValue()
            do throws(ComicError) {
                let got = try state.readBlock()
                block?.pointee = UnsafeRawPointer(state.buffer)
                return got
            } catch {
                state.ioError = error
                return -1
            }
        })
        archive_read_set_seek_callback(archive, { _, client, offset, whence in
            let state = Unmanaged<CallbackState>.fromOpaque(client!).takeUnretainedValue()
            let base: Int64 = switch whence {
            case SEEK_SET: 0
            case SEEK_CUR: state.source.position
            default: state.source.size
            }
            return state.seek(to: base + offset) ?? -1
        })
        archive_read_set_skip_callback(archive, { _, client, request in
            let state = Unmanaged<CallbackState>.fromOpaque(client!).takeUnretainedValue()
            let target = min(state.source.size, state.source.position + max(0, request))
            let skipped = target - state.source.position
            _ = state.seek(to: target)
            return skipped
        })
        archive_read_set_callback_data(archive, client)
        let status = archive_read_open1(archive)
        // No archive_read_free here: every stored property is set, so throwing runs deinit,
        // which frees the handle. Freeing it here too was a double free (found by FuzzArchive).
        if status != inky_archive_ok() { throw mappedError(status) }
    }

    deinit { archive_read_free(archive) }

    /// Only the decoder the content asked for: a hostile file cannot steer us into another
    /// format's parser, and libarchive's "raw" fallback never turns garbage into an entry.
    private static func enableFormats(of format: ArchiveFormat, on archive: OpaquePointer) {
        switch format {
        case .zip: archive_read_support_format_zip(archive)
        case .rar5: archive_read_support_format_rar5(archive)
        case .rar4: archive_read_support_format_rar(archive)
        case .sevenZip: archive_read_support_format_7zip(archive)
        case .tar, .gzip, .bzip2, .xz, .zstd, .lzip:
            archive_read_support_filter_all(archive)
            archive_read_support_format_tar(archive)
            archive_read_support_format_gnutar(archive)
        case .folder, .pdf, .ace, .oldRAR: break
        }
    }

    /// Damaged headers `nextHeader` stepped past (a TAR member's), where each was and why, so
    /// a listing can say that a member is missing even though its name is lost.
    private(set) var damagedHeaders: [(offset: Int64, why: String)] = []

    /// Index of the entry the last `.entry` or `.unreadable` header stood for.
    var lastHeaderIndex: Int { headersRead - 1 }

    func nextHeader() throws(ComicError) -> Header {
        var entry: OpaquePointer?
        var status = archive_read_next_header(archive, &entry)
        // A damaged TAR header: libarchive steps past it one 512-byte block per RETRY until a
        // valid header, so one bad member costs only itself. Bounded however libarchive behaves.
        var retries = 0
        if status == inky_archive_retry() {
            damagedHeaders.append((offset: archive_read_header_position(archive), why: errorMessage ?? "damaged header"))
        }
        while status == inky_archive_retry() && retries <= source.size / 512 {
            retries += 1
            status = archive_read_next_header(archive, &entry)
        }
        if status == inky_archive_retry() { throw .corrupted(path: source.path, detail: errorMessage ?? "damaged headers") }
        if status == inky_archive_eof() { return .end }
        if status == inky_archive_fatal() { throw mappedError(status) }
        headersRead += 1
        if status == inky_archive_failed() || entry == nil {
            return .unreadable(errorMessage ?? "unreadable header")
        }
        return .entry(Self.describe(entry!, index: headersRead - 1))
    }

    /// Reads the current entry's data in chunks; returns 0 at its end.
    func readData(into buffer: UnsafeMutableRawPointer, count: Int) throws(ComicError) -> Int {
        let got = archive_read_data(archive, buffer, count)
        entryEndedDamaged = false
        if got < 0 {
            entryEndedDamaged = got == Int(inky_archive_warn())
            throw mappedError(Int32(truncatingIfNeeded: got))
        }
        return got
    }

    /// True when the last `readData` error was a warning: the entry's data was all decoded but
    /// failed its check (7z's "bad CRC"). The stream itself is intact, so the entries after it
    /// can still be read.
    private(set) var entryEndedDamaged = false

    /// Skips the current entry's data the cheapest way libarchive knows (a seek where it can).
    func skipData() throws(ComicError) {
        let status = archive_read_data_skip(archive)
        if status != inky_archive_ok() { throw mappedError(status) }
    }

    private var errorMessage: String? {
        archive_error_string(archive).map { String(cString: $0) }
    }

    /// libarchive reports encryption only in words, and not at all for RAR5 data: read them.
    private func mappedError(_ status: Int32) -> ComicError {
        if let ioError = callbackState.ioError { return ioError }
        let message = errorMessage ?? "libarchive error \(status)"
        let lower = message.lowercased()
        if lower.contains("passphrase") || lower.contains("encrypt") || lower.contains("decryption") {
            return .encrypted(path: source.path)
        }
        if archive_errno(archive) == ENOMEM {
            return .limitExceeded(path: source.path, detail: "the decoder ran out of memory (\(message))")
        }
        if format == .rar5 && lower.contains("unsupported block header size") {
            return .corrupted(path: source.path, detail: "\(message) (RAR5 data errors of this kind usually mean password-protected data)")
        }
        return .corrupted(path: source.path, detail: message)
    }

    /// libarchive converts entry names to the charset of the current locale, and in the "C"
    /// locale every process starts in it gives no name at all for a non-ASCII one ("Pathname
    /// cannot be converted from UTF-8 to current locale"): a page named "Café.jpg" in a ZIP, and
    /// any accented name in a 7z or RAR5, silently stopped being a page. Names are wanted as
    /// UTF-8 whatever the user's locale, so character conversions use C.UTF-8, once per process.
    private static let utf8Names: Void = {
        if let current = setlocale(LC_CTYPE, nil), ["C", "POSIX"].contains(String(cString: current)) {
            _ = setlocale(LC_CTYPE, "C.UTF-8")
        }
    }()

    private static func describe(_ entry: OpaquePointer, index: Int) -> ArchiveEntry {
        let path: String
        if let utf8 = archive_entry_pathname_utf8(entry) {
            path = String(cString: utf8)
        } else if let raw = archive_entry_pathname(entry) {
            path = String(decoding: UnsafeRawBufferPointer(start: raw, count: strlen(raw)), as: UTF8.self)
        } else {
            path = ""
        }
        let kind: EntryKind
        if archive_entry_hardlink(entry) != nil {
            kind = .hardlink
        } else {
            switch archive_entry_filetype(entry) & 0o170000 {
            case 0o100000: kind = .file
            case 0o040000: kind = .directory
            case 0o120000: kind = .symlink
            case 0o020000, 0o060000: kind = .device
            case 0o010000: kind = .fifo
            case 0o140000: kind = .socket
            // Some zips store no type bits at all; a trailing slash is the directory signal.
            case 0: kind = path.hasSuffix("/") ? .directory : .file
            default: kind = .other
            }
        }
        let size: Int64? = archive_entry_size_is_set(entry) != 0 ? archive_entry_size(entry) : nil
        let encrypted = archive_entry_is_encrypted(entry) != 0
        return ArchiveEntry(index: index, path: path, kind: kind, declaredSize: size, isEncrypted: encrypted)
    }

    static var version: String {
        let text = String(cString: archive_version_string())
        return text.hasPrefix("libarchive ") ? String(text.dropFirst("libarchive ".count)) : text
    }
}
