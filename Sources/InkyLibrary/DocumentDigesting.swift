import Foundation
import InkyCore
import InkyStore
import Synchronization

/// A comic as KOReader's sync protocol names it: found by a digest, with the page count its
/// page numbers are translated against (the CBZ's pages are the folder view's, in order).
public struct KOReaderDocument: Sendable, Equatable {
    public let comic: ComicRef
    public let file: LibraryFile
    public let pageCount: Int
}

/// The library's comics under KOReader's digests (`KOReaderDigest`): of each comic's own file,
/// made for every listed comic by a pass over the index (twelve 1 KiB reads a comic, once while
/// the file stays the same), and of the CBZ served for it, made the first time that CBZ is asked
/// for (laying a CBZ out may read every page of the comic; a KOReader that syncs a CBZ got it
/// from inkyfs, so it was asked for then).
///
/// The CBZ's digest names the CBZ's bytes, so they must not change while the comic does not:
/// the same listing always lays out the same members (folder-view names, sizes, CRC-32s, in
/// reading order), dated by the comic's mtime, aligned as `StoredZipLayout` aligns them. A
/// change to that layout changes every served comic's name to KOReader; the golden digest in
/// the tests (KOReaderDigestTests) is there to make such a change deliberate.
extension LibraryFilesystem {
    /// Digests the file of every comic listed in the index under this library that has no
    /// digest for its identity (a file changed since it was listed waits for its next listing).
    /// Returns how many were digested.
    @discardableResult
    public func digestLibraryFiles() -> Int {
        guard let state, isFolderLibrary else { return 0 }
        return digestPass.withLock { _ in
            var batch: [(file: LibraryFile, identity: FileIdentity, digest: String)] = []
            var count = 0
            for (file, identity) in state.comicsWithoutFileDigest(under: libraryPath) {
                guard let relative = root.relative(of: file.path), let digest = fileDigest(relative, identity: identity) else { continue }
                batch.append((file, identity, digest))
                count += 1
                if batch.count == 500 {
                    state.storeFileDigests(batch)
                    batch.removeAll()
                }
            }
            state.storeFileDigests(batch)
            return count
        }
    }

    /// KOReader's digest of a library file, if it is still exactly `identity`.
    private func fileDigest(_ relative: String, identity: FileIdentity) -> String? {
        guard case .success(let descriptor) = root.openFile(relative) else { return nil }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, FileIdentity(info) == identity else { return nil }
        return KOReaderDigest.digest(descriptor: descriptor, size: identity.size)
    }

    /// The comic a digest names, as it is now; nil when no comic of this library has it. A
    /// digest not known yet starts a digest pass first (at most one every `digestPassInterval`):
    /// comics listed since the last one are found then.
    public func document(forKOReaderDigest digest: String) -> KOReaderDocument? {
        if let found = knownDocument(digest) { return found }
        let due = lastDigestPass.withLock { last in
            guard Date().timeIntervalSince(last) >= Self.digestPassInterval else { return false }
            last = Date()
            return true
        }
        guard due else { return nil }
        digestLibraryFiles()
        return knownDocument(digest)
    }

    static let digestPassInterval: TimeInterval = 10

    private func knownDocument(_ digest: String) -> KOReaderDocument? {
        guard let state else { return nil }
        for (file, identity) in state.comics(withDigest: digest) {
            guard let relative = root.relative(of: file.path), case .success(let (_, snapshot)) = currentComic(.library(relative)),
                  snapshot.identity == identity, case .success(let listing) = snapshot.listing, !listing.pages.isEmpty else { continue }
            return KOReaderDocument(comic: .library(relative), file: file, pageCount: listing.pages.count)
        }
        return nil
    }

    /// KOReader's digest of the CBZ this comic is served as (`--as cbz`, an OPDS download), made
    /// once per version of the comic and kept, with the digest of its own file beside it.
    public func koreaderCBZDigest(_ comic: ComicRef) -> Result<String, Errno> {
        guard let file = libraryFile(comic), let path = comic.libraryPath else { return .failure(.ENOENT) }
        return currentComic(comic).flatMap { _, snapshot -> Result<String, Errno> in
            let known = state?.documentDigests(file, identity: snapshot.identity)
            if let cbz = known?.cbz { return .success(cbz) }
            if known?.file == nil, let digest = fileDigest(path, identity: snapshot.identity) {
                state?.storeFileDigests([(file, snapshot.identity, digest)])
            }
            return cbzLayout(comic, generation: snapshot.generation).flatMap { layout, _ -> Result<String, Errno> in
                var failure = Errno.EIO
                let digest = KOReaderDigest.digest(size: layout.totalSize) { offset, length in
                    let read = AwaitedResult<Result<ArraySlice<UInt8>, Errno>>()
                    readCBZ(comic, generation: snapshot.generation, offset: offset, size: length) { read.finish($0) }
                    switch read.wait() {
                    case .success(let bytes): return Array(bytes)
                    case .failure(let code): failure = code; return nil
                    }
                }
                guard let digest else { return .failure(failure) }
                state?.storeCBZDigest(file, identity: snapshot.identity, digest: digest)
                return .success(digest)
            }
        }
    }
}
