import Foundation
import InkyCore
import Synchronization

/// The covers of the library's series folders: which comic of a folder gives its `folder.jpg`,
/// the disk cache covers are kept in between mounts (`CoverCache`), their making off the FUSE
/// threads (`BackgroundOnce`, the vault's covers too), and the bytes a `folder.jpg` serves.
///
/// It knows comics by library path and folders by their index, nothing of nodes or the kernel.
/// What it cannot know it is handed at each call: a comic's identity (one `stat`, the library's
/// look at its file) and the making of a comic's cover (the library's listing and worker). When a
/// folder listed with a `folder.jpg` turns out to have none, it tells what the library registered
/// with `whenNoCover` (which has the kernel forget the name), as the vault's `whenLocking` does.
final class FolderCovers: Sendable {
    /// Covers are at most this many pixels high.
    static let height = 600
    /// Comics of a folder tried for its cover before `folder.jpg` answers EIO.
    static let tries = 8

    /// Where covers are kept; nil when the mount shows none.
    let cache: CoverCache?
    /// One making at a time, once per folder in flight: a folder listed again while its cover is
    /// being made does not queue a second making of it.
    private let making = BackgroundOnce(label: "inkyfs.covers")
    private let noCoverHooks = Mutex<[@Sendable (_ folder: String) -> Void]>([])
    private let logger: LogSink

    init(cache: CoverCache?, log: @escaping LogSink) {
        self.cache = cache
        logger = log
    }

    /// Whether the mount shows covers (`folder.jpg`, `.directory`) at all.
    var areShown: Bool { cache != nil }

    /// Runs when the making of a folder's cover found that no comic of it gives one: the
    /// `folder.jpg` it was listed with is gone.
    func whenNoCover(_ hook: @escaping @Sendable (_ folder: String) -> Void) {
        noCoverHooks.withLock { $0.append(hook) }
    }

    /// The comics a folder's cover may come from, in reading order, with their cache keys: those
    /// whose cover has not failed this mount. Lazy: `identity` (a `stat`) runs for the first one
    /// alone as a rule; nil for a comic that is gone.
    func comics(_ index: FolderIndex, identity: @escaping (String) -> FileIdentity?) -> some Sequence<(comic: String, key: String)> {
        let cache = cache
        return index.nodes.compactMap { node -> (comic: String, key: String)? in
            guard let cache, case .comic(.library(let path)) = node, let identity = identity(path) else { return nil }
            let key = CoverCache.key(path: path, identity: identity)
            return cache.hasFailed(key) ? nil : (path, key)
        }.prefix(Self.tries)
    }

    /// The comic the folder's cover comes from now, nil when none may give one.
    func comic(_ index: FolderIndex, identity: @escaping (String) -> FileIdentity?) -> (comic: String, key: String)? {
        comics(index, identity: identity).first { _ in true }
    }

    /// Makes the folder's cover in the background unless the cache holds the cover of `first`
    /// (the comic it comes from now). `make` makes it; false when no comic of the folder gives
    /// one, and `whenNoCover` hears of it.
    func queue(folder: String, first: (comic: String, key: String), make: @escaping @Sendable () -> Bool) {
        guard let cache, !cache.contains(first.key) else { return }
        making.schedule(folder) { [self] in
            guard !make() else { return }
            for hook in noCoverHooks.withLock({ $0 }) { hook(folder) }
        }
    }

    /// Runs `work` in the background, once per `key` in flight, behind the covers being made.
    func inBackground(_ key: String, _ work: @escaping @Sendable () -> Void) {
        making.schedule(key, work)
    }

    /// The folder's cover: from the cache, else made now from its first comic that gives one
    /// (`make`: a comic's cover made again, the library's).
    func cover(_ index: FolderIndex, identity: @escaping (String) -> FileIdentity?,
               make: (String) -> Result<[UInt8], Errno>) -> [UInt8]? {
        guard let cache else { return nil }
        for (comic, key) in comics(index, identity: identity) {
            if let bytes = cache.cover(key), bytes.count <= CoverSize.bytes { return bytes }
            if case .success(let bytes) = make(comic) { return bytes }
        }
        return nil
    }

    /// `folder.jpg`'s bytes: the cover, `CoverSize.bytes` long as it was listed (its attributes
    /// never wait for it). EIO when no comic of the folder gives one.
    func folderFile(_ index: FolderIndex, identity: @escaping (String) -> FileIdentity?,
                    make: (String) -> Result<[UInt8], Errno>) -> Result<[UInt8], Errno> {
        guard let bytes = cover(index, identity: identity, make: make), let padded = PaddedImage.padded(bytes, to: CoverSize.bytes) else {
            return .failure(.EIO)
        }
        return .success(padded)
    }

    /// The cover of the library comic `comic` at `identity`: from the cache, else made by `make`
    /// (a worker, off the FUSE threads) and kept. `remaking`: one in the cache larger than
    /// `CoverSize.bytes` (made before covers had a size) is made again. ENOENT without covers.
    func cover(of comic: String, identity: FileIdentity, remaking: Bool,
               make: () throws(ComicError) -> [UInt8]) -> Result<[UInt8], Errno> {
        guard let cache else { return .failure(.ENOENT) }
        let key = CoverCache.key(path: comic, identity: identity)
        if let bytes = cache.cover(key), !remaking || bytes.count <= CoverSize.bytes { return .success(bytes) }
        if cache.hasFailed(key) { return .failure(.EIO) }
        do throws(ComicError) {
            let bytes = try make()
            // One larger than its listed size (a worker of another build) cannot be served.
            guard bytes.count <= CoverSize.bytes else {
                cache.markFailed(key)
                return .failure(.EIO)
            }
            cache.store(key, bytes)
            // One the cache cannot hold (over its cap) would be made again at every listing.
            if !cache.contains(key) { cache.markFailed(key) }
            return .success(bytes)
        } catch {
            // Not tried again this mount: a page that does not decode will not decode at the next listing.
            if case .io = error {} else { cache.markFailed(key) }
            // A library comic: its path and the error's details may be logged (never a vault's).
            logger(.error("cover failed: \(error.message)"))
            return .failure(error.errno)
        }
    }

    /// The first comic of a folder in its listing's order (the reading order), nil when it holds none.
    static func firstComic(_ index: FolderIndex) -> String? {
        for node in index.nodes { if case .comic(.library(let path)) = node { return path } }
        return nil
    }

    /// The picture the library itself has for a folder, which passes through unchanged.
    static func ownPicture(_ index: FolderIndex) -> String? {
        ["folder.jpg", "cover.jpg"].first { name in
            if case .file? = index[name] { true } else { false }
        }
    }

    /// `.directory` of a series folder or comic directory: Dolphin shows `Icon=` as its picture.
    static func desktopEntry(icon: String) -> [UInt8] { Array("[Desktop Entry]\nIcon=./\(icon)\n".utf8) }
}
