import Foundation
import InkyCore
import InkyStore

/// `inkyfs duplicates`: groups of a library's comics that are the same. Strongest first, and a
/// comic already grouped with another by a stronger kind is not grouped with it again:
/// - identical bytes (same size, same CRC-32, then compared byte for byte);
/// - the same pages in another container (a CBR and a CBZ of one scan): every page's SHA-256
///   the same, in the same reading order (`PageHashing`). Tags and other members may differ; the
///   same pages in another order, or one page more or less, are another comic;
/// - copies by name (`NAME (1).cbz` beside `NAME.cbz`: what a browser or a file manager makes);
/// - possibly the same issue: the same series, volume and number in their metadata (ComicInfo.xml,
///   CoMet, ComicBookInfo; not the file name alone, which says too little to call two files one).
public enum DuplicateFinder {
    public enum Kind: String, Sendable, Codable {
        case identical, samePages = "same-pages", copy, possible
    }

    public struct Group: Sendable, Equatable, Codable {
        public var kind: Kind
        /// Absolute paths; the one to keep first (`DuplicateKeeping`).
        public var comics: [String]
    }

    /// `pageHashes`: each comic's page hashes (`PageHashing`), for those that may hold the same
    /// pages as another; `keeping`: which comic of a group comes first.
    public static func find(_ comics: [String], metadata: [IndexedMetadata], pageHashes: [String: [UInt8]] = [:],
                            keeping: DuplicateKeeping) -> [Group] {
        let ordered = keeping.ordered
        var related = UnionFind(comics)
        var groups: [Group] = []
        func add(_ kind: Kind, _ members: [String]) {
            // One member per set of comics a stronger kind already joined.
            var seen: Set<String> = []
            let fresh = members.filter { seen.insert(related.root($0)).inserted }
            guard fresh.count > 1 else { return }
            for member in fresh.dropFirst() { related.join(fresh[0], member) }
            groups.append(Group(kind: kind, comics: fresh))
        }
        for members in identicalGroups(comics) { add(.identical, ordered(members)) }
        let byPages = Dictionary(grouping: comics.compactMap { path in pageHashes[path].map { (path, $0) } }, by: \.1)
        for members in byPages.values where members.count > 1 { add(.samePages, ordered(members.map(\.0))) }
        for members in copyGroups(comics) { add(.copy, ordered(members)) }
        let byIssue = Dictionary(grouping: metadata.filter { $0.metadata.source != .fileName }) { row -> String? in
            guard let series = row.metadata.series, let number = row.metadata.number else { return nil }
            return "\(series.lowercased())\u{0}\(row.metadata.volume.map(String.init) ?? "")\u{0}\(number.lowercased())"
        }
        let known = Set(comics)
        for (key, rows) in byIssue where key != nil {
            add(.possible, ordered(rows.map(\.file.path).filter(known.contains)))
        }
        return groups.sorted { ($0.kind.order, $0.comics[0]) < ($1.kind.order, $1.comics[0]) }
    }

    static func identicalGroups(_ comics: [String]) -> [[String]] {
        var bySize: [Int64: [String]] = [:]
        for path in comics {
            var info = stat()
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
            bySize[Int64(info.st_size), default: []].append(path)
        }
        var groups: [[String]] = []
        for candidates in bySize.values where candidates.count > 1 {
            let byChecksum = Dictionary(grouping: candidates) { checksum(of: $0) }
            for (crc, same) in byChecksum where crc != nil && same.count > 1 {
                // A CRC-32 can collide: the members are compared byte for byte with the first.
                var rest = same
                while let first = rest.first {
                    let equal = rest.filter { $0 == first || sameBytes(first, $0) }
                    if equal.count > 1 { groups.append(equal) }
                    rest.removeAll { equal.contains($0) }
                }
            }
        }
        return groups
    }

    /// `NAME (1).cbz`, `NAME (2).cbz`... beside `NAME.cbz` in the same folder.
    static func copyGroups(_ comics: [String]) -> [[String]] {
        let present = Set(comics)
        var groups: [String: [String]] = [:]
        for path in comics {
            let name = (path as NSString).lastPathComponent
            let stem = (name as NSString).deletingPathExtension, ext = (name as NSString).pathExtension
            guard stem.hasSuffix(")"), let open = stem.range(of: " (", options: .backwards),
                  let copy = Int(stem[open.upperBound..<stem.index(before: stem.endIndex)]), copy > 0 else { continue }
            let original = ((path as NSString).deletingLastPathComponent as NSString)
                .appendingPathComponent(String(stem[..<open.lowerBound]) + (ext.isEmpty ? "" : "." + ext))
            if present.contains(original) { groups[original, default: [original]].append(path) }
        }
        return groups.values.map { [$0[0]] + $0.dropFirst().sorted { NaturalOrder.areInIncreasingOrder($0, $1) } }
    }

    static func checksum(of path: String) -> UInt32? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        var crc: UInt32 = 0
        while let chunk = try? handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            crc = chunk.withUnsafeBytes { CRC32.checksum($0, continuing: crc) }
        }
        return crc
    }

    static func sameBytes(_ lhs: String, _ rhs: String) -> Bool {
        guard let left = FileHandle(forReadingAtPath: lhs), let right = FileHandle(forReadingAtPath: rhs) else { return false }
        defer {
            try? left.close()
            try? right.close()
        }
        while true {
            let a = (try? left.read(upToCount: 1 << 20)) ?? Data(), b = (try? right.read(upToCount: 1 << 20)) ?? Data()
            if a != b { return false }
            if a.isEmpty { return true }
        }
    }
}

extension DuplicateFinder.Kind {
    var order: Int {
        switch self {
        case .identical: 0
        case .samePages: 1
        case .copy: 2
        case .possible: 3
        }
    }
}

/// Which comics a stronger kind of duplicate already joined.
struct UnionFind {
    private var parent: [String: String] = [:]

    init(_ members: [String]) { for member in members { parent[member] = member } }

    mutating func root(_ member: String) -> String {
        var node = member
        while let up = parent[node], up != node { node = up }
        if parent[member] != nil { parent[member] = node }
        return node
    }

    mutating func join(_ lhs: String, _ rhs: String) {
        var left = lhs, right = rhs
        while let up = parent[left], up != left { left = up }
        while let up = parent[right], up != right { right = up }
        if left != right { parent[right] = left }
    }
}
