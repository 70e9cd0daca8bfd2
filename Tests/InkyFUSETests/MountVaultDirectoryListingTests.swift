import Foundation
import InkyTestSupport
import XCTest

/// A vault CBZ is listed from its ZIP central directory alone (each local header is a chunk to
/// decrypt), each member then read from its own local header on. Through the kernel it must
/// list and read as the same file does in the library; a directory that is not plainly whole is
/// listed the library's way; one that lies fails the pages it lies about, with EIO, and only those.
final class MountVaultDirectoryListingTests: XCTestCase {
    private var folder: URL!
    private var environment: [String: String] { ["XDG_RUNTIME_DIR": folder.appendingPathComponent("run").path] }
    private var vault: String { folder.appendingPathComponent("vault").path }
    private var password: String { folder.appendingPathComponent("pw").path }
    private var library: URL { folder.appendingPathComponent("library") }
    /// Twelve pages p1..p12 of a few 64 KiB chunks each, so most local headers sit in chunks of their own.
    private let pages = (1...12).map { ("p\($0).jpg", ArchiveMaker.noise(count: 90_000 + 4_099 * $0, seed: UInt64(40 + $0))) }

    override func setUpWithError() throws {
        folder = ArchiveMaker.temporaryDirectory("vault-directory")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("run"), withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        try FileManager.default.createDirectory(at: library.appendingPathComponent("Private"), withIntermediateDirectories: true)
        try "sesame\n".write(to: folder.appendingPathComponent("pw"), atomically: true, encoding: .utf8)
        XCTAssertEqual(try vaultCommand(["init"]).status, 0)
    }

    override func tearDown() { try? FileManager.default.removeItem(at: folder) }

    private func vaultCommand(_ arguments: [String]) throws -> CommandRunner.Result {
        try CommandRunner.inkyfs(["vault"] + arguments + ["--vault", vault, "--password-file", password], environment: environment)
    }

    /// A ZIP written by Python's zipfile with `members` in this order, each stored or deflated as
    /// its flag says, then `patch` applied to its bytes; put in the vault and the library alike.
    private func comic(_ stem: String, _ members: [(String, [UInt8], deflated: Bool)], patch: (inout PatchedZip) -> Void = { _ in }) throws {
        let made = folder.appendingPathComponent("made-\(stem).cbz")
        try ArchiveMaker.zip(at: made, members: members)
        var bytes = PatchedZip(try readFile(made.path))
        patch(&bytes)
        let file = library.appendingPathComponent("Private/\(stem).cbz")
        try Data(bytes.data).write(to: file)
        let added = try vaultCommand(["add", file.path, "--keep", "--into", "Private"])
        XCTAssertEqual(added.status, 0, added.stderr)
    }

    private func mount() throws -> MountedLibrary {
        let mount = try MountedLibrary(library: library, arguments: ["--vault", vault, "--state", folder.appendingPathComponent("state").path],
                                       environment: environment)
        XCTAssertEqual(try CommandRunner.inkyfs(["vault", "unlock", "--password-file", password], environment: environment).status, 0)
        return mount
    }

