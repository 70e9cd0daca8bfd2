import Foundation
import InkyTestSupport
import XCTest

/// `inkyfs duplicates --json` on a library with planted duplicates of each kind it finds, and
/// comics that only look alike: it finds the planted ones and nothing else.
final class DuplicatesCommandTests: XCTestCase {
    private var folder: URL!

    override func setUp() { folder = ArchiveMaker.temporaryDirectory("duplicates") }
    override func tearDown() { try? FileManager.default.removeItem(at: folder) }

    private func comic(_ relative: String, seed: UInt64, info: String? = nil) throws -> String {
        let url = folder.appendingPathComponent("library/" + relative)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let members = (info.map { [("ComicInfo.xml", Array("<ComicInfo>\($0)</ComicInfo>".utf8))] } ?? [])
            + [("001.jpg", ArchiveMaker.noise(count: 400, seed: 2 * seed + 1))] // noise makes n and n | 1 alike
        try ArchiveMaker.zip(at: url, members: members)
        return url.path
    }

    func testPlantedDuplicatesOfEachKindAndNothingElse() throws {
        let original = try comic("Saga/Saga 001.cbz", seed: 1)
        let identical = folder.appendingPathComponent("library/Elsewhere/Saga 001 again.cbz")
        try FileManager.default.createDirectory(at: identical.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: original, toPath: identical.path)
        let base = try comic("Hellboy/Hellboy 003.cbz", seed: 2)
        let copy = try comic("Hellboy/Hellboy 003 (1).cbz", seed: 3)
        let tag = "<Series>Batman</Series><Number>1</Number><Volume>2011</Volume>"
        let tagged = try comic("Batman/Batman 001.cbz", seed: 4, info: tag)
        let retagged = try comic("Batman/Batman 001 scan.cbz", seed: 5, info: tag)
        // Look-alikes that are not duplicates: another volume, another number, a same-sized
        // archive of other bytes, a "(1)" with no original beside it.
        _ = try comic("Batman/Batman 001 v2016.cbz", seed: 6, info: "<Series>Batman</Series><Number>1</Number><Volume>2016</Volume>")
        _ = try comic("Batman/Batman 002.cbz", seed: 7, info: "<Series>Batman</Series><Number>2</Number><Volume>2011</Volume>")
        _ = try comic("Saga/Saga 002.cbz", seed: 8)
        _ = try comic("Loose/Orphan (1).cbz", seed: 9)
        let result = try CommandRunner.inkyfs(["duplicates", "--json", "--state", folder.appendingPathComponent("state").path,
                                               folder.appendingPathComponent("library").path])
        XCTAssertEqual(result.status, 0, result.stderr)
        let groups = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
        let found = groups.map { "\($0["kind"] as? String ?? "?"): \(($0["comics"] as? [String] ?? []).joined(separator: " | "))" }
        XCTAssertEqual(found, ["identical: \(original) | \(identical.path)", "copy: \(base) | \(copy)",
                               "possible: \(tagged) | \(retagged)"])
    }
}
