import Foundation
import InkyCore
import InkyStore
import Synchronization

/// The library as a front end other than the mount reaches it (the HTTP server): folders by
/// their path in the library, comics by `ComicRef`, pages by index. No node number, no FUSE: the
/// same index, page cache, covers and reading state as a mount's, through the same
/// `LibraryFilesystem`. Library comics only: a vault comic is never reached through here
/// (ENOENT), and every path is checked against the folder listings the mount would show, so
/// `..`, a link, a hidden or a non-comic file is no comic.
///
/// Most calls block (a comic not listed yet is listed by a worker; a cover is made by one):
/// call them off an event loop.
public final class LibraryReader: Sendable {
    let library: LibraryFilesystem
    /// The metadata views' source (`By Series/`, ...); nil without a state database.
    let catalog: MetadataCatalog?
    let readingLists: ReadingListSource?
    /// Each view's root as last made, with the catalog's stamp and the lists' generation it was made at.
    let roots = Mutex<[MetadataViewKind: (stamp: Int64, lists: Int, root: MetadataViewRoot)]>([:])

    public init(library: LibraryFilesystem) {
        self.library = library
        if let state = library.state {
            catalog = MetadataCatalog(state: state, libraryPath: library.libraryPath)
            readingLists = library.readingListSource()
        } else {
            (catalog, readingLists) = (nil, nil)
        }
    }

    public var libraryPath: String { library.libraryPath }

    /// One thing a folder shows: a folder or a comic, under the name the mount gives it.
    public enum Entry: Sendable, Equatable {
        case folder(name: String, path: String)
        case comic(name: String, comic: ComicRef)

        public var name: String {
            switch self {
            case .folder(let name, _), .comic(let name, _): name
            }
        }
    }

    /// A library folder's sub-folders and comics (files and links left out), in natural order.
    /// ENOENT for a path that is no folder the library shows.
    public func folder(_ path: String) -> Result<[Entry], Errno> {
        guard Self.isPlainPath(path, allowEmpty: true) else { return .failure(.ENOENT) }
        if !path.isEmpty {
            let parent = FolderIndex.folder(holding: path)
            guard case .success(let index) = library.folderIndex(parent), index.contains(.folder(path)),
                  !holdsOnlyImages(path) else {
                return .failure(.ENOENT)
            }
        }
        return library.folderIndex(path).map { index in
            let entries: [Entry] = index.entries.compactMap { name, node in
                switch node {
                // A folder of loose images is a comic, as `--as cbz` serves it.
                case .folder(let folder) where holdsOnlyImages(folder): .comic(name: name, comic: .library(folder))
                case .folder(let folder): .folder(name: name, path: folder)
                case .comic(let comic): .comic(name: name, comic: comic)
                default: nil
                }
            }
            return entries.sorted { NaturalOrder.areInIncreasingOrder($0.name, $1.name) }
        }
    }

    /// The comic at `path` (relative to the library) when its folder shows one there (a comic
    /// file, or a folder of loose images).
    public func comic(at path: String) -> ComicRef? {
        guard Self.isPlainPath(path, allowEmpty: false),
              case .success(let index) = library.folderIndex(FolderIndex.folder(holding: path)) else { return nil }
        let shown = index.contains(.comic(.library(path))) || (index.contains(.folder(path)) && holdsOnlyImages(path))
        return shown ? .library(path) : nil
    }

    /// `FolderIndex.isImageFolder`'s rule (at least one image, nothing but images and no link,
    /// hidden names aside) read off the folder's own index, which is kept while the folder does
    /// not change: a folder of 500 series is not read again, series by series, at each listing.
    func holdsOnlyImages(_ path: String) -> Bool {
        guard case .success(let index) = library.folderIndex(path) else { return false }
        var images = 0
        for node in index.nodes {
            let entry: String
            switch node {
            case .file(let found), .folder(let found), .link(let found), .comic(.library(let found)): entry = found
            default: return false
            }
            let name = entry.split(separator: "/").last.map(String.init) ?? ""
            if name.hasPrefix(".") { continue }
            guard case .file = node, PageFilter.imageExtensions.contains(EntryPath.lowercasedExtension(of: name)) else { return false }
            images += 1
        }
        return images > 0
    }

