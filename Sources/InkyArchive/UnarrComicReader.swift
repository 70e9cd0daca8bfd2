import InkyCore

/// RAR 1.5–4 through libunarr. libarchive 3.6 cannot read solid RAR4 nor RAR 1.5/2.x, and
/// solid RAR4 is common among real CBRs; unarr reads all of them (docs/decisions/libunarr-for-rar4.md).
///
/// unarr seeks to any entry by header offset; in a solid archive it decodes forward from the
/// last position itself, restarting from the first entry only to go backwards.
final class UnarrComicReader: EntryStreamingReader {
    let path: String
    let listing: ComicListing
    var onProgress: (() -> Void)?
    let limits: ComicLimits
    private let archive: UnarrArchive
    private var offsets: [Int: Int64] = [:]
    private var position = StreamPosition()
    private var currentStats = ReaderStats()
    /// Allocated last in init: when init throws before every stored property is set, deinit
    /// does not run, so anything allocated earlier would leak (64 KiB per broken archive).
    private let chunk: UnsafeMutableRawPointer

    convenience init(path: String, limits: ComicLimits) throws(ComicError) {
        let source = try FileSource(path: path)
        try self.init(source: source, limits: limits) { () throws(ComicError) in try UnarrArchive(path: path) }
    }

    /// unarr reads only files and memory: a RAR4 from a byte source (a vault object) is
    /// decrypted into memory, bounded by the comic-size limit, never onto disk.
    convenience init(bytes: FileSource, limits: ComicLimits) throws(ComicError) {
        guard bytes.size <= limits.maxComicBytes else {
            throw .limitExceeded(path: bytes.path, detail: "a RAR4 comic read from memory is limited to \(ByteCountText.format(limits.maxComicBytes))")
        }
        let contents = try bytes.bytes(at: 0, count: Int(bytes.size))
        try self.init(source: bytes, limits: limits) { () throws(ComicError) in try UnarrArchive(memory: contents, label: bytes.path) }
    }

    /// From a descriptor passed in (a worker opens nothing by name): unarr reads a mapping of it.
    convenience init(descriptor: Int32, source: FileSource, limits: ComicLimits) throws(ComicError) {
        try self.init(source: source, limits: limits) { () throws(ComicError) in
            try UnarrArchive(descriptor: descriptor, size: source.size, label: source.path)
        }
    }

    private init(source: FileSource, limits: ComicLimits, open: () throws(ComicError) -> UnarrArchive) throws(ComicError) {
        let path = source.path
        let scan = try RARHeaderScan.scan(source)
        if scan.isEncrypted { throw .encrypted(path: path) }
        self.path = path
        self.limits = limits
        archive = try open()
        var entries: [ArchiveEntry] = []
        while let entry = try archive.nextEntry() {
            // unarr lists regular files only: directories and links are not entries here.
            entries.append(ArchiveEntry(index: entries.count, path: entry.name, kind: .file, declaredSize: entry.size))
            offsets[entries.count - 1] = entry.offset
            if entries.count > limits.maxEntries {
                throw .limitExceeded(path: path, detail: "more than \(limits.maxEntries) entries")
            }
        }
        // Links by position: only when the scan saw exactly the entries unarr lists.
        if scan.fileIsLink.count == entries.count {
            for index in entries.indices where scan.fileIsLink[index] { entries[index].kind = .symlink }
        }
        listing = try ComicListing.build(path: path, format: .rar4, entries: entries, isSolid: scan.isSolid, limits: limits)
        currentStats.sourceBytesRead = source.bytesRead
        chunk = .allocate(byteCount: 1 << 16, alignment: 16)
    }

    deinit { chunk.deallocate() }

    func countProduced(_ bytes: Int64) { currentStats.pageBytesProduced += bytes }

    var stats: ReaderStats { currentStats }

    func cost(of page: Page) -> ReadCost {
        position.cost(of: page.entryIndex, isSolid: listing.isSolid)
    }

    func stream(entryIndex: Int, name: String, size: Int64,
                into sink: (UnsafeRawBufferPointer) -> Void) throws(ComicError) {
        guard let offset = offsets[entryIndex] else {
            throw .corrupted(path: path, detail: "no entry \(entryIndex)")
        }
        if listing.isSolid && position.needsRestart(for: entryIndex) { currentStats.restarts += 1 }
        try archive.seek(toEntryAt: offset)
        var budget = PageBudget(path: path, entryName: name, declaredSize: size, limits: limits)
        var remaining = size
        while remaining > 0 {
            let count = Int(min(remaining, 1 << 16))
            try archive.uncompress(into: chunk, count: count)
            try budget.accept(count, consumed: nil)
            sink(UnsafeRawBufferPointer(start: chunk, count: count))
            remaining -= Int64(count)
            onProgress?()
        }
        try budget.finish()
        position.pendingEntry = nil
        position.nextEntry = entryIndex + 1
    }
}
