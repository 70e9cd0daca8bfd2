import InkyCore

/// What KOReader's progress sync needs of the library (`DocumentDigesting`), for the server.
extension LibraryReader {
    /// The comic KOReader's digest names, with its page count; nil when none of this library.
    public func koreaderDocument(_ digest: String) -> KOReaderDocument? {
        library.document(forKOReaderDigest: digest)
    }

    /// Digests the CBZ served for `comic` (once per version of the comic), so KOReader finds it.
    public func digestServedCBZ(_ comic: ComicRef) {
        _ = library.koreaderCBZDigest(comic)
    }

    /// Digests every listed comic's own file that has no digest yet.
    @discardableResult
    public func digestLibraryFiles() -> Int { library.digestLibraryFiles() }
}
