import Foundation
import InkyCore
@testable import InkyLibrary
import InkyTestSupport
import XCTest

/// What names a converted page on disk: no vault comic has a name there, and every setting, the
/// comic's identity and the page's place in the listing make a different one.
final class ConvertedPageCacheTests: XCTestCase {
    private let identity = FileIdentity(size: 1_000, modifiedNanoseconds: 7, inode: 42)
    private let gray = PageRendering(conversion: PageConversion(format: .jpeg, fitWidth: 1_264, fitHeight: 1_680, grayscale: true))

    func testAVaultComicHasNoKey() {
        XCTAssertNil(ConvertedPageCache.Key(.vault("0123abcd"), identity: identity, index: 0, rendering: gray))
        XCTAssertNotNil(ConvertedPageCache.Key(.library("0123abcd"), identity: identity, index: 0, rendering: gray))
    }

    func testEachPartOfTheKeyMakesADifferentName() throws {
        func name(_ path: String = "A/B.cbz", _ identity: FileIdentity? = nil, _ index: Int = 3,
                  _ rendering: PageRendering? = nil) throws -> String {
            try XCTUnwrap(ConvertedPageCache.Key(.library(path), identity: identity ?? self.identity, index: index,
                                                 rendering: rendering ?? gray)).name
        }
        var colour = gray
        colour.conversion.grayscale = false
        var smaller = gray
        smaller.conversion.fitWidth = 1_072
        var pdf = gray
        pdf.height = 2_000
        var touched = identity
        touched.modifiedNanoseconds += 1
        let names = try [name(), name("A/C.cbz"), name("A/B.cbz", touched), name("A/B.cbz", nil, 4),
                         name("A/B.cbz", nil, 3, colour), name("A/B.cbz", nil, 3, smaller), name("A/B.cbz", nil, 3, pdf)]
        XCTAssertEqual(Set(names).count, names.count, "\(names)")
        XCTAssertEqual(try name(), try name(), "the same page, the same name, in every run")
        // "<comic>-<page>", 32 hex digits each: every page of one comic as it is now shares the first
        // half (what `purge` removes by), whatever page or settings; another comic or version does not.
        let halves = names.map { $0.split(separator: "-", omittingEmptySubsequences: false) }
        XCTAssertTrue(halves.allSatisfy { $0.count == 2 && $0.allSatisfy { $0.count == 32 && $0.allSatisfy(\.isHexDigit) } }, "\(names)")
        XCTAssertEqual(Set(halves.map { $0[0] }).count, 3, "A/B.cbz, A/C.cbz and A/B.cbz touched: \(names)")
        XCTAssertEqual(Set([halves[0][0], halves[3][0], halves[4][0], halves[5][0], halves[6][0]]).count, 1, "\(names)")
    }

    func testAStoredPageReadsBackAndADamagedOneIsRemoved() throws {
        let folder = ArchiveMaker.temporaryDirectory("pagecache")
        defer { try? FileManager.default.removeItem(at: folder) }
        let cache = ConvertedPageCache(directory: folder.path + "/pages", capacity: 1 << 20)
        let key = try XCTUnwrap(ConvertedPageCache.Key(.library("A.cbz"), identity: identity, index: 0, rendering: gray))
        let page = (0..<5_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        cache.store(key, page)
        cache.finishWrites()
        XCTAssertEqual(cache.page(key, size: nil), page)
        XCTAssertEqual(cache.page(key, size: Int64(page.count)), page)
        // The listing says another size: the file is not this page, and goes.
        XCTAssertNil(cache.page(key, size: Int64(page.count + 1)))
        XCTAssertNil(cache.page(key, size: nil))
        XCTAssertEqual(cache.size, 0)
    }
}

