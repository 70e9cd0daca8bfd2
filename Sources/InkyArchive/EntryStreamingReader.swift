import InkyCore

/// A reader that can stream any entry by stream index with the page checks applied: pages and
/// ComicInfo.xml are then just two kinds of entry.
protocol EntryStreamingReader: ComicReader {
    var limits: ComicLimits { get }
    func stream(entryIndex: Int, name: String, size: Int64, into sink: (UnsafeRawBufferPointer) -> Void) throws(ComicError)
    func countProduced(_ bytes: Int64)
}

extension EntryStreamingReader {
    func read(_ page: Page, into sink: (UnsafeRawBufferPointer) -> Void) throws(ComicError) {
        try stream(entryIndex: page.entryIndex, name: page.sourcePath, size: page.size, into: sink)
        countProduced(page.size)
    }

    func readComicInfo() throws(ComicError) -> [UInt8]? { try readWhole(listing.comicInfo) }

    func readCoMet() throws(ComicError) -> [UInt8]? { try readWhole(listing.coMet) }

    func readWhole(_ entry: ArchiveEntry?) throws(ComicError) -> [UInt8]? {
        guard let entry, let size = entry.declaredSize, size <= limits.maxPageBytes else { return nil }
        var bytes: [UInt8] = []
        try stream(entryIndex: entry.index, name: entry.path, size: size) { bytes.append(contentsOf: $0) }
        return bytes
    }
}
