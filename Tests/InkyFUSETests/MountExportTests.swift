import Foundation
import InkyTestSupport
import XCTest

/// The mount exported over SMB: a private smbd on loopback shares it and smbclient reads it as a
/// machine on the network would. smbd serves what the kernel shows, so the pages must arrive as
/// the archive holds them, under the same names, in reading order.
final class MountExportTests: XCTestCase {
    private let archive = Corpus.fixture("Space Patrol/Space Patrol 002.cbz")
    private let comic = "Space Patrol/Space Patrol 002"
    /// The archive's images in reading order: folders in natural order (Chapter 2 before
    /// Chapter 10, which the archive stores first); junk (.DS_Store, __MACOSX, notes) left out.
    private let entries = ["Chapter 1/01.jpg", "Chapter 1/02.jpg", "Chapter 1/03.jpg", "Chapter 1/04.jpg", "Chapter 1/05.jpg",
                           "Chapter 2/01.jpg", "Chapter 2/02.png", "Chapter 2/03.png", "Chapter 10/01.jpg", "Chapter 10/02.jpg"]
    /// The names the mount gives them: the page number and the entry's extension.
    private var pageNames: [String] {
        entries.enumerated().map { String(format: "%03d.", $0.offset + 1) + ($0.element as NSString).pathExtension }
    }

    private func requireSamba() throws {
        try XCTSkipUnless(SambaServer.isInstalled, "smbd or smbclient is missing: scripts/setup installs samba and smbclient")
        try XCTSkipUnless(geteuid() == 0, "smbd runs as root here (it switches to the guest account per file access)")
    }

    /// The fixture library mounted with allow_other and shared by smbd. smbd opens files as
    /// the guest account (nobody): without allow_other FUSE refuses every uid but the mounter's,
    /// and the share answers NT_STATUS_ACCESS_DENIED.
    private func exportedMount() throws -> (MountedLibrary, SambaServer) {
        try requireSamba()
        let mount = try MountedLibrary(library: Corpus.fixtures, arguments: ["-o", "allow_other"])
        return (mount, try share(mount))
    }

    /// smbd sharing `mount`. Both end in teardown whatever happens, smbd first: its processes sit
    /// in the mount, and a busy mount keeps the daemon alive after a lazy unmount. `owner` (a
    /// fixture holding the mount) lives until then too.
    private func share(_ mount: MountedLibrary, owner: AnyObject? = nil) throws -> SambaServer {
        let server: SambaServer
        do {
            server = try SambaServer(sharing: mount.mountpoint.path)
        } catch {
            mount.unmount()
            throw error
        }
        addTeardownBlock {
            server.stop()
            mount.unmount()
            withExtendedLifetime(owner) {}
        }
        return server
    }

    func testSMBClientGetsEveryPageOfAComicByteForByteAsTheArchiveHoldsIt() throws {
        let (mount, server) = try exportedMount()
        let local = ArchiveMaker.temporaryDirectory("smb-get")
        defer { try? FileManager.default.removeItem(at: local) }
        // The archive's own bytes, by unzip: no inkyfs code between the file and the comparison.
        let extracted = local.appendingPathComponent("unzipped")
        try ArchiveMaker.run("/usr/bin/unzip", ["-q", archive, "-d", extracted.path])
        let names = pageNames
        let gets = names.map { "get \"\(comic)/\($0)\" \"\(local.path)/\($0)\"" }.joined(separator: "; ")
        let fetched = try server.client(gets)
        XCTAssertEqual(fetched.status, 0, fetched.stdout + fetched.stderr + server.log)
        for (name, entry) in zip(names, entries) {
            let overSMB = try readFile(local.appendingPathComponent(name).path)
            XCTAssertFalse(overSMB.isEmpty, name)
            // Digests, so a failure prints two lines rather than two images as arrays.
            let digest = Digest.sha256Hex(overSMB)
            XCTAssertEqual(digest, Digest.sha256Hex(try readFile(mount.path("\(comic)/\(name)"))), "\(name): SMB and the mount differ")
            XCTAssertEqual(digest, Digest.sha256Hex(try readFile(extracted.appendingPathComponent(entry).path)), "\(name) is not \(entry)")
        }
    }

