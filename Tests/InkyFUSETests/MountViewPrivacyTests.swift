import Foundation
import InkyTestSupport
import XCTest

/// Views and covers under `-o allow_other`, seen by a second local user (made with useradd): a
/// 0600 comic in a folder everyone may list shows them neither its series (the views are the
/// mounting user's, as `Continue Reading/` is) nor its cover (`folder.jpg` is no more readable
/// than the comic it comes from).
final class MountViewPrivacyTests: XCTestCase {
    private var library: URL!

    override func setUpWithError() throws {
        library = ArchiveMaker.temporaryDirectory("view-privacy-lib")
        XCTAssertEqual(chmod(library.path, 0o755), 0)
    }

    override func tearDown() { try? FileManager.default.removeItem(at: library) }

    func testAnotherUserSeesNoSeriesAndNoCoverOfAComicTheyMayNotRead() throws {
        guard let user = try TestUser.make() else { throw XCTSkip("needs root to make a second user") }
        defer { user.remove() }
        let folder = library.appendingPathComponent("Public")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let secret = folder.appendingPathComponent("Secret 01.cbz")
        try ArchiveMaker.zip(at: secret, members: [MetadataLibraryFixture.comicInfo([("Series", "Hidden Series"), ("Number", "1")]),
                                                   ("001.jpg", try PageImages.make(.jpeg, width: 400, height: 600))])
        XCTAssertEqual(chmod(secret.path, 0o600), 0)

        let mount = try MountedLibrary(library: library, arguments: ["-o", "allow_other"], covers: true, views: true)
        XCTAssertTrue(waitUntil(30) { FileManager.default.fileExists(atPath: mount.path("Public/folder.jpg")) }, mount.logText)
        XCTAssertFalse(try readFile(mount.path("Public/folder.jpg")).isEmpty, "the owner sees the cover")
        XCTAssertTrue(waitUntil(30) { ((try? FileManager.default.contentsOfDirectory(atPath: mount.path("By Series"))) ?? []).contains("Hidden Series") },
                      mount.logText)

        let listed = try user.run("/bin/ls", [mount.path("Public")])
        XCTAssertEqual(listed.status, 0, "the folder is open to everyone: \(listed.stderr)")
        for (command, path) in [("/bin/cat", "Public/folder.jpg"), ("/bin/ls", "By Series"), ("/bin/ls", "Recently Added")] {
            let refused = try user.run(command, [mount.path(path)])
            XCTAssertNotEqual(refused.status, 0, "\(command) \(path): \(refused.stdout)")
            XCTAssertTrue(refused.stderr.contains("Permission denied"), "\(path): \(refused.stderr)")
            XCTAssertFalse(refused.stdout.contains("Hidden Series"))
        }
        let cover = try XCTUnwrap(SystemCall.status(mount.path("Public/folder.jpg")))
        XCTAssertEqual(cover.st_mode & 0o777, 0o400, "the comic's read bits, not the folder's")
        XCTAssertEqual(try XCTUnwrap(SystemCall.status(mount.path("By Series"))).st_mode & 0o777, 0o500)
        XCTAssertEqual(mount.unmount(), 0)
    }
}
