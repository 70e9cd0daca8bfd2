import Foundation
import InkyCore
import Synchronization

/// The ComicRack reading lists (`.cbl`) a mount shows in `Reading Lists/`: those in
/// `--reading-lists DIR` (walked for again at most every 10 s) and those in the library. A walk
/// of the library stats every entry (5 s of CPU at 100,000 comics), so it is walked again only
/// after the watcher saw a change that may be a list (`libraryChanged`), or, where the watcher
/// cannot see every change, at most every 10 s and 20 walks' time. A list is parsed by
/// `SafeXML` in the daemon: memory-safe Swift that expands nothing, unlike the archive parsers
/// that stay in workers.
public final class ReadingListSource: Sendable {
    /// A list found: its name (its file's, without `.cbl`) and what it says.
    public struct Found: Sendable, Equatable {
        public var name: String
        public var list: ReadingListFile
    }

    private let library: LibraryRoot
    private let directory: LibraryRoot?
    /// Whether the library watcher sees every change now (it may stop seeing them: watch limit).
    private let watcherSeesEverything: @Sendable () -> Bool
    private struct State {
        var found: [Found] = []
        var inLibrary: [(String, ReadingListFile)] = []
        var inDirectory: [(String, ReadingListFile)] = []
        var libraryWalk: (at: Date, seconds: Double)?
        var directoryWalk: Date?
        /// The watcher saw a change that may be a list since the library's last walk.
        var libraryChanged = true
        /// Whether the last walk found something other than the one before (the views then rebuild).
        var generation = 0
        /// Lists as parsed, by folder and path, kept while their file's identity holds: a walk
        /// of `--reading-lists` every 10 s parses only what changed (a 4 MB list is 0.15 s of CPU).
        var parsed: [String: (identity: FileIdentity, list: ReadingListFile)] = [:]
    }
    /// Held through a walk, so two callers never walk at once.
    private let state = Mutex(State())
    static let walkInterval: TimeInterval = 10
    /// Seconds between walks of `--reading-lists`: `walkInterval`, shorter in tests.
    private let directoryInterval: TimeInterval
    /// Lists read and parsed so far (the cache's hits are not counted).
    let parses = Atomic(0)
    /// A blind library's walks take at most this share of one core.
    static let walkShare = 20.0
    static let maxFileBytes = 4 << 20

    init(library: LibraryRoot, directory: String?, watcherSeesEverything: @escaping @Sendable () -> Bool = { false },
         directoryInterval: TimeInterval = walkInterval) {
        self.directoryInterval = directoryInterval
        self.library = library
        self.directory = directory.map(LibraryRoot.init(path:))
        self.watcherSeesEverything = watcherSeesEverything
    }

    /// The lists, walked for again when due; `generation` moves when they changed.
    public func current() -> (lists: [Found], generation: Int) {
        let watched = watcherSeesEverything()
        return state.withLock { state in
            let now = Date()
            var walked = false
            if state.directoryWalk.map({ now.timeIntervalSince($0) >= directoryInterval }) ?? true {
                state.directoryWalk = now
                state.inDirectory = lists(in: directory, parsed: &state.parsed)
                walked = true
            }
            let due = state.libraryWalk.map { last in
                watched ? state.libraryChanged
                        : now.timeIntervalSince(last.at) >= max(Self.walkInterval, last.seconds * Self.walkShare)
            } ?? true
            if due {
                state.libraryChanged = false
                state.inLibrary = lists(in: library, parsed: &state.parsed)
                state.libraryWalk = (now, Date().timeIntervalSince(now))
                walked = true
            }
            if walked {
                let named = Self.named(state.inDirectory + state.inLibrary)
                if named != state.found {
                    state.found = named
                    state.generation += 1
                }
            }
            return (state.found, state.generation)
        }
    }

    /// What the library watcher saw (nil: it lost track and everything may have changed). A
    /// list, a folder (which may hold lists) or something gone that was not a comic makes the
    /// next `current()` walk the library again; a comic added or changed does not.
    func libraryChanged(_ paths: [String]?) {
        let mayBeList = paths.map { paths in
            paths.contains { path in
                let name = FolderIndex.name(of: path)
                if name.lowercased().hasSuffix(".cbl") { return true }
                if case .success(let info) = library.status(path) { return info.st_mode & S_IFMT == S_IFDIR }
                return !ComicFileNames.looksLikeComic(name)
            }
        } ?? true
        if mayBeList { state.withLock { $0.libraryChanged = true } }
    }

