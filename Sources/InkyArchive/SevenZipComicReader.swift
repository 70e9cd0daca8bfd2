import InkyCore

/// 7z comics whose folders are Copy or LZMA/LZMA2 (with BCJ or Delta filters), decoded with
/// liblzma as a stream: each entry's bytes leave as soon as they are decoded and are checked
/// against the entry's own CRC, so damage at byte N of a solid folder fails only the entry
/// holding N and those after it, and a re-read of an earlier entry restarts the folder and
/// serves it again. `open` returns nil for what it does not decode (PPMd, BZip2, AES, BCJ2,
/// ARM64, a damaged header...): libarchive reads those as before.
final class SevenZipComicReader: EntryStreamingReader {
    let path: String
    let listing: ComicListing
    let limits: ComicLimits
    var onProgress: (() -> Void)?
    private let archive: SevenZipArchive
    private let source: FileSource
    private var folder: SevenZipFolderReader?
    /// The folder entry `folder` stands before (its position among the folder's entries).
    private var nextStream = 0
    private var finishedStats = ReaderStats()
    private static let chunkBytes = 1 << 20
    /// Allocated last in init: a throwing init before it would leak it (deinit would not run).
    private let chunk: UnsafeMutableRawPointer

    static func open(source: FileSource, limits: ComicLimits) throws(ComicError) -> SevenZipComicReader? {
        guard let archive = try? SevenZipArchive.read(source, limits: limits) else { return nil }
        // Each distinct chain is tried once: a 10,000-folder archive has one or two.
        for chain in Set(archive.folders.map(\.coders)) {
            guard SevenZipFolder(coders: chain).isDecodable, chain == [.copy] || LZMADecoder.accepts(chain) else { return nil }
        }
        let isSolid = archive.folders.contains { $0.streamCount > 1 }
        var listing = try ComicListing.build(path: source.path, format: .sevenZip, entries: archive.entries, isSolid: isSolid, limits: limits)
        // The headers' CRC-32s (each read checks them too): a CBZ of a solid CB7 then needs no
        // pass decoding every page before its first byte is served.
        for number in listing.pages.indices {
            listing.pages[number].learnedCRC32 = (archive.data[safe: listing.pages[number].entryIndex] ?? nil)?.crc
        }
        return SevenZipComicReader(archive: archive, source: source, limits: limits, listing: listing)
    }

    init(archive: SevenZipArchive, source: FileSource, limits: ComicLimits, listing: ComicListing) {
        path = source.path
        self.archive = archive
        self.source = source
        self.limits = limits
        self.listing = listing
        chunk = .allocate(byteCount: Self.chunkBytes, alignment: 16)
    }

    deinit { chunk.deallocate() }

    func countProduced(_ bytes: Int64) { finishedStats.pageBytesProduced += bytes }

    var stats: ReaderStats {
        var stats = finishedStats
        stats.sourceBytesRead = source.bytesRead
        return stats
    }

    func cost(of page: Page) -> ReadCost {
        guard let data = archive.data[safe: page.entryIndex] ?? nil else { return .direct }
        guard let folder, folder.index == data.folder else {
            return data.stream == 0 ? .direct : .forward(skippedEntries: data.stream)
        }
        if folder.produced == data.offset { return .direct }
        if folder.produced < data.offset { return .forward(skippedEntries: data.stream - nextStream) }
        return .restart(skippedEntries: data.stream)
    }

    func stream(entryIndex: Int, name: String, size: Int64,
                into sink: (UnsafeRawBufferPointer) -> Void) throws(ComicError) {
        guard let data = archive.data[safe: entryIndex] ?? nil else {
            if size == 0 { return }
            throw .corrupted(path: path, detail: "'\(name)' has no data in the archive")
        }
        var budget = PageBudget(path: path, entryName: name, declaredSize: size, limits: limits)
        var crc: UInt32 = 0
        do throws(ComicError) {
            let folder = try positioned(at: data)
            let consumedAtStart = folder.consumed
            var left = data.size
            while left > 0 {
                let got = try folder.read(into: chunk, count: Int(min(left, Int64(Self.chunkBytes))))
                guard got > 0 else { throw ComicError.corrupted(path: path, detail: "'\(name)' ends early in its folder") }
                left -= Int64(got)
                try budget.accept(got, consumed: folder.consumed - consumedAtStart)
                let bytes = UnsafeRawBufferPointer(start: chunk, count: got)
                if data.crc != nil { crc = CRC32.checksum(bytes, continuing: crc) }
                sink(bytes)
                onProgress?()
            }
            nextStream = data.stream + 1
        } catch {
            // The decoder's state after an error is unknown: the next read starts the folder afresh.
            dropFolder()
            throw error
        }
        try budget.finish()
        // Whoever collects a page drops it whole when it fails, so checking at its end serves
        // no bad byte; the folder itself stays positioned after the entry.
        if let expected = data.crc, crc != expected { throw .corrupted(path: path, detail: "'\(name)' fails its CRC-32") }
    }

    /// The folder reader standing at `data`'s first byte: the open one when `data` lies ahead
    /// of it, else the folder started again; the entries in between are decoded and counted.
    private func positioned(at data: SevenZipEntryData) throws(ComicError) -> SevenZipFolderReader {
        if let open = folder, open.index == data.folder, open.produced > data.offset {
            dropFolder()
            finishedStats.restarts += 1
        }
        let folder: SevenZipFolderReader
        if let open = self.folder, open.index == data.folder {
            folder = open
        } else {
            folder = try SevenZipFolderReader(archive.folders[data.folder], index: data.folder, source: source)
            self.folder = folder
            nextStream = 0
        }
        var skipped: Int64 = 0
        while folder.produced < data.offset {
            let got = try folder.read(into: chunk, count: Int(min(data.offset - folder.produced, Int64(Self.chunkBytes))))
            guard got > 0 else { throw ComicError.corrupted(path: path, detail: "7z folder \(data.folder) ends before entry \(data.stream)") }
            skipped += Int64(got)
            onProgress?()
            if skipped > limits.maxComicBytes {
                throw .limitExceeded(path: path, detail: "more than \(ByteCountText.format(limits.maxComicBytes)) decoded to reach one page")
            }
        }
        return folder
    }

    private func dropFolder() {
        folder = nil
        nextStream = 0
    }
}
