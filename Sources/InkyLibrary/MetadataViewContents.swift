import Foundation
import InkyCore
import InkyStore

/// What a folder of `By Series/` or `Story Arcs/` is made of: the raw names in the index that
/// `SafeName` makes its name (several series or arcs may share one folder).
public enum MetadataFolderKeys: Sendable {
    case series([(series: String, volume: Int?)])
    case arcs([String])
}

/// A metadata view's root, asked of the index when the metadata moved. `By Series/` and `Story
/// Arcs/` keep only their folders' names (the links are read on demand, `folder(_:keys:)`), so
/// they grow with the series and arcs, not the comics; `By Publisher/` (links to series folders),
/// `Recently Added/` (100 links) and `Reading Lists/` (the lists' entries) are small and whole.
public struct MetadataViewRoot: Sendable {
    public var tree = LinkTree()
    public var keys: [String: MetadataFolderKeys] = [:]
    /// What each keyed folder's comics were when this root was made (`MetadataDigest`): a folder
    /// read once and no longer held is forgotten by the kernel only when its digest moved.
    public var digests: [String: Int64] = [:]

    /// A root with nothing in it (before the first is made).
    public init() {}
}

extension MetadataCatalog {
    /// The root of view `kind` as the index has it now (read with no lock a request takes).
    public func root(_ kind: MetadataViewKind, seriesViewName: String, readingLists: [ReadingListSource.Found]) -> MetadataViewRoot {
        var root = MetadataViewRoot()
        switch kind {
        case .series:
            var keys: [String: [(series: String, volume: Int?)]] = [:]
            let groups = state.metadataSeriesGroups(under: libraryPath)
            let folders = SeriesFolders(groups.map { ($0.series, $0.volume, $0.count) })
            for group in groups {
                guard let name = folders.name(series: group.series, volume: group.volume) else { continue }
                keys[name, default: []].append((group.series, group.volume))
                root.digests[name, default: 0] &+= group.digest
            }
            for name in keys.keys.sorted() {
                root.tree.addFolder(name, links: [])
                root.keys[name] = .series(keys[name]!)
            }
        case .arcs:
            var keys: [String: [String]] = [:]
            for arc in state.metadataArcNames(under: libraryPath) {
                guard let name = SafeName.make(arc.arc) else { continue }
                keys[name, default: []].append(arc.arc)
                root.digests[name, default: 0] &+= arc.digest
            }
            for name in keys.keys.sorted() {
                root.tree.addFolder(name, links: [])
                root.keys[name] = .arcs(keys[name]!)
            }
        case .publishers:
            // One record per (publisher, series, volume): all the builder reads of them. Which
            // folder a series goes to is By Series/'s, made of every comic, with a publisher or not.
            let folders = SeriesFolders(state.metadataSeriesGroups(under: libraryPath).map { ($0.series, $0.volume, $0.count) })
            let groups = state.metadataSeriesGroups(under: libraryPath, withPublisher: true).map { group in
                ComicRecord(id: 0, comic: "", modifiedNanoseconds: 0,
                            metadata: ComicMetadata(source: .comicInfo, series: group.series, volume: group.volume, publisher: group.publisher))
            }
            root.tree = LinkTreeBuilder.build(.publishers, from: groups, seriesViewName: seriesViewName, seriesFolders: folders)
        case .recent:
            let newest = state.newestMetadata(LinkTreeBuilder.recentCount, under: libraryPath).map { record($0) }
            root.tree = LinkTreeBuilder.build(.recent, from: newest, seriesViewName: seriesViewName)
        case .lists:
            // Only the series the lists name (case aside, Unicode's too, which SQL's NOCASE is not).
            let wanted = Set(readingLists.flatMap { $0.list.books.map { $0.series.lowercased() } })
            let keys = wanted.isEmpty ? [] : state.metadataSeriesGroups(under: libraryPath)
                .filter { wanted.contains($0.series.lowercased()) }.map { (series: $0.series, volume: $0.volume) }
            let records = state.indexedMetadata(series: keys, under: libraryPath).map { record($0) }
            root.tree = LinkTreeBuilder.build(.lists, from: records, seriesViewName: seriesViewName, readingLists: readingLists)
        }
        return root
    }

    /// A folder of `By Series/` or `Story Arcs/` with its links, read from the index.
    public func folder(_ name: String, keys: MetadataFolderKeys, seriesViewName: String) -> LinkTree.Folder? {
        switch keys {
        case .series(let pairs):
            // The root put these series and volumes in this folder (`SeriesFolders`).
            let records = state.indexedMetadata(series: pairs, under: libraryPath).map { record($0) }
            guard !records.isEmpty else { return nil }
            var tree = LinkTree()
            tree.addFolder(name, links: LinkTreeBuilder.seriesLinks(records))
            return tree.folder(named: name)
        case .arcs(let arcs):
            let records = state.indexedMetadata(arcs: arcs, under: libraryPath).map { record($0) }
            return LinkTreeBuilder.build(.arcs, from: records, seriesViewName: seriesViewName).folder(named: name)
        }
    }

    /// Where a comic's link leads, by the link's number (its metadata row id).
    public func comicTarget(local: UInt64) -> LinkTree.Target? {
        guard local >> LinkTree.kindShift == LinkTree.comicKind else { return nil }
        let id = Int64(local & (1 << LinkTree.kindShift - 1))
        return state.indexedMetadata(id: id, under: libraryPath).map { .comic(record($0).comic) }
    }
}
