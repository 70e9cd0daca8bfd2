import Foundation
import InkyTestSupport
@testable import InkyVault
import XCTest

/// A vault name with a control character, written before such names were refused, shows in
/// `Vault/` as the library shows one: the character as U+FFFD, never raw in a file name.
final class VaultOldNamesTests: XCTestCase {
    func testAnOldNameWithControlCharactersShowsThemAsReplacementCharacters() throws {
        let fixture = try VaultMountFixture()
        // The manifest as an older inkyfs could write it: rewritten in this process, vault locked.
        let password = SecureBytes(copying: Array("sesame".utf8))
        let vault = try Vault.unlock(at: fixture.vault.path, password: password)
        try vault.state.withLock { (state) throws(VaultError) in
            let entries = state.entries.map { entry in
                VaultEntry(name: entry.name, fileID: entry.fileID, size: entry.size, sha256: entry.sha256,
                           displayPath: "Bell\u{7}Folder/Issue\u{1B}[2J\nfake.cb7", originalFileName: entry.originalFileName,
                           dateAdded: entry.dateAdded)
            }
            try vault.save(entries: entries, state: &state, keys: state.keys!)
        }
        vault.lock()

        try fixture.unlock()
        let root = try FileManager.default.contentsOfDirectory(atPath: fixture.path("Vault"))
        XCTAssertEqual(root, ["Bell\u{FFFD}Folder"])
        let comics = try FileManager.default.contentsOfDirectory(atPath: fixture.path("Vault/Bell\u{FFFD}Folder"))
        XCTAssertEqual(comics, ["Issue\u{FFFD}[2J\u{FFFD}fake"])
        let pages = try FileManager.default.contentsOfDirectory(atPath: fixture.path("Vault/Bell\u{FFFD}Folder/" + comics[0]))
        XCTAssertTrue(pages.contains("001.jpg"), "\(pages)")
        // The page is the comic's own (the CB7 added as Moon Tales 01).
        let page = try readFile(fixture.path("Vault/Bell\u{FFFD}Folder/\(comics[0])/001.jpg"))
        let reference = try readFile(fixture.mount.path("Moon Tales/Moon Tales 01/001.jpg"))
        XCTAssertEqual(page, reference)
    }
}
