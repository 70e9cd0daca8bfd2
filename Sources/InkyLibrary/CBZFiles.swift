import Foundation
import InkyCore
import InkyTree
import Synchronization

/// Names of comics served as CBZ files (`--as cbz`).
enum CBZFiles {
    /// After a comic's folder-view name: `Batman 001` → `Batman 001.cbz`.
    static let suffix = ".cbz"
    /// After the CBZ's name for a comic that cannot be read: a text file no reader takes for a comic.
    static let errorSuffix = ".error.txt"
    /// The ComicInfo.xml member of the synthesized CBZ, where comic readers look for it.
    static let comicInfoName = "ComicInfo.xml"
}

/// The library with every comic as one CBZ file (`--as cbz`): the folder view's pages, stored
/// (uncompressed) in a ZIP laid out by `StoredZipLayout`, built on the fly. Every comic is
/// rebuilt, CBZ included, so a client only ever sees safe names and the pages. Its size comes
/// from the listing (`stat` reads no page); its bytes are headers made in memory and page
/// ranges read through the window cache, like the folder view's pages. A comic that cannot be
/// read is a short text file saying why.
extension LibraryFilesystem {
    /// What a comic of a folder shows as, under `name` (its CBZ name): the CBZ, or the error text.
    func cbzChild(_ comic: ComicRef, name: String) -> (name: String, node: Node, snapshot: ComicState.Snapshot)? {
        guard case .success(let (_, snapshot)) = currentComic(comic) else { return nil }
        if Self.errorText(snapshot.listing, path: realPath(comic)) != nil {
            return (name + CBZFiles.errorSuffix, .errorText(comic: comic, generation: snapshot.generation), snapshot)
        }
        return (name, .comicFile(comic: comic, generation: snapshot.generation), snapshot)
    }

    /// A comic's entry in its folder's listing, with its attributes when the listing tells them
    /// (a PDF page whose size only a render tells leaves them to the lookup). Each comic not
    /// listed yet is listed here (from the index when it knows it): the name depends on whether
    /// the comic can be read. An error text's name taken by a library file is left to the file.
    func cbzEntry(_ comic: ComicRef, name: String, shadowed names: FolderIndex) -> (DirectoryEntry, Node)? {
        guard let shown = cbzChild(comic, name: name), shown.name == name || names[shown.name] == nil else { return nil }
        var attributes: NodeAttributes?
        switch (shown.node, shown.snapshot.listing) {
        case (.comicFile, .success(let listing)) where listing.pages.allSatisfy(\.isSizeKnown):
            attributes = fileAttributes(comic, size: StoredZipLayout.size(of: Self.members(of: listing)), shown.snapshot)
        case (.errorText, let listing):
            attributes = Self.errorText(listing, path: realPath(comic)).map { fileAttributes(comic, size: Int64($0.utf8.count), shown.snapshot) }
        default:
            attributes = nil
        }
        return (DirectoryEntry(name: shown.name, id: 0, kind: .regularFile, attributes: attributes), shown.node)
    }

    /// A name of a library folder in cbz mode: a comic's CBZ or error text; nil for other names.
    func cbzLookup(_ index: FolderIndex, name: String) -> Result<Node, Errno>? {
        let comic: ComicRef
        if let child = index[name] {
            guard case .comic(let found) = child else { return nil }
            comic = found
        } else if name.hasSuffix(CBZFiles.errorSuffix), case .comic(let found)? = index[String(name.dropLast(CBZFiles.errorSuffix.count))] {
            comic = found
        } else {
            return nil
        }
        guard let shown = cbzChild(comic, name: name.hasSuffix(CBZFiles.errorSuffix) ? String(name.dropLast(CBZFiles.errorSuffix.count)) : name),
              shown.name == name else { return .failure(.ENOENT) }
        return .success(shown.node)
    }

