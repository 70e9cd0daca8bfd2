#if canImport(Glibc)
import Glibc
#endif
internal import CUnarr
import InkyCore

/// The one Swift owner of an unarr stream + RAR archive pair (RAR 1.5–4, solid included):
/// opens both, turns unarr's booleans into `ComicError`, closes both in deinit.
final class UnarrArchive {
    private let stream: OpaquePointer
    private let archive: OpaquePointer
    let path: String
    /// For archives opened from memory: unarr reads this buffer until the stream is closed.
    private var memory: UnsafeMutableRawBufferPointer?
    /// For archives opened from a descriptor: unarr reads this mapping of the file.
    private var mapping: UnsafeMutableRawBufferPointer?

    init(path: String) throws(ComicError) {
        guard let stream = ar_open_file(path) else {
            throw .io(path: path, errno: 0, detail: "cannot open")
        }
        guard let archive = ar_open_rar_archive(stream) else {
            ar_close(stream)
            throw .corrupted(path: path, detail: "unarr cannot read the RAR headers")
        }
        self.path = path
        self.stream = stream
        self.archive = archive
    }

    /// A RAR archive held in memory (a decrypted vault object); the bytes are copied and the
    /// copy is zeroed and freed with the archive.
    init(memory contents: [UInt8], label: String) throws(ComicError) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, contents.count), alignment: 16)
        buffer.copyBytes(from: contents)
        guard let stream = ar_open_memory(buffer.baseAddress, contents.count) else {
            buffer.deallocate()
            throw .corrupted(path: label, detail: "unarr cannot open the archive in memory")
        }
        guard let archive = ar_open_rar_archive(stream) else {
            ar_close(stream)
            buffer.deallocate()
            throw .corrupted(path: label, detail: "unarr cannot read the RAR headers")
        }
        self.path = label
        self.stream = stream
        self.archive = archive
        memory = buffer
    }

    /// A RAR archive read through a descriptor passed in (unarr itself opens only names): the
    /// file mapped read-only, which costs address space, not memory (files over
    /// `ComicOpener.largestMappedRAR` go to libarchive); the mapping outlives the descriptor. A
    /// file cut short under it makes reads past its new end fault: the worker dies, that
    /// comic reads EIO, and the pool starts another, as for any crash.
    init(descriptor: Int32, size: Int64, label: String) throws(ComicError) {
        guard size > 0, let base = mmap(nil, Int(size), PROT_READ, MAP_PRIVATE, descriptor, 0), base != MAP_FAILED else {
            let code = errno
            throw .io(path: label, errno: code, detail: "cannot map the archive: \(String(cString: strerror(code)))")
        }
        let mapped = UnsafeMutableRawBufferPointer(start: base, count: Int(size))
        guard let stream = ar_open_memory(base, Int(size)) else {
            munmap(base, Int(size))
            throw .corrupted(path: label, detail: "unarr cannot open the archive in memory")
        }
        guard let archive = ar_open_rar_archive(stream) else {
            ar_close(stream)
            munmap(base, Int(size))
            throw .corrupted(path: label, detail: "unarr cannot read the RAR headers")
        }
        self.path = label
        self.stream = stream
        self.archive = archive
        mapping = mapped
    }

    deinit {
        ar_close_archive(archive)
        ar_close(stream)
        if let mapping { munmap(mapping.baseAddress, mapping.count) }
        if let memory {
            memory.initializeMemory(as: UInt8.self, repeating: 0)
            memory.deallocate()
        }
    }

    struct Entry {
        var name: String
        var size: Int64
        var offset: Int64
    }

    /// The next entry's header, nil at the end; throws when the headers break off early.
    func nextEntry() throws(ComicError) -> Entry? {
        guard ar_parse_entry(archive) else {
            if ar_at_eof(archive) { return nil }
            throw .corrupted(path: path, detail: "unreadable RAR header")
        }
        let name = CP437.recoverUTF8(ar_entry_get_name(archive).map { String(cString: $0) } ?? "")
        return Entry(name: name, size: Int64(ar_entry_get_size(archive)), offset: ar_entry_get_offset(archive))
    }

    /// Positions on the entry whose header starts at `offset` (from `nextEntry`).
    func seek(toEntryAt offset: Int64) throws(ComicError) {
        guard ar_parse_entry_at(archive, offset) else {
            throw .corrupted(path: path, detail: "cannot find the entry again at offset \(offset)")
        }
    }

    /// Decodes the next `count` bytes of the current entry into `buffer`.
    func uncompress(into buffer: UnsafeMutableRawPointer, count: Int) throws(ComicError) {
        guard ar_entry_uncompress(archive, buffer, count) else {
            throw .corrupted(path: path, detail: "RAR data error (damaged archive or unsupported compression)")
        }
    }
}
