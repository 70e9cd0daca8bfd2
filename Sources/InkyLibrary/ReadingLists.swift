import Foundation
import InkyCore
import Synchronization

/// The ComicRack reading lists (`.cbl`) a mount shows in `Reading Lists/`: those in the library
/// (found by a walk that never follows a link, again at most every 10 s) and those in
/// `--reading-lists DIR`. A list is parsed by `SafeXML` in the daemon: memory-safe Swift that
/// expands nothing, unlike the archive parsers that stay in workers.
final class ReadingListSource: Sendable {
    struct Found: Sendable, Equatable {
        var name: String
        var list: ReadingListFile
    }

    private let library: LibraryRoot
    private let directory: LibraryRoot?
    private struct State {
        var found: [Found] = []
        var lastWalk: Date?
        /// Whether the last walk found something other than the one before (the views then rebuild).
        var generation = 0
    }
    /// Held through a walk, so two callers never walk at once.
    private let state = Mutex(State())
    static let walkInterval: TimeInterval = 10
    static let maxFileBytes = 4 << 20

    init(library: LibraryRoot, directory: String?) {
        self.library = library
        self.directory = directory.map(LibraryRoot.init(path:))
    }

    /// The lists, walked for again when the last walk is old; `generation` moves when they changed.
    func current() -> (lists: [Found], generation: Int) {
        state.withLock { state in
            if state.lastWalk.map({ Date().timeIntervalSince($0) >= Self.walkInterval }) ?? true {
                state.lastWalk = Date()
                let walked = Self.named(lists(in: directory) + lists(in: library))
                if walked != state.found {
                    state.found = walked
                    state.generation += 1
                }
            }
            return (state.found, state.generation)
        }
    }

    private func lists(in root: LibraryRoot?) -> [(String, ReadingListFile)] {
        guard let root, root.isFolder else { return [] }
        var lists: [(String, ReadingListFile)] = []
        root.walk { folder, entries in
            for entry in entries where entry.info.st_mode & S_IFMT == S_IFREG && entry.name.lowercased().hasSuffix(".cbl")
                && entry.info.st_size <= Self.maxFileBytes {
                let path = folder.isEmpty ? entry.name : folder + "/" + entry.name
                guard let bytes = Self.contents(root, path), let list = ReadingListFile.parse(bytes) else { continue }
                lists.append((String(entry.name.dropLast(4)), list))
            }
            return nil
        }
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
