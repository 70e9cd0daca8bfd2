import Foundation
import InkyCore

/// Background listing of a folder's comics, several at once: `ls -l` (or a file manager) of a
/// fresh library looks up every comic of a folder one after another, and each lookup would
/// otherwise wait for its own archive to be opened in a worker while the other workers idle.
private let listingAheadQueue = DispatchQueue(label: "inkyfs.list-ahead", attributes: .concurrent)

/// The comics still to list, shared by the listing threads of one folder.
private final class ComicsToList: @unchecked Sendable {
    private let lock = NSLock()
    private var paths: [String]

    init(_ paths: [String]) { self.paths = paths.reversed() }

    func next() -> String? { lock.withLock { paths.popLast() } }
}

extension LibraryFilesystem {
    /// Starts listing the unlisted comics of folder `id` in the background, up to
    /// `options.listingParallelism` at a time, in name order; returns at once. A lookup that
    /// arrives meanwhile waits for that comic's listing (its listing lock) instead of repeating it.
    public func listComicsAhead(in id: NodeID) {
        guard options.listingParallelism > 1, case .folder(let path)? = nodes.node(id),
              case .success(let index) = folderIndex(path) else { return }
        let unlisted = index.names.compactMap { name -> String? in
            guard case .comic(let comic)? = index.nodes[name], comicState(comic)?.snapshot() == nil else { return nil }
            return comic
        }
        guard unlisted.count > 1 else { return }
        let work = ComicsToList(unlisted)
        for _ in 0..<min(options.listingParallelism, unlisted.count) {
            listingAheadQueue.async { [weak self] in
                while let comic = work.next() {
                    guard let self else { return }
                    _ = self.currentComic(comic)
                }
            }
        }
    }

    /// A mount of one comic file will be asked for that comic's pages first: list it now, while
    /// the mount is still being set up, instead of when the first `ls` arrives.
    public func listSingleComicAhead() {
        guard !isFolderLibrary else { return }
        listingAheadQueue.async { [weak self] in _ = self?.currentComic("") }
    }

    /// A directory entry's attributes when they cost no archive opening (pages, ComicInfo.xml,
    /// ERROR.txt of a listed comic), for readdirplus; nil for the rest, which the kernel then
    /// looks up by name as usual.
    public func attributesWithoutListing(of id: NodeID) -> NodeAttributes? {
        switch nodes.node(id) {
        case .page?, .comicInfo?, .errorText?:
            return try? attributes(of: id).get()
        default:
            return nil
        }
    }
}
