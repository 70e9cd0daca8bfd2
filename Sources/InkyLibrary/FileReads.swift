import Foundation
import InkyCore
import InkyTree
import InkyWorker

/// Opening and reading: pass-through files through a real descriptor, ERROR.txt and
/// ComicInfo.xml from the comic's state, pages through the window cache (`PageFetching`).
extension LibraryFilesystem {
    /// Opens `node` for `caller`: a page a reader opens after someone whose reads did not count
    /// read it is not served from what the kernel kept of that read (`wantsFreshRead`).
    public func open(_ node: Node, caller: Caller) -> Result<OpenedFile, Errno> {
        let opened = open(node)
        guard case .success(var file) = opened, case .page(let comic, let generation, let index) = node,
              wantsFreshRead(PageCache.Key(comic: comic, generation: generation, index: index), caller: caller) else {
            return opened
        }
        file.keepCache = false
        return .success(file)
    }

    /// Opens `node` for this process (a view's file, a test).
    public func open(_ node: Node) -> Result<OpenedFile, Errno> {
        guard node.isVault else { return openUncounted(node) }
        vault.opened()
        // A vault's plaintext never stays in the kernel's page cache past the read that asked.
        return openUncounted(node).map { file in
            var file = file
            file.directIO = true
            return file
        }
    }

    private func openUncounted(_ node: Node) -> Result<OpenedFile, Errno> {
        switch node {
        case .file(let path):
            // Relative to the root, never through a link: a file swapped for one since it was
            // looked up is refused (ELOOP), not followed.
            return root.openFile(path).map { OpenedFile(keepCache: false, descriptor: $0) }
        case .page(let comic, let generation, _), .comicInfo(let comic, let generation), .errorText(let comic, let generation):
            let opened = sameGeneration(comic, generation).map { _ in OpenedFile(keepCache: true, descriptor: nil) }
            if case .failure = opened, comic.isVault { vault.closed() }
            return opened
        case .comicFile(let comic, let generation):
            // Laid out (its CRC-32s computed if not known yet) before the first read: what a
            // CBZ's first read costs is paid here, once per comic.
            return cbzLayout(comic, generation: generation).map { _ in OpenedFile(keepCache: true, descriptor: nil) }
        case .folderCover, .folderDesktop, .comicDesktop, .vaultFolderCover, .vaultFolderDesktop:
            // A series folder's first comic may change under the same name: never kept.
            let opened = coverFileBytes(node).map { _ in OpenedFile(keepCache: false, descriptor: nil) }
            if case .failure = opened, node.isVault { vault.closed() }
            return opened
        case .folder, .comic, .vaultFolder:
            return .failure(.EISDIR)
        case .link:
            return .failure(.ELOOP)
        }
    }

    /// Reads `size` bytes at `offset` for `caller` (whose page reads may count as reading:
    /// `noteRead`). Calls `completion` at once on a cache hit (on the caller's thread), later
    /// from the comic's fetch queue on a miss.
    public func read(_ node: Node, offset: Int64, size: Int, descriptor: Int32?, caller: Caller = .thisProcess,
                     completion: @escaping @Sendable (Result<ArraySlice<UInt8>, Errno>) -> Void) {
        touchVault(node)
        switch node {
        case .file:
            guard let descriptor else { return completion(.failure(.EBADF)) }
            var buffer = [UInt8](repeating: 0, count: size)
            let got = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress!, size, off_t(offset)) }
            completion(got < 0 ? .failure(Errno.current) : .success(buffer[0..<got]))
        case .errorText(let comic, let generation):
            completion(sameGeneration(comic, generation).map { snapshot in
                Self.slice(Array((Self.errorText(snapshot.listing, path: realPath(comic)) ?? "").utf8), offset, size)
            })
        case .comicInfo(let comic, let generation):
            completion(comicInfoBytes(comic, generation).map { Self.slice($0, offset, size) })
        case .page(let comic, let generation, let index):
            let key = PageCache.Key(comic: comic, generation: generation, index: index)
            let byReader = !comic.isVault && isReader(caller)
            readPage(comic, generation: generation, index: index) { [self] result in
                let slice = result.map { Self.slice($0, offset, size) }
                // Before the reply: `Continue Reading/` listed next shows this read.
                if case .success(let bytes) = result, case .success(let served) = slice {
                    noteRead(key, offset: offset, served: served.count, length: bytes.count, byReader: byReader)
                }
                completion(slice)
            }
        case .comicFile(let comic, let generation):
            readCBZ(comic, generation: generation, offset: offset, size: size, completion: completion)
        case .folderCover, .folderDesktop, .comicDesktop, .vaultFolderCover, .vaultFolderDesktop:
            completion(coverFileBytes(node).map { Self.slice($0, offset, size) })
        case .folder, .comic, .vaultFolder, .link:
            completion(.failure(.EISDIR))
        }
    }

    /// A file opened with `open` was closed.
    public func release(_ node: Node) {
        guard node.isVault else { return }
        vault.closed(touching: true)
    }

    /// The target of a link in the library (`LibraryLinks`).
    public func readLink(_ node: Node) -> Result<String, Errno> {
        guard case .link(let path) = node else { return .failure(.EINVAL) }
        return libraryLinkTarget(path)
    }

    public func extendedAttributes(of node: Node) -> [String: [UInt8]] {
        guard let comic = node.comic else { return [:] }
        var attributes = ["user.inkyfs.archive": Array(realPath(comic).utf8)]
        if case .page(_, let generation, let index) = node, case .success(let snapshot) = sameGeneration(comic, generation),
           case .success(let listing) = snapshot.listing, index < listing.pages.count {
            attributes["user.inkyfs.source"] = Array(listing.pages[index].sourcePath.utf8)
        }
        return attributes
    }

    func comicInfoBytes(_ comic: ComicRef, _ generation: Int) -> Result<[UInt8], Errno> {
        sameGeneration(comic, generation).flatMap { snapshot -> Result<[UInt8], Errno> in
            guard let state = comicState(comic) else { return .failure(.ESTALE) }
            if let bytes = state.comicInfo { return .success(bytes) }
            do throws(ComicError) {
                guard let bytes = try backend.comicInfo(source(of: state), identity: snapshot.identity, limits: options.limits) else {
                    return .failure(.ENOENT)
                }
                state.comicInfo = bytes
                return .success(bytes)
            } catch {
                logger(.error("ComicInfo.xml failed: \(loggable(error, of: comic))"))
                return .failure(error.errno)
            }
        }
    }

    static func slice(_ bytes: [UInt8], _ offset: Int64, _ size: Int) -> ArraySlice<UInt8> {
        guard offset < Int64(bytes.count), offset >= 0 else { return [] }
        let start = Int(offset)
        return bytes[start..<min(bytes.count, start + size)]
    }
}
