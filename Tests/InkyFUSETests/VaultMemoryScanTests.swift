import Foundation
import InkyCore
import InkyTestSupport
import XCTest

/// After `inkyfs vault lock`, none of what the vault showed is left in the daemon's memory: no
/// folder or comic name and no page bytes, wherever they passed (decryption, the window cache,
/// worker frames, replies, libfuse's request buffers). Scanned as an attacker with the
/// daemon's memory would: every readable mapping of /proc/PID/mem.
final class VaultMemoryScanTests: XCTestCase {
    private let folderName = "Quixotic Nightjar Shelf"
    private let comicNames = ["Zanzibar Chronicles Volume Seven", "Obsidian Lantern Omnibus"]

    /// Random page bytes, so a hit can only be a leftover of these pages.
    private func pages(_ count: Int, size: Int) -> [(String, [UInt8])] {
        (1...count).map { index in (String(format: "p%02d.jpg", index), (0..<size).map { _ in UInt8.random(in: 0...255) }) }
    }

    private func scan(_ pid: Int32, _ needles: [(String, [UInt8])]) throws -> String {
        let file = ArchiveMaker.temporaryDirectory("needles").appendingPathComponent("needles.tsv")
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let lines = needles.map { label, bytes in label + "\t" + bytes.map { String(format: "%02x", $0) }.joined() }
        try (lines.joined(separator: "\n") + "\n").write(to: file, atomically: true, encoding: .utf8)
        let tool = Corpus.packageRoot.appendingPathComponent("Tests/Tools/scan-memory.py").path
        return try ArchiveMaker.run("/usr/bin/python3", [tool, String(pid), file.path])
    }

    func testAfterLockNoVaultNameOrPageByteIsLeftInTheDaemonsMemory() throws {
        guard getuid() == 0 else { throw XCTSkip("reading a non-dumpable daemon's memory needs root") }
        let fixture = try VaultMountFixture(views: true)
        let source = fixture.folder.appendingPathComponent("sources")
        try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
        var secretPages: [[UInt8]] = []
        for (index, name) in comicNames.enumerated() {
            let members = pages(index == 0 ? 8 : 5, size: 60_000 + index * 7_000)
            secretPages += members.map(\.1)
            let comic = source.appendingPathComponent(name + ".cbz")
            // One stored (decrypted by the daemon itself), one deflated (decoded by a worker).
            try ArchiveMaker.zip(at: comic, members: members, compression: index == 0 ? "stored" : "deflated")
            let added = try fixture.vaultCommand(["add", comic.path, "--into", folderName])
            XCTAssertEqual(added.status, 0, added.stderr)
        }
        try fixture.unlock()
        for name in comicNames {
            let directory = fixture.path("Vault/\(folderName)/\(name)")
            let listed = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
            XCTAssertFalse(listed.isEmpty, name)
            for page in listed { _ = try readFile(directory + "/" + page) }
        }
        var needles: [(String, [UInt8])] = [("folder name", Array(folderName.utf8))]
        needles += comicNames.map { ("comic name \($0)", Array($0.utf8)) }
        for (number, page) in secretPages.enumerated() {
            for offset in [0, page.count / 3, page.count * 2 / 3, page.count - 48] {
                needles.append(("page \(number) at \(offset)", Array(page[offset..<offset + 48])))
            }
        }
        let pid = fixture.mount.process.processIdentifier
        XCTAssertFalse(try scan(pid, needles).isEmpty, "unlocked, the scan finds what is shown: it can find")

        let locked = try CommandRunner.inkyfs(["vault", "lock", fixture.path("")], environment: fixture.environment)
        XCTAssertEqual(locked.status, 0, locked.stderr)
        let left = try scan(pid, needles)
        XCTAssertEqual(left, "", "left in the daemon's memory after lock (label, count, mappings):\n\(left)")
    }
}