    private func lists(in root: LibraryRoot?, parsed: inout [String: (identity: FileIdentity, list: ReadingListFile)])
        -> [(String, ReadingListFile)] {
        guard let root, root.isFolder else { return [] }
        var lists: [(String, ReadingListFile)] = []
        var seen: Set<String> = []
        root.walk { folder, entries in
            for entry in entries where entry.info.st_mode & S_IFMT == S_IFREG && entry.name.lowercased().hasSuffix(".cbl")
                && entry.info.st_size <= Self.maxFileBytes {
                let path = folder.isEmpty ? entry.name : folder + "/" + entry.name
                let key = root.path + "/" + path, identity = FileIdentity(entry.info)
                seen.insert(key)
                if let kept = parsed[key], kept.identity == identity {
                    lists.append((String(entry.name.dropLast(4)), kept.list))
                    continue
                }
                parsed[key] = nil
                parses.add(1, ordering: .relaxed)
                guard let bytes = Self.contents(root, path), let list = ReadingListFile.parse(bytes) else { continue }
                parsed[key] = (identity, list)
                lists.append((String(entry.name.dropLast(4)), list))
            }
            return nil
        }
        // Lists gone from this folder are forgotten; the other folder's are kept.
        parsed = parsed.filter { !$0.key.hasPrefix(root.path + "/") || seen.contains($0.key) }
        return lists.sorted { NaturalOrder.areInIncreasingOrder($0.0, $1.0) }
    }

    private static func contents(_ root: LibraryRoot, _ path: String) -> [UInt8]? {
        guard case .success(let descriptor) = root.openFile(path) else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while bytes.count <= maxFileBytes {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { return count == 0 ? bytes : nil }
            bytes += chunk[..<count]
        }
        return nil
    }

    /// Each list under its `<Name>` (else its file name), made a safe folder name, unique.
    static func named(_ lists: [(String, ReadingListFile)]) -> [Found] {
        var found: [Found] = []
        var taken: Set<String> = []
        for (fileName, list) in lists {
            guard let base = list.name.flatMap({ SafeName.make($0) }) ?? SafeName.make(fileName) else { continue }
            var name = base
            var copy = 2
            while taken.contains(name) {
                name = "\(base) (\(copy))"
                copy += 1
            }
            taken.insert(name)
            found.append(Found(name: name, list: list))
        }
        return found
    }
}

extension ReadingListFile.Book {
    /// The library comic this entry names: same series (case aside) and number, no other volume;
    /// of several, one of the same volume, then of the same year, then the first by path.
    func match(in bySeries: [String: [ComicRecord]]) -> ComicRecord? {
        let wanted = (number ?? "").lowercased()
        let candidates = (bySeries[series.lowercased()] ?? []).filter { record in
            (record.metadata.number ?? "").lowercased() == wanted
                && (volume == nil || record.metadata.volume == nil || record.metadata.volume == volume)
        }
        return candidates.min { lhs, rhs in
            let left = (lhs.metadata.volume == volume ? 0 : 1, lhs.metadata.year == year ? 0 : 1)
            let right = (rhs.metadata.volume == volume ? 0 : 1, rhs.metadata.year == year ? 0 : 1)
            return left != right ? left < right : NaturalOrder.areInIncreasingOrder(lhs.comic, rhs.comic)
        }
    }
}

extension LibraryFilesystem {
    /// The reading lists this library shows (the mount's `Reading Lists/`, a server's), walked
    /// again when the watcher saw a change that may be a list.
    public func readingListSource() -> ReadingListSource {
        let lists = ReadingListSource(library: root, directory: options.readingListsDirectory,
                                      watcherSeesEverything: { [weak self] in self?.watcherSeesEverything ?? false })
        changeListeners.add { lists.libraryChanged($0) }
        return lists
    }
}
