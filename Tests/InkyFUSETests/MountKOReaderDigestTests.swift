import Foundation
import InkyTestSupport
import XCTest

/// The CBZ `--as cbz` serves is known to KOReader by its partial MD5, so its bytes must stay the
/// same across releases: read through a real mount and digested by Python, it matches the golden
/// digest (and the library computes the same one: KOReaderDigestTests).
final class MountKOReaderDigestTests: XCTestCase {
    func testTheServedCBZKeepsItsGoldenDigest() throws {
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "needs python3")
        let library = try PartialMD5.goldenLibrary()
        defer { try? FileManager.default.removeItem(at: library) }
        let mount = try MountedLibrary(library: library, arguments: ["--as", "cbz", "--no-list-ahead"])
        let cbz = mount.path("Moon Tales 02.cbz")
        XCTAssertGreaterThan(statSize(cbz) ?? 0, 16 * 1024, "large enough for several samples")
        XCTAssertEqual(try PartialMD5.python([cbz]), [PartialMD5.goldenCBZ],
                       "the CBZ's bytes changed: every KOReader that synced a served comic would lose it")
    }
}
