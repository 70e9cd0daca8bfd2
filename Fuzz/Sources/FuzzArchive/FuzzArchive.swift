import InkyArchive
import InkyCore

/// Arbitrary bytes through what a worker runs for a comic: `ComicOpener.open(bytes:)` (the
/// very call a worker makes for a vault object, and the same readers it uses for library
/// files), the listing, every page streamed, and ComicInfo.xml, with the daemon's default
/// limits. `scripts/dev/fuzz` adds the worker's process limits (RSS, time per input).
///
/// Beyond "no crash": every page yields exactly its declared size or a `ComicError`, never
/// more than the per-page limit, and page names are safe to show in a directory. PDFs go to
/// MuPDF through the same bytes, as a vault PDF does.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzArchive(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    let bytes = MemoryBytes(UnsafeBufferPointer(start: data, count: size))
    let reader: any ComicReader
    do {
        reader = try ComicOpener.open(bytes: bytes, label: "fuzz", limits: .default)
    } catch {
        _ = error.message
        return 0
    }
    let pages = reader.listing.pages
    for page in pages {
        precondition(!page.name.contains("/") && !page.name.contains(".."), "unsafe page name \(page.name)")
        // A PDF page that is rendered has no size until it is (`sizeAfterRendering`).
        precondition(!page.isSizeKnown || (page.size > 0 && page.size <= ComicLimits.default.maxPageBytes), "page size \(page.size) passed the filter")
        read(page, from: reader)
    }
    // Backwards, as a reader paging back makes the worker do: the decoder restarts.
    for page in [pages.last, pages.first].compactMap({ $0 }) where pages.count > 1 {
        read(page, from: reader)
    }
    if let info = try? reader.readComicInfo() {
        precondition(Int64(info.count) <= ComicLimits.default.maxPageBytes, "ComicInfo.xml over the page limit")
    }
    return 0
}

private func read(_ page: Page, from reader: any ComicReader) {
    var produced: Int64 = 0
    _ = reader.cost(of: page)
    // A rendered page's bytes are bounded by the page limit instead of a declared size.
    let bound = page.isSizeKnown ? page.size : ComicLimits.default.maxPageBytes
    do {
        try reader.read(page) { chunk in produced += Int64(chunk.count) }
        precondition(page.isSizeKnown ? produced == page.size : produced <= bound, "page \(page.name): \(produced) bytes, declared \(page.size)")
    } catch {
        precondition(produced <= bound, "page \(page.name): \(produced) bytes before failing, declared \(page.size)")
    }
}

/// The input as a random-access byte source, the way a decrypted vault object is one.
final class MemoryBytes: RandomAccessBytes {
    private let bytes: UnsafeBufferPointer<UInt8>

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    var size: Int64 { Int64(bytes.count) }

    func read(at offset: Int64, into buffer: UnsafeMutableRawPointer, count: Int) throws(ComicError) -> Int {
        guard offset >= 0 else { throw .io(path: "fuzz", errno: 22, detail: "negative offset") }
        guard offset < size, count > 0 else { return 0 }
        let start = Int(offset), length = min(count, bytes.count - start)
        buffer.copyMemory(from: bytes.baseAddress! + start, byteCount: length)
        return length
    }
}
