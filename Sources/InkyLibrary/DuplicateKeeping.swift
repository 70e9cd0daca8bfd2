import Foundation
import InkyCore
import InkyStore

/// Which comic of a group of duplicates `inkyfs duplicates` keeps: it is listed first, and
/// `--move-to` moves the others. The best copy, in this order:
/// 1. tagged (ComicInfo.xml, CoMet.xml or ComicBookInfo) over known by its file name alone: the
///    tags are work someone did, and what the views and `serve` show;
/// 2. filed in its series' folder (a folder on its path in the library names its series, as
///    `Batman (2011)/` or `Batman v2/` name Batman) over loose (`Downloads/`, the library's top);
/// 3. more pages over fewer (a scan with its covers and ads over one without);
/// 4. the shortest file name (`Saga 001.cbz` over `Saga 001 (1).cbz`), then the oldest file,
///    then the path.
public struct DuplicateKeeping: Sendable {
    private let library: String
    private let metadata: [String: ComicMetadata]
    private let pageCount: @Sendable (String) -> Int?

    /// `library`: the folder the paths are under; `pageCount`: a comic's pages, nil if unknown
    /// (asked only of the comics in a group).
    public init(library: String, metadata: [IndexedMetadata], pageCount: @escaping @Sendable (String) -> Int?) {
        self.library = library
        self.metadata = Dictionary(metadata.map { ($0.file.path, $0.metadata) }, uniquingKeysWith: { first, _ in first })
        self.pageCount = pageCount
    }

    /// `paths`, the one to keep first.
    func ordered(_ paths: [String]) -> [String] {
        let keyed = paths.map { path -> (path: String, rank: [Int64]) in
            var info = stat()
            let mtime = lstat(path, &info) == 0 ? Int64(info.st_mtim.tv_sec) : .max
            let tags = metadata[path]
            let tagged: Int64 = tags.map { $0.source != .fileName } == true ? 0 : 1
            let filed: Int64 = isFiled(path, series: tags?.series) ? 0 : 1
            let pages = -Int64(pageCount(path) ?? 0)
            return (path, [tagged, filed, pages, Int64((path as NSString).lastPathComponent.count), mtime])
        }
        return keyed.sorted { $0.rank != $1.rank ? $0.rank.lexicographicallyPrecedes($1.rank) : $0.path < $1.path }.map(\.path)
    }

    /// Whether a folder between the library and the comic names the comic's series (case,
    /// accents, punctuation, a year or volume after it aside).
    func isFiled(_ path: String, series: String?) -> Bool {
        guard let series, path.hasPrefix(library + "/") else { return false }
        let wanted = SeriesFolders.normalized(series)
        let folders = String(path.dropFirst(library.count + 1)).split(separator: "/").dropLast()
        return folders.contains { folder in
            // Read as a file name would be ("Batman v2 (2016)": series Batman); ".cbz" so that a
            // dot in the folder's name is not taken for an extension's.
            let named = FileNameMetadata.parse(folder + ".cbz").series ?? String(folder)
            return SeriesFolders.normalized(named) == wanted || SeriesFolders.normalized(String(folder)) == wanted
        }
    }
}