    /// Components that are names, never "", "." or "..": what a folder listing can hold.
    static func isPlainPath(_ path: String, allowEmpty: Bool) -> Bool {
        if path.isEmpty { return allowEmpty }
        return !path.utf8.contains(0) && path.split(separator: "/", omittingEmptySubsequences: false)
            .allSatisfy { !$0.isEmpty && $0 != "." && $0 != ".." }
    }

    /// A comic as a catalog shows it: its name, file, pages, metadata, or why it cannot be read.
    public struct Description: Sendable {
        public var comic: ComicRef
        /// Relative to the library.
        public var path: String
        /// The name the mount's folder gives it (the file's without its extension).
        public var name: String
        public var identity: FileIdentity
        public var format: ArchiveFormat?
        /// The pages' names in reading order, as the mount lists them (`001.jpg`, ...).
        public var pages: [String]
        public var metadata: ComicMetadata?
        /// Why the comic cannot be read (its pages are then empty); nil for a readable one.
        public var problem: String?
        /// The size of its CBZ when known without reading a page (nil: `cbzSize` tells).
        public var knownCBZSize: Int64?
    }

    /// Lists the comic if it is not listed yet (from the index, else by a worker).
    public func describe(_ comic: ComicRef) -> Result<Description, Errno> {
        guard case .library(let path) = comic else { return .failure(.ENOENT) }
        return library.currentComic(comic).map { _, snapshot in
            let name = String((library.displayPath(of: path) ?? path).split(separator: "/").last ?? "")
            var description = Description(comic: comic, path: path, name: name, identity: snapshot.identity, format: nil,
                                          pages: [], metadata: nil, problem: nil, knownCBZSize: nil)
            switch snapshot.listing {
            case .success(let listing) where listing.pages.isEmpty:
                description.problem = ComicError.noPages(path: path).message
            case .success(let listing):
                description.format = listing.format
                description.pages = listing.pages.map(\.name)
                // The index's row is what the views show (a listing read back from the index has none).
                description.metadata = library.libraryFile(comic).flatMap { library.state?.indexedMetadata($0)?.metadata } ?? listing.metadata
                if listing.pages.allSatisfy(\.isSizeKnown) {
                    description.knownCBZSize = StoredZipLayout.size(of: LibraryFilesystem.members(of: listing))
                }
            case .failure(let error):
                description.problem = error.relabeled(path).message
            }
            return description
        }
    }

    /// The exact size of the comic's CBZ (the one `--as cbz` serves): rendering the pages whose
    /// size only a render tells, and laying out the ZIP with every CRC-32, once per comic.
    public func cbzSize(_ comic: ComicRef) -> Result<Int64, Errno> {
        guard !comic.isVault else { return .failure(.ENOENT) }
        return library.currentComic(comic).flatMap { _, snapshot in
            library.cbzLayout(comic, generation: snapshot.generation).map { layout, _ in layout.totalSize }
        }
    }

    /// `size` bytes of the comic's CBZ from `offset`; not recorded as reading (a download reads
    /// every page). ESTALE when the comic changed since `identity` was described.
    public func readCBZ(_ comic: ComicRef, identity: FileIdentity, offset: Int64, size: Int,
                        completion: @escaping @Sendable (Result<ArraySlice<UInt8>, Errno>) -> Void) {
        guard !comic.isVault else { return completion(.failure(.ENOENT)) }
        switch library.currentComic(comic) {
        case .success(let (_, snapshot)) where snapshot.identity == identity:
            library.readCBZ(comic, generation: snapshot.generation, offset: offset, size: size, completion: completion)
        case .success: completion(.failure(.ESTALE))
        case .failure(let code): completion(.failure(code))
        }
    }

    /// Waits for reads recorded and listings stored, so what a client just did shows in the
    /// reading state (and in a mount of the same library).
    public func finishStateWrites() { library.finishStateWrites() }
}
