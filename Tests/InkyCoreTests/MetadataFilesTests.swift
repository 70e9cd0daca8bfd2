import XCTest
@testable import InkyCore

final class MetadataFilesTests: XCTestCase {
    private func comicInfo(_ body: String) -> ComicMetadata? {
        MetadataFiles.comicInfo(Array("<?xml version=\"1.0\"?>\n<ComicInfo xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\">\(body)</ComicInfo>".utf8))
    }

    func testComicInfoFieldsAreRead() throws {
        let metadata = try XCTUnwrap(comicInfo("""
            <Title>The Court &amp; the Owls</Title><Series>Batman</Series><Number>012</Number><Volume>2011</Volume>
            <Publisher>DC Comics</Publisher><Year>2012</Year><Month>10</Month><PageCount>24</PageCount>
            <LanguageISO>en</LanguageISO><Manga>No</Manga>
            <StoryArc>Night of the Owls, Court of Owls</StoryArc><StoryArcNumber>3,7</StoryArcNumber>
            <Pages><Page Image="0" Type="FrontCover"/></Pages>
            """))
        XCTAssertEqual(metadata, ComicMetadata(
            source: .comicInfo, series: "Batman", number: "12", volume: 2011, title: "The Court & the Owls",
            publisher: "DC Comics", year: 2012, month: 10,
            arcs: [.init(name: "Night of the Owls", number: "3"), .init(name: "Court of Owls", number: "7")],
            pageCount: 24, language: "en", manga: "No"))
    }

    func testUnsetAndOutOfRangeNumbersAreDropped() throws {
        let metadata = try XCTUnwrap(comicInfo("<Series>X</Series><Volume>-1</Volume><Year>-1</Year><Month>13</Month><PageCount>abc</PageCount>"))
        XCTAssertNil(metadata.volume)
        XCTAssertNil(metadata.year)
        XCTAssertNil(metadata.month)
        XCTAssertNil(metadata.pageCount)
    }

    func testAComicInfoWithoutSeriesTakesTheFileNames() throws {
        let metadata = try XCTUnwrap(comicInfo("<Publisher>Image</Publisher>"))
            .filling(from: FileNameMetadata.parse("Saga v1 #054 (2018).cbz"))
        XCTAssertEqual(metadata.series, "Saga")
        XCTAssertEqual(metadata.number, "54")
        XCTAssertEqual(metadata.volume, 1)
        XCTAssertEqual(metadata.publisher, "Image")
        XCTAssertEqual(metadata.source, .comicInfo)
    }

    func testADoctypeIsRefusedSoNoEntityIsEverExpanded() {
        let bomb = """
            <?xml version="1.0"?>
            <!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>
            <ComicInfo><Series>&lol2;</Series></ComicInfo>
            """
        XCTAssertNil(MetadataFiles.comicInfo(Array(bomb.utf8)))
        XCTAssertNil(comicInfo("<Series>&lol;</Series>"), "an undeclared entity is not XML")
    }

    func testMalformedXMLIsNoMetadata() {
        for body in ["<Series>Batman", "<Series>Batman</Title>", "<Series a=1>x</Series>", "<Series>a < b</Series>",
                     "<Series>&#0;</Series>", "<Series>&#x110000;</Series>"] {
            XCTAssertNil(comicInfo(body), body)
        }
        XCTAssertNil(MetadataFiles.comicInfo(Array("<NotComicInfo/>".utf8)))
        XCTAssertNil(MetadataFiles.comicInfo([0xFF, 0xFE, 0x00]))
        XCTAssertNil(MetadataFiles.comicInfo(Array(String(repeating: "<a>", count: 100).utf8)), "too deep")
    }

    func testHostileTextIsCleanedAndBounded() throws {
        let long = String(repeating: "x", count: 10_000)
        let metadata = try XCTUnwrap(comicInfo("<Series>../../etc/&#10;pass\u{1}wd\u{202E}</Series><Title>\(long)</Title><Number>\(long)</Number>"))
        XCTAssertEqual(metadata.series, "../../etc/ pass wd", "stored as data; SafeName makes names of it")
        XCTAssertEqual(metadata.title?.count, ComicMetadata.maxNameLength)
        XCTAssertEqual(metadata.number?.count, 32)
    }

    func testCDATACommentsAndCharacterReferencesAreText() throws {
        let metadata = try XCTUnwrap(comicInfo("<Series><![CDATA[A <b> & C]]><!-- no --></Series><Number>&#189;</Number>"))
        XCTAssertEqual(metadata.series, "A <b> & C")
        XCTAssertEqual(metadata.number, "½")
    }

    func testCoMet() throws {
        let xml = """
            <?xml version="1.0"?><comet xmlns="http://www.denvog.com/comet/"><title>Rising</title><series>Invincible</series>
            <issue>7</issue><volume>1</volume><publisher>Image</publisher><date>2004-01-15</date><pages>32</pages></comet>
            """
        let metadata = try XCTUnwrap(MetadataFiles.coMet(Array(xml.utf8)))
        XCTAssertEqual(metadata, ComicMetadata(source: .coMet, series: "Invincible", number: "7", volume: 1, title: "Rising",
                                               publisher: "Image", year: 2004, month: 1, pageCount: 32))
    }

    func testComicBookInfo() throws {
        let json = #"{"appID":"ComicTagger/1.0","ComicBookInfo/1.0":{"series":"Hellboy","issue":3,"volume":1,"publicationYear":1994,"publicationMonth":5,"publisher":"Dark Horse"}}"#
        let metadata = try XCTUnwrap(MetadataFiles.comicBookInfo(Array(json.utf8)))
        XCTAssertEqual(metadata, ComicMetadata(source: .comicBookInfo, series: "Hellboy", number: "3", volume: 1,
                                               publisher: "Dark Horse", year: 1994, month: 5))
        XCTAssertNil(MetadataFiles.comicBookInfo(Array("a comment".utf8)))
    }
}

final class ReadingListFileTests: XCTestCase {
    func testAComicRackListIsReadInOrder() throws {
        let xml = """
            <?xml version="1.0"?>
            <ReadingList xmlns:xsd="http://www.w3.org/2001/XMLSchema"><Name>Night of the Owls</Name>
            <Books><Book Series="Batman" Number="008" Volume="2011" Year="2012"><Id>x</Id></Book>
            <Book Series="Nightwing" Number="9" Volume="2011" Year="2012" /><Book Number="1"/>
            <Book Series="Batman" Number="∞" Volume="-4"/></Books></ReadingList>
            """
        let list = try XCTUnwrap(ReadingListFile.parse(Array(xml.utf8)))
        XCTAssertEqual(list, ReadingListFile(name: "Night of the Owls", books: [
            .init(series: "Batman", number: "8", volume: 2011, year: 2012), .init(series: "Nightwing", number: "9", volume: 2011, year: 2012),
            .init(series: "Batman", number: "∞")]))
        XCTAssertNil(ReadingListFile.parse(Array("<!DOCTYPE x><ReadingList/>".utf8)))
        XCTAssertNil(ReadingListFile.parse(Array("<ComicInfo/>".utf8)))
    }
}