    private func names(_ path: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: path).filter { !$0.hasPrefix(".") }.sorted()
    }

    func testAVaultCBZListsAndReadsAsTheSameFileInTheLibraryDoesDamagedDirectoriesIncluded() throws {
        // Written out of order, stored and deflated mixed, with folders, ComicInfo.xml and a name
        // holding a control character: the pages are those of Python's namelist, in natural order.
        var members = pages.enumerated().map { ($1.0, $1.1, deflated: $0 % 3 == 0) }.shuffled()
        members.insert(("extras/", [], deflated: false), at: 4)
        members.insert(("extras/notes.txt", Array("notes".utf8), deflated: true), at: 5)
        members.append(("ComicInfo.xml", Array("<ComicInfo><Series>Listed</Series><Number>3</Number></ComicInfo>".utf8), deflated: true))
        members.append(("p\u{07}13.jpg", ArchiveMaker.noise(count: 70_000, seed: 99), deflated: false))
        try comic("namelist", members)
        // The end record counts one member more than the directory holds; one record's local
        // header lies past the end: neither directory stands for the listing.
        try comic("miscounted", pages.map { ($0.0, $0.1, deflated: false) }) { $0.setEndRecordCount($0.endRecordCount + 1) }
        try comic("far-offset", pages.map { ($0.0, $0.1, deflated: true) }) { zip in
            zip.setLocalHeaderOffset(ofRecord: 6, to: UInt32(zip.data.count + 4_096))
        }
        let mount = try mount()
        let namelist = try ArchiveMaker.run("/usr/bin/python3", ["-c", "import sys, zipfile; print('\\n'.join(zipfile.ZipFile(sys.argv[1]).namelist()))",
                                                                  library.appendingPathComponent("Private/namelist.cbz").path])
        let images = namelist.split(separator: "\n").map(String.init).filter { $0.hasSuffix(".jpg") }
        XCTAssertEqual(images.count, 13)
        for stem in ["namelist", "miscounted", "far-offset"] {
            let inVault = try names(mount.path("Vault/Private/\(stem)"))
            XCTAssertEqual(inVault, try names(mount.path("Private/\(stem)")), stem)
            // A comic that cannot be listed shows only why, in the library's words (its own
            // path there, the object's in the vault): the same file, not the same bytes.
            for name in inVault where name != "ERROR.txt" {
                let vaultPath = mount.path("Vault/Private/\(stem)/\(name)"), libraryPath = mount.path("Private/\(stem)/\(name)")
                XCTAssertEqual(errnoName(readErrno(vaultPath)), errnoName(readErrno(libraryPath)), "\(stem)/\(name)")
                if readErrno(libraryPath) == 0 { XCTAssertEqual(try readFile(vaultPath), try readFile(libraryPath), "\(stem)/\(name)") }
            }
        }
        // A record past the end: libarchive refuses the comic, and its ERROR.txt says so.
        XCTAssertEqual(try names(mount.path("Vault/Private/far-offset")), ["ERROR.txt"])
        let why = String(decoding: try readFile(mount.path("Vault/Private/far-offset/ERROR.txt")), as: UTF8.self)
        XCTAssertTrue(why.contains("corrupted archive: Truncated ZIP file header"), why)
        XCTAssertEqual(try names(mount.path("Vault/Private/miscounted")).count, 12, "libarchive's walk lists it, in the vault as in the library")
        // The namelist comic's pages: every image of the namelist, in natural order of its names,
        // but the one whose name holds a control character (which the library leaves out too).
        let natural = images.filter { !$0.unicodeScalars.contains { $0.value < 0x20 } }
            .sorted { $0.compare($1, options: .numeric) == .orderedAscending }
        let bytesByName = Dictionary(uniqueKeysWithValues: members.map { ($0.0, $0.1) })
        let shown = try names(mount.path("Vault/Private/namelist")).filter { $0.hasSuffix(".jpg") }
        XCTAssertEqual(shown.count, natural.count)
        for (page, source) in zip(shown, natural) {
            XCTAssertEqual(try readFile(mount.path("Vault/Private/namelist/\(page)")), bytesByName[source], "\(page) is \(source)")
        }
        XCTAssertTrue(mount.isDaemonAlive)
    }

    func testADirectoryThatLiesFailsOnlyThePagesItLiesAboutWithEIO() throws {
        // Page p3's record declares 1,000 bytes fewer than its member holds (sizes only: its local
        // header tells the truth; more would overlap the next member, which refuses the whole
        // comic, library or vault); p5's record names another member than its local header does.
        try comic("lying-size", pages.map { ($0.0, $0.1, deflated: false) }) { zip in
            zip.setSizes(ofRecord: 2, to: UInt32(self.pages[2].1.count - 1_000))
        }
        try comic("renamed", pages.map { ($0.0, $0.1, deflated: true) }) { $0.setName(ofRecord: 4, to: "q5.jpg") }
        let mount = try mount()
        for (stem, lied) in [("lying-size", "p3.jpg"), ("renamed", "q5.jpg")] {
            let shown = try names(mount.path("Vault/Private/\(stem)"))
            XCTAssertEqual(shown.count, 12, stem)
            // Pages are numbered in natural order of the names the directory gives.
            let sources = pages.map(\.0).map { stem == "renamed" && $0 == "p5.jpg" ? "q5.jpg" : $0 }
                .sorted { $0.compare($1, options: .numeric) == .orderedAscending }
            for (page, source) in zip(shown, sources) {
                let path = mount.path("Vault/Private/\(stem)/\(page)")
                if source == lied {
                    XCTAssertEqual(errnoName(readErrno(path)), errnoName(EIO), "\(stem): \(page) (\(source)) must fail")
                } else {
                    XCTAssertEqual(try readFile(path), pages.first { $0.0 == source }?.1, "\(stem): \(page) (\(source))")
                }
            }
        }
        XCTAssertTrue(mount.isDaemonAlive)
    }
}

/// A ZIP's bytes with its end record at the very end (no comment), patched in place.
struct PatchedZip {
    var data: [UInt8]
    init(_ data: [UInt8]) { self.data = data }

    private var end: Int { data.count - 22 }
    var endRecordCount: Int { le16(end + 10) }
    mutating func setEndRecordCount(_ count: Int) {
        put16(end + 8, count)
        put16(end + 10, count)
    }

    /// Where central directory record `index` starts.
    private func record(_ index: Int) -> Int {
        var at = Int(le32(end + 16))
        for _ in 0..<index { at += 46 + le16(at + 28) + le16(at + 30) + le16(at + 32) }
        precondition(le32(at) == 0x0201_4B50, "record \(index) not found")
        return at
    }

    mutating func setLocalHeaderOffset(ofRecord index: Int, to offset: UInt32) { put32(record(index) + 42, offset) }

    mutating func setSizes(ofRecord index: Int, to size: UInt32) {
        let at = record(index)
        put32(at + 20, size)
        put32(at + 24, size)
    }

    /// A name of the same length, so nothing after it moves.
    mutating func setName(ofRecord index: Int, to name: String) {
        let at = record(index)
        precondition(le16(at + 28) == name.utf8.count, "same length only")
        data.replaceSubrange((at + 46)..<(at + 46 + name.utf8.count), with: Array(name.utf8))
    }

    private func le16(_ at: Int) -> Int { Int(data[at]) | Int(data[at + 1]) << 8 }
    private func le32(_ at: Int) -> UInt32 { UInt32(le16(at)) | UInt32(le16(at + 2)) << 16 }
    private mutating func put16(_ at: Int, _ value: Int) {
        data[at] = UInt8(value & 0xFF)
        data[at + 1] = UInt8(value >> 8 & 0xFF)
    }
    private mutating func put32(_ at: Int, _ value: UInt32) {
        put16(at, Int(value & 0xFFFF))
        put16(at + 2, Int(value >> 16))
    }
}
