import Foundation
import InkyTestSupport
import XCTest

/// Under a device profile the first `ls -l` of a comic (its pages' sizes) and of its folder under
/// `--as cbz` (the CBZ's size) converts no page: each page fitted to the screen is listed at its
/// size budget and padded to it. Measured before, on the corpus's 24-page comic under
/// `--device kobo-clara`: 8 s, every page converted to learn its size.
final class MountDeviceProfileSizesTests: XCTestCase {
    private var library: URL!

    override func setUpWithError() throws {
        try Corpus.skipUnlessPresent("real-comics")
        library = ArchiveMaker.temporaryDirectory("profile-sizes")
        try FileManager.default.createDirectory(at: library.appendingPathComponent("Cory"), withIntermediateDirectories: true)
        let comic = "real-comics/comictagger/Cory Doctorow's Futuristic Tales of the Here and Now #001 - Anda's Game (2007).cbz"
        try FileManager.default.copyItem(atPath: Corpus.path(comic), toPath: library.appendingPathComponent("Cory/Anda.cbz").path)
    }

    // Nil when setUp skipped (no corpus): unwrapping it then crashed the whole run.
    override func tearDown() { if let library { try? FileManager.default.removeItem(at: library) } }

    /// `ls -l PATH` under the mount; fails the test when it fails. (How fast the first one is
    /// belongs to scripts/bench; here: that it encodes no page, which is what made it slow.)
    private func list(_ mount: MountedLibrary, _ path: String) throws -> (lines: [String], output: String) {
        let listed = try CommandRunner.capture("/usr/bin/env", ["LC_ALL=C", "ls", "-l", mount.path(path)])
        XCTAssertEqual(listed.status, 0, listed.stderr)
        return (listed.stdout.split(separator: "\n").dropFirst().map(String.init), listed.stdout)
    }

    /// Converted pages the mount kept on disk: one per page it encoded.
    private func convertedPages(_ mount: MountedLibrary) -> [String] {
        let folder = mount.stateHome.appendingPathComponent("cache/inkyfs/pages").path
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(".page") }
    }

    func testTheFirstLsOfAComicOrItsCBZConvertsNoPageAndEachPageReadsAtItsListedSize() throws {
        var mount = try MountedLibrary(library: library, arguments: ["--device", "kobo-clara"])
        let pages = try list(mount, "Cory/Anda")
        XCTAssertEqual(pages.lines.count, 24, pages.lines.joined(separator: "\n"))
        XCTAssertEqual(convertedPages(mount), [], "no page encoded to be listed")
        // A page reads at the size `ls -l` gave, and is the screen's JPEG.
        let page = try readFile(mount.path("Cory/Anda/003.jpg"))
        XCTAssertEqual(Int64(page.count), statSize(mount.path("Cory/Anda/003.jpg")))
        let file = library.deletingLastPathComponent().appendingPathComponent("profile-sizes-page-\(UUID().uuidString).jpg")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(page).write(to: file)
        let header = try ArchiveMaker.run("/usr/bin/vipsheader", [file.path])
        XCTAssertTrue(header.contains("1448 uchar, 1 band, b-w, jpegload"), header)
        XCTAssertTrue(mount.logText.contains("--device kobo-clara"), "the mount's line names the profile: \(mount.logText)")
        XCTAssertEqual(mount.unmount(), 0)

        mount = try MountedLibrary(library: library, arguments: ["--device", "kobo-clara", "--as", "cbz"])
        let folder = try list(mount, "Cory")
        XCTAssertEqual(folder.lines.count, 1, folder.lines.joined(separator: "\n"))
        XCTAssertTrue(folder.lines.first?.hasSuffix(" Anda.cbz") == true, folder.lines.joined(separator: "\n"))
        XCTAssertEqual(convertedPages(mount), [], "no page encoded to size the CBZ")
        XCTAssertEqual(mount.unmount(), 0)
    }
}