    func testSMBListingShowsComicsAsFoldersAndPagesInReadingOrderWithTheirSizes() throws {
        let (mount, server) = try exportedMount()
        let series = SMBListing(try server.client("ls \"Space Patrol/*\""))
        XCTAssertEqual(series.entries.map(\.name).sorted(), [".", "..", "Space Patrol 001", "Space Patrol 002", "cover.jpg"], series.text)
        XCTAssertEqual(series.entries.filter(\.isDirectory).map(\.name).sorted(), [".", "..", "Space Patrol 001", "Space Patrol 002"],
                       "comics are folders to SMB clients")
        let pages = SMBListing(try server.client("ls \"\(comic)/*\""))
        let served = pages.entries.filter { ![".", ".."].contains($0.name) }
        // smbclient prints entries in the order smbd read them, and smbd in readdir's order.
        XCTAssertEqual(served.map(\.name), pageNames, pages.text)
        XCTAssertEqual(served.map(\.name), SystemCall.directoryEntries(mount.path(comic)).map(\.name).filter { ![".", ".."].contains($0) })
        for page in served {
            XCTAssertEqual(page.size, SystemCall.status(mount.path("\(comic)/\(page.name)")).map { Int64($0.st_size) }, page.name)
        }
    }

    func testAGuestShareLeavesTheUnlockedVaultOut() throws {
        try requireSamba()
        let fixture = try VaultMountFixture(mountArguments: ["-o", "allow_other"])
        try fixture.unlock()
        let server = try share(fixture.mount, owner: fixture)
        let local = ArchiveMaker.temporaryDirectory("smb-get")
        defer { try? FileManager.default.removeItem(at: local) }
        let page = "Space Patrol/Space Patrol 001/001.jpg"
        let vaultPage = "Vault/Secret Series/Moon Tales 01/001.jpg"
        let library = try server.client("get \"\(page)\" \"\(local.path)/library.jpg\"")
        XCTAssertEqual(library.status, 0, library.stdout + library.stderr)
        XCTAssertEqual(Digest.sha256Hex(try readFile(local.path + "/library.jpg")), Digest.sha256Hex(try readFile(fixture.path(page))),
                       "the same share serves the library")
        // Vault/ is the mounting user's, 0500/0400: the guest (nobody) can neither list nor read it.
        for command in ["ls \"Vault/*\"", "ls \"Vault/Secret Series/*\"", "get \"\(vaultPage)\" \"\(local.path)/vault.jpg\""] {
            let refused = try server.client(command)
            XCTAssertNotEqual(refused.status, 0, command)
            XCTAssertTrue((refused.stdout + refused.stderr).contains("NT_STATUS_ACCESS_DENIED"), command + ": " + refused.stdout + refused.stderr)
        }
        XCTAssertEqual((try? readFile(local.path + "/vault.jpg"))?.count ?? 0, 0, "no vault byte crossed the share")
        XCTAssertEqual(try readFile(fixture.path(vaultPage)).count, 35199, "the owner reads it")
    }
}

/// smbclient's `ls` output: `  NAME<padding> ATTRS SIZE  Www Mmm dd hh:mm:ss yyyy` per entry,
/// in the order the server sent them, then a line of free blocks.
private struct SMBListing {
    struct Entry {
        let name: String
        let attributes: String
        let size: Int64?
        var isDirectory: Bool { attributes.contains("D") }
    }

    let text: String
    let entries: [Entry]

    init(_ result: CommandRunner.Result) {
        text = result.stdout + result.stderr
        XCTAssertEqual(result.status, 0, "smbclient ls: \(text)")
        // The name is greedy: the attribute and size columns are the last before the date.
        let line = #/^  (.*\S)\s+([A-Z]+)\s+(\d+)  \S{3} \S{3} [ \d]\d \d\d:\d\d:\d\d \d{4}$/#
        entries = result.stdout.split(separator: "\n").compactMap { row in
            (try? line.wholeMatch(in: String(row))).flatMap { $0 }.map { Entry(name: String($0.1), attributes: String($0.2), size: Int64($0.3)) }
        }
    }
}