    /// The CBZ's exact size: from the listing when every page's size is known, else after
    /// rendering the pages whose size only a render tells (their CRC-32s come with it).
    func cbzSize(_ comic: ComicRef, _ snapshot: ComicState.Snapshot) -> Result<Int64, Errno> {
        guard case .success(let listing) = snapshot.listing else { return .failure(.ENOENT) }
        if listing.pages.allSatisfy(\.isSizeKnown) { return .success(StoredZipLayout.size(of: Self.members(of: listing))) }
        guard let state = comicState(comic) else { return .failure(.ESTALE) }
        return checksummedListing(state, snapshot).map { StoredZipLayout.size(of: Self.members(of: $0)) }
    }

    /// The CBZ laid out with every CRC-32, computing those not known yet (once per comic: they
    /// are kept in the listing and the index).
    func cbzLayout(_ comic: ComicRef, generation: Int) -> Result<(StoredZipLayout, ComicState), Errno> {
        guard case .success(let (state, snapshot)) = currentComic(comic), snapshot.generation == generation else { return .failure(.ESTALE) }
        if let layout = state.zipLayout(generation: generation, make: { nil }) { return .success((layout, state)) }
        return checksummedListing(state, snapshot).flatMap { listing in
            var members = Self.members(of: listing)
            if let info = members.indices.last, members[info].name == CBZFiles.comicInfoName {
                switch comicInfoBytes(comic, generation) {
                case .success(let bytes) where Int64(bytes.count) == members[info].size: members[info].crc32 = CRC32.checksum(bytes)
                case .success: return .failure(.EIO)
                case .failure(let code): return .failure(code)
                }
            }
            let modified = snapshot.identity.modifiedNanoseconds / 1_000_000_000
            guard let layout = state.zipLayout(generation: generation, make: { StoredZipLayout(members: members, modified: modified) }) else {
                return .failure(.ESTALE)
            }
            return .success((layout, state))
        }
    }

    /// Reads a range of a comic's CBZ: header bytes from the layout, page bytes through the
    /// window cache (not recorded as reading: a client copying the file reads every page).
    func readCBZ(_ comic: ComicRef, generation: Int, offset: Int64, size: Int,
                 completion: @escaping @Sendable (Result<ArraySlice<UInt8>, Errno>) -> Void) {
        let layout: StoredZipLayout
        switch cbzLayout(comic, generation: generation) {
        case .success(let (value, _)): layout = value
        case .failure(let code): return completion(.failure(code))
        }
        let pieces = layout.pieces(offset: offset, length: size)
        let gathered = GatheredRead(count: pieces.count, completion: completion)
        let pageCount = layout.members.count - (layout.members.last?.name == CBZFiles.comicInfoName ? 1 : 0)
        for (slot, piece) in pieces.enumerated() {
            switch piece {
            case .bytes(let bytes):
                gathered.fill(slot, .success(bytes[...]))
            case .member(let index, let range) where index < pageCount:
                let expected = layout.members[index].size
                readPage(comic, generation: generation, index: index, forReader: false) { result in
                    gathered.fill(slot, result.flatMap { bytes in
                        // A page that is not the size laid out would shift every offset after it.
                        Int64(bytes.count) == expected ? .success(bytes[Int(range.lowerBound)..<Int(range.upperBound)]) : .failure(.EIO)
                    })
                }
            case .member(_, let range):
                gathered.fill(slot, comicInfoBytes(comic, generation).flatMap { bytes in
                    Int64(bytes.count) >= range.upperBound ? .success(bytes[Int(range.lowerBound)..<Int(range.upperBound)]) : .failure(.EIO)
                })
            }
        }
    }

    /// The ZIP's members: the pages in reading order under their folder-view names, then
    /// ComicInfo.xml when the comic has one. CRC-32s not known yet are 0 (sizes need none).
    static func members(of listing: ComicListing) -> [StoredZipLayout.Member] {
        var members = listing.pages.map { StoredZipLayout.Member(name: $0.name, size: max(0, $0.size), crc32: $0.crc32 ?? 0) }
        if let info = listing.comicInfo, let size = info.declaredSize {
            members.append(StoredZipLayout.Member(name: CBZFiles.comicInfoName, size: size, crc32: 0))
        }
        return members
    }

