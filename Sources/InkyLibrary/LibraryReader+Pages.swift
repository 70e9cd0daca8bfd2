import Foundation
import InkyCore
import InkyWorker
import Synchronization

/// Pages, covers and ComicInfo's summary for a front end, through the mount's own paths: the
/// window cache and its prefetch, the worker's page conversion, the cover cache, and reading
/// recorded under the mount's rules.
extension LibraryReader {
    /// Page formats every page-streaming client shows (OPDS-PSE names JPEG, PNG and GIF): a page
    /// in any other (WebP, AVIF, JPEG XL, ...) is converted to JPEG when `streamable` is asked.
    public static let streamableExtensions: Set<String> = ["jpg", "jpeg", "png", "gif"]

    /// A page as served: its bytes and the extension they have (`jpg`, `png`, ...).
    public struct PageImage: Sendable {
        public var bytes: [UInt8]
        public var fileExtension: String
    }

    /// Page `index` (0-based, in reading order) of a library comic. Served whole to a reader that
    /// asked for it, it is a page read through, and the mount's rule takes it from there
    /// (`ReadingRule`: recorded once two different pages of the comic were, within minutes).
    /// `fitWidth`: shrunk (never enlarged) to at most that many pixels wide and re-encoded by a
    /// worker, spreads kept whole; `streamable`: a page outside `streamableExtensions` becomes a
    /// JPEG. `recordsReading`: false for a page fetched ahead of the reader (a browser's preload).
    /// ERANGE for a page past the end, ENOENT for a comic without pages or a vault comic.
    public func page(_ comic: ComicRef, index: Int, fitWidth: Int? = nil, streamable: Bool = false, recordsReading: Bool = true,
                     completion: @escaping @Sendable (Result<PageImage, Errno>) -> Void) {
        guard !comic.isVault else { return completion(.failure(.ENOENT)) }
        let state: ComicState, snapshot: ComicState.Snapshot, listing: ComicListing
        switch library.currentComic(comic) {
        case .success(let (found, current)):
            guard case .success(let listed) = current.listing, !listed.pages.isEmpty else { return completion(.failure(.ENOENT)) }
            (state, snapshot, listing) = (found, current, listed)
        case .failure(let code): return completion(.failure(code))
        }
        guard index >= 0, index < listing.pages.count else { return completion(.failure(.ERANGE)) }
        let page = listing.pages[index]
        let name = page.name
        let ext = EntryPath.lowercasedExtension(of: name)
        var conversion = PageConversion(format: .jpeg, fitWidth: fitWidth.map { max(1, $0) })
        if fitWidth == nil && (!streamable || Self.streamableExtensions.contains(ext)) { conversion = .none }
        let library = self.library, pageCount = listing.pages.count
        // Before the reply: a catalog asked for next already shows the page read.
        let served: @Sendable (Result<[UInt8], Errno>, String) -> Void = { result, fileExtension in
            if recordsReading, case .success = result { library.pageReadThrough(index, of: pageCount, comic: state) }
            completion(result.map { PageImage(bytes: $0, fileExtension: fileExtension) })
        }
        guard let converted = conversion.convertedExtension(of: name) else {
            library.readPage(comic, generation: snapshot.generation, index: index, forReader: recordsReading) { served($0, ext) }
            return
        }
        if recordsReading { _ = state.moveTo(page: index) }
        var limits = library.options.limits
        limits.rendering = listing.rendering ?? limits.rendering
        limits.rendering.conversion = conversion
        let key = ConvertedPageCache.Key(comic, identity: snapshot.identity, index: index, rendering: limits.rendering)
        if let key, let bytes = library.options.pageCache?.page(key, size: nil) {
            return served(.success(bytes), converted)
        }
        let request = EntryRequest(source: page.source, size: Page.sizeAfterRendering, name: page.sourcePath)
        let converting = limits
        let backend = library.backend, path = state.realPath, identity = snapshot.identity, pages = library.options.pageCache
        let logger = library.logger
        // On the comic's strand: a solid archive's decoder serves one request at a time.
        library.pages.fetches.submit(strand: comic) {
            let outcome = Mutex<Result<[UInt8], ComicError>?>(nil)
            do throws(ComicError) {
                try backend.read(library.source(of: state), identity: identity, entries: [request], limits: converting) { _, result in
                    outcome.withLock { $0 = result }
                }
            } catch {
                outcome.withLock { $0 = $0 ?? .failure(error) }
            }
            let result = outcome.withLock { $0 } ?? .failure(.corrupted(path: path, detail: "the page was not delivered"))
            if case .success(let bytes) = result, let key { pages?.store(key, bytes) }
            if case .failure(let error) = result { logger(.error("converted page failed: \(error.message)")) }
            served(result.mapError(\.errno), converted)
        }
    }

    /// The comic's cover: a JPEG at most 600 pixels high, made from its first page by a worker
    /// once and kept in the cover cache (the mount's `folder.jpg` come from the same cache).
    /// ENOENT without a cover cache or for a comic without pages.
    public func cover(_ comic: ComicRef) -> Result<[UInt8], Errno> {
        guard case .library(let path) = comic else { return .failure(.ENOENT) }
        return library.makeCover(of: path)
    }

    /// ComicInfo.xml's `<Summary>`, cleaned to plain text; nil when the comic has none.
    public func summary(_ comic: ComicRef) -> String? {
        guard !comic.isVault, case .success(let (_, snapshot)) = library.currentComic(comic),
              case .success(let listing) = snapshot.listing, listing.comicInfo != nil,
              case .success(let bytes) = library.comicInfoBytes(comic, snapshot.generation),
              let root = SafeXML.parse(bytes), let text = root.child("Summary")?.text else { return nil }
        return MetadataText.clean(text, maxLength: 4_000)
    }
}
