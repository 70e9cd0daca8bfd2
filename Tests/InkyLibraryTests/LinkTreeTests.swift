import InkyCore
import XCTest
@testable import InkyLibrary

/// The metadata views' trees, made from records without a mount: order, names, numbers, and
/// what the kernel is told when a tree is made again.
final class LinkTreeTests: XCTestCase {
    private func record(_ id: Int64, _ comic: String, series: String?, number: String?, volume: Int? = nil,
                        arcs: [ComicMetadata.Arc] = [], modified: Int64 = 0) -> ComicRecord {
        ComicRecord(id: id, comic: comic, modifiedNanoseconds: modified,
                    metadata: ComicMetadata(source: .comicInfo, series: series, number: number, volume: volume, arcs: arcs))
    }

    func testSeriesFoldersListIssuesInNumberOrderWithPositionsThatSortAlike() {
        let records = ["10", "Annual 1", "1.5", "2", "1", "-1", "½"].enumerated().map { index, number in
            record(Int64(index + 1), "B/\(index).cbz", series: "Batman", number: number, volume: 2011)
        }
        let tree = LinkTreeBuilder.build(.series, from: records.shuffled(), seriesViewName: "By Series")
        let names = tree.folder(named: "Batman (2011)")?.links.map(\.name)
        XCTAssertEqual(names, ["001 Batman #-1", "002 Batman #½", "003 Batman #1", "004 Batman #1.5", "005 Batman #2",
                               "006 Batman #10", "007 Batman #Annual 1"])
        XCTAssertEqual(names, names?.sorted(), "byte order is issue order")
        XCTAssertEqual(tree.folder(named: "Batman (2011)")?.links.first?.local, LinkTree.comicLocal(6), "numbered by the row id")
    }

    func testNumbersAreTheSameForTheSameNamesAndRowsWhateverElseIsThere() {
        let one = LinkTreeBuilder.build(.series, from: [record(7, "a.cbz", series: "Saga", number: "1")], seriesViewName: "By Series")
        let two = LinkTreeBuilder.build(.series, from: [record(3, "z.cbz", series: "Aa", number: "1"), record(7, "a.cbz", series: "Saga", number: "1")],
                                        seriesViewName: "By Series")
        XCTAssertEqual(one.folder(named: "Saga")?.local, two.folder(named: "Saga")?.local)
        XCTAssertEqual(two.target(local: LinkTree.comicLocal(7)), .comic("a.cbz"))
    }

    func testARetaggedComicChangesOnlyTheFoldersItLeftAndJoined() {
        let before = [record(1, "a.cbz", series: "Batman", number: "1"), record(2, "b.cbz", series: "Batman", number: "2"),
                      record(3, "c.cbz", series: "Saga", number: "1")]
        var after = before
        after[1] = record(2, "b.cbz", series: "Robin", number: "2")
        let old = LinkTreeBuilder.build(.series, from: before, seriesViewName: "By Series")
        let new = LinkTreeBuilder.build(.series, from: after, seriesViewName: "By Series")
        let changes = new.changes(since: old)
        XCTAssertEqual(Set(changes.nodes), [1, new.folder(named: "Batman")!.local], "the root (Robin appears) and Batman")
        XCTAssertEqual(changes.names.map(\.name), ["002 Batman #2"])
        XCTAssertTrue(new.changes(since: new).isEmpty)
    }

    func testArcsFollowTheirNumbersAndRecentTheNewestFirst() {
        let records = [record(1, "a.cbz", series: "Batman", number: "5", arcs: [.init(name: "Owls", number: "2")], modified: 30),
                       record(2, "b.cbz", series: "Nightwing", number: "9", arcs: [.init(name: "Owls", number: "1")], modified: 10),
                       record(3, "c.cbz", series: "Batman", number: "6", arcs: [.init(name: "Owls")], modified: 20)]
        let arcs = LinkTreeBuilder.build(.arcs, from: records, seriesViewName: "By Series")
        XCTAssertEqual(arcs.folder(named: "Owls")?.links.map(\.name), ["001 Nightwing #9", "002 Batman #5", "003 Batman #6"])
        let recent = LinkTreeBuilder.build(.recent, from: records, seriesViewName: "By Series")
        XCTAssertEqual(recent.rootLinks.map(\.name), ["001 Batman #5", "002 Batman #6", "003 Nightwing #9"])
        XCTAssertTrue(LinkTreeBuilder.build(.lists, from: records, seriesViewName: "By Series").isEmpty, "no list, nothing shown")
    }

    /// `SeriesFolders`' rule: a year and a volume number do not disagree; two years do, and then a
    /// volume number and no volume are folders of their own; accents and punctuation are no new series.
    func testSeriesFoldersSplitOnlyOnTwoVolumesOfAKind() {
        let one = SeriesFolders([("Captain Science", 1950, 3), ("Captain Science", 1, 1), ("captain science", nil, 2)])
        XCTAssertEqual([1950, 1].map { one.name(series: "Captain Science", volume: $0) }, ["Captain Science (1950)", "Captain Science (1950)"])
        XCTAssertEqual(one.name(series: "captain science", volume: nil), "Captain Science (1950)", "the spelling most comics use")
        XCTAssertNil(one.name(series: "Captain Science", volume: nil), "no comic is tagged so")
        let runs = SeriesFolders([("Batman", 2011, 1), ("Batman", 2016, 1), ("Batman", 2, 1), ("Batman", nil, 1), ("Pokémon", 3, 1), ("Pokemon", nil, 2)])
        XCTAssertEqual([2011, 2016, 2, nil].map { runs.name(series: "Batman", volume: $0) }, ["Batman (2011)", "Batman (2016)", "Batman v2", "Batman"])
        XCTAssertEqual(runs.name(series: "Pokémon", volume: 3), "Pokemon v3")
        XCTAssertNil(runs.name(series: "Robin", volume: nil))
    }
}
