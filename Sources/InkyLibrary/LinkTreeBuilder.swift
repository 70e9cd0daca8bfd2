import Foundation
import InkyCore

/// Each metadata view's tree, made from every comic's record.
enum LinkTreeBuilder {
    /// Links in `Recently Added/`.
    static let recentCount = 100

    /// `seriesFolders`: where each series and volume goes in `By Series/` (`SeriesFolders`), when
    /// `records` are not all the comics it is made of (By Publisher/'s, one per group).
    static func build(_ kind: MetadataViewKind, from records: [ComicRecord], seriesViewName: String,
                      readingLists: [ReadingListSource.Found] = [], seriesFolders: SeriesFolders? = nil) -> LinkTree {
        var tree = LinkTree()
        switch kind {
        case .series:
            let folders = seriesFolders ?? SeriesFolders(records: records)
            var bySeries: [String: [ComicRecord]] = [:]
            for record in records {
                guard let folder = folders.name(series: record.metadata.series, volume: record.metadata.volume) else { continue }
                bySeries[folder, default: []].append(record)
            }
            for name in bySeries.keys.sorted() { tree.addFolder(name, links: seriesLinks(bySeries[name]!)) }
        case .publishers:
            let folders = seriesFolders ?? SeriesFolders(records: records)
            var byPublisher: [String: Set<String>] = [:]
            for record in records {
                guard let publisher = record.metadata.publisher.flatMap({ SafeName.make($0) }),
                      let series = folders.name(series: record.metadata.series, volume: record.metadata.volume) else { continue }
                byPublisher[publisher, default: []].insert(series)
            }
            for publisher in byPublisher.keys.sorted() {
                tree.addFolder(publisher, links: byPublisher[publisher]!.sorted().map { series in
                    (series, .viewFolder(seriesViewName + "/" + series), LinkTree.folderLinkLocal(series))
                })
            }
        case .arcs:
            var byArc: [String: [(record: ComicRecord, number: IssueNumber)]] = [:]
            for record in records {
                for arc in record.metadata.arcs {
                    guard let name = SafeName.make(arc.name) else { continue }
                    byArc[name, default: []].append((record, IssueNumber(arc.number ?? "")))
                }
            }
            for arc in byArc.keys.sorted() {
                tree.addFolder(arc, links: LinkTree.numbered(ordered(byArc[arc]!).map(\.record)))
            }
        case .recent:
            // Ties by path, keys made once: all 20,000 comics of a library copied at one mtime
            // come here, and a key made per comparison took seconds.
            let paths = NaturalOrder.sortKeys(for: records.map(\.comic))
            let newest = records.indices.sorted { left, right in
                let (lhs, rhs) = (records[left], records[right])
                return lhs.modifiedNanoseconds != rhs.modifiedNanoseconds ? lhs.modifiedNanoseconds > rhs.modifiedNanoseconds
                    : NaturalOrder.compare(paths[left], paths[right]) == .orderedAscending
            }
            tree.addRootLinks(LinkTree.numbered(newest.prefix(recentCount).map { records[$0] }))
        case .lists:
            let bySeries = Dictionary(grouping: records) { ($0.metadata.series ?? "").lowercased() }
            for found in readingLists {
                let width = max(3, String(found.list.books.count).count)
                var links: [(name: String, target: LinkTree.Target, local: UInt64)] = []
                var missing: [String] = []
                for (index, book) in found.list.books.enumerated() {
                    let position = String(index + 1)
                    let padded = String(repeating: "0", count: width - position.count) + position
                    guard let record = book.match(in: bySeries) else {
                        missing.append("\(padded) \(book.description)")
                        continue
                    }
                    links.append((padded + " " + record.label, .comic(record.comic), LinkTree.comicLocal(record.id)))
                }
                let note = missing.isEmpty ? [] : [(name: "MISSING.txt", bytes: Array((
                    "Not in the library (position in the list, series, number, volume, year):\n"
                    + missing.joined(separator: "\n") + "\n").utf8))]
                tree.addFolder(found.name, links: links, files: note)
            }
        }
        return tree
    }

    /// A series folder's links, in issue order. Names and numbers made once per comic, not once
    /// per comparison (100,000 comics).
    static func seriesLinks(_ records: [ComicRecord]) -> [(name: String, target: LinkTree.Target, local: UInt64)] {
        LinkTree.numbered(ordered(records.map { ($0, IssueNumber($0.metadata.number ?? "")) }).map(\.record))
    }

    /// By number (1, 1.5, 2, 10, then Annual 1...), then cover date, then path.
    /// The paths' sort keys are made once for the folder: made for each comparison they were
    /// nearly all of listing a big folder (a series of 20,000 issues: 11-50 s for `ls -lR`).
    static func ordered(_ comics: [(record: ComicRecord, number: IssueNumber)]) -> [(record: ComicRecord, number: IssueNumber)] {
        let paths = NaturalOrder.sortKeys(for: comics.map(\.record.comic))
        return comics.indices.sorted { left, right in
            let (lhs, rhs) = (comics[left], comics[right])
            if lhs.number != rhs.number, lhs.number < rhs.number || rhs.number < lhs.number { return lhs.number < rhs.number }
            let (leftDate, rightDate) = (lhs.record.coverDate, rhs.record.coverDate)
            if leftDate != rightDate { return leftDate < rightDate }
            return NaturalOrder.compare(paths[left], paths[right]) == .orderedAscending
        }.map { comics[$0] }
    }
}