    /// The listing with every page's size and CRC-32: pages missing either are read once, in
    /// stream order (a solid archive decodes once, not once per page), 8 at a time with the next
    /// 8 already asked for, through the window cache, and what is learned is kept in the comic's
    /// listing and the index, every batch, so an interrupted pass keeps its work.
    private func checksummedListing(_ state: ComicState, _ snapshot: ComicState.Snapshot) -> Result<ComicListing, Errno> {
        guard case .success(let first) = snapshot.listing else { return .failure(.ENOENT) }
        if first.isZipReady { return .success(first) }
        return state.checksumLock.withLock { _ in
            func current() -> ComicListing? {
                guard let fresh = state.snapshot(), fresh.generation == snapshot.generation, case .success(let listing) = fresh.listing else { return nil }
                return listing
            }
            guard let listing = current() else { return .failure(.ESTALE) }
            let missing = listing.pages.filter { $0.crc32 == nil || !$0.isSizeKnown }.sorted { $0.source < $1.source }
            let batches = stride(from: 0, to: missing.count, by: 8).map { Array(missing[$0..<min(missing.count, $0 + 8)]) }
            if let batch = batches.first { fetch(state, snapshot, listing, pages: batch.map(\.number), first: nil) }
            for (number, batch) in batches.enumerated() {
                if number + 1 < batches.count { fetch(state, snapshot, listing, pages: batches[number + 1].map(\.number), first: nil) }
                var crcs: [Int: UInt32] = [:]
                for page in batch {
                    let outcome = AwaitedResult<Result<[UInt8], ComicError>>()
                    let key = PageCache.Key(comic: state.comic, generation: snapshot.generation, index: page.number)
                    if !pages.cache.wait(for: key, { outcome.finish($0) }) {
                        // Evicted since it came: asked for again, alone.
                        fetch(state, snapshot, listing, pages: [page.number], first: { outcome.finish($0) })
                    }
                    switch outcome.wait() {
                    case .failure(let error):
                        logger(.error("cannot lay out the CBZ: \(loggable(error, of: state.comic))"))
                        keep([:], crcs: crcs, of: state, generation: snapshot.generation)
                        return .failure(error.errno)
                    case .success(let bytes):
                        if page.isSizeKnown, Int64(bytes.count) != page.size { return .failure(.EIO) }
                        crcs[page.number] = bytes.withUnsafeBytes { CRC32.checksum($0) }
                    }
                }
                keep([:], crcs: crcs, of: state, generation: snapshot.generation)
            }
            guard let done = current(), done.isZipReady else { return .failure(.ESTALE) }
            return .success(done)
        }
    }
}

/// The pieces of one read, filled in any order from any thread; the reply goes once all are in.
private final class GatheredRead: Sendable {
    private struct State {
        var slots: [ArraySlice<UInt8>?]
        var left: Int
        var failed = false
    }
    private let state: Mutex<State>
    private let completion: @Sendable (Result<ArraySlice<UInt8>, Errno>) -> Void

    init(count: Int, completion: @escaping @Sendable (Result<ArraySlice<UInt8>, Errno>) -> Void) {
        state = Mutex(State(slots: Array(repeating: nil, count: count), left: count))
        self.completion = completion
        if count == 0 { completion(.success([])) }
    }

    func fill(_ slot: Int, _ result: Result<ArraySlice<UInt8>, Errno>) {
        let finished: Result<ArraySlice<UInt8>, Errno>? = state.withLock { state in
            guard !state.failed else { return nil }
            switch result {
            case .failure(let code):
                state.failed = true
                return .failure(code)
            case .success(let bytes):
                state.slots[slot] = bytes
                state.left -= 1
                guard state.left == 0 else { return nil }
                if state.slots.count == 1 { return .success(state.slots[0]!) }
                var joined: [UInt8] = []
                joined.reserveCapacity(state.slots.reduce(0) { $0 + $1!.count })
                for part in state.slots { joined += part! }
                return .success(joined[...])
            }
        }
        if let finished { completion(finished) }
    }
}
