import Foundation
import InkyTestSupport
import InkyVault
import XCTest

/// PDF comics in the vault, through a real mount: MuPDF reads the object through its chunks,
/// decrypted as it seeks, in the worker given that object's key. A vault PDF's pages are the
/// library's (the embedded images byte for byte, the same renders), a damaged chunk fails only
/// the page it holds, lock takes the pages away, and none of their bytes reach the disk.
final class MountVaultPDFTests: XCTestCase {
    private var folder: URL!
    private var environment: [String: String] { ["XDG_RUNTIME_DIR": folder.appendingPathComponent("run").path] }
    private var vault: String { folder.appendingPathComponent("vault").path }
    private var password: String { folder.appendingPathComponent("pw").path }
    /// Where the daemon may write: its cache (covers, converted pages, pages kept to resume), its
    /// state home (logs) and its state database. Outside the mount's own folders, so they are
    /// still there to scan once it has exited.
    private var cache: URL { folder.appendingPathComponent("cache") }
    private var stateHome: URL { folder.appendingPathComponent("state-home") }
    private var state: URL { folder.appendingPathComponent("state") }

    override func setUpWithError() throws {
        folder = ArchiveMaker.temporaryDirectory("vault-pdf")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("run"), withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        for sub in ["library/Series", "scratch/issue", "scratch/secret"] {
            try FileManager.default.createDirectory(at: folder.appendingPathComponent(sub), withIntermediateDirectories: true)
        }
        try "sesame\n".write(toFile: password, atomically: true, encoding: .utf8)
    }

    override func tearDown() { try? FileManager.default.removeItem(at: folder) }

    private func vaultCommand(_ arguments: [String]) throws -> CommandRunner.Result {
        try CommandRunner.inkyfs(["vault"] + arguments + ["--vault", vault, "--password-file", password], environment: environment)
    }

    private func control(_ arguments: [String]) throws -> CommandRunner.Result {
        try CommandRunner.inkyfs(["vault"] + arguments, environment: environment)
    }

    /// A PDF of these images embedded unchanged, then `vectorPages` pages of shapes and text (rendered).
    private func makePDF(at url: URL, images: [URL], vectorPages: Int, vectorHeight: Double) throws {
        let parts = folder.appendingPathComponent("scratch/\(url.deletingPathExtension().lastPathComponent)")
        let scans = parts.appendingPathExtension("scans.pdf"), vector = parts.appendingPathExtension("vector.pdf")
        try PDFMaker.imagePDF(at: scans, images: images)
        try PDFMaker.vectorPDF(at: vector, pages: vectorPages, height: vectorHeight)
        try PDFMaker.concatenate([scans, vector], into: url)
    }

    /// Where the vault keeps the comic shown at `displayPath` (the vault must be locked).
    private func objectPath(of displayPath: String) throws -> String {
        // Its rollback record goes to this test's folder, not to the machine's state folder.
        let previous = ProcessInfo.processInfo.environment["XDG_STATE_HOME"]
        setenv("XDG_STATE_HOME", stateHome.path, 1)
        defer { if let previous { setenv("XDG_STATE_HOME", previous, 1) } else { unsetenv("XDG_STATE_HOME") } }
        let unlocked = try Vault.unlock(at: vault, password: SecureBytes(copying: Array("sesame".utf8)))
        defer { unlocked.lock() }
        return unlocked.objectPath(for: try XCTUnwrap(try unlocked.entries.first { $0.displayPath == displayPath }))
    }

    /// A comic folder's pages (covers add `.directory` beside them).
    private func pages(_ comic: String, _ mount: MountedLibrary) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: mount.path(comic)).filter { !$0.hasPrefix(".") }.sorted()
    }

    /// Bytes as a digest, so a failure prints two lines, not two pages.
    private func digest(_ bytes: [UInt8]) -> String { Digest.sha256Hex(bytes) }

    func testAVaultPDFReadsAsTheLibrarysAndNothingOfItReachesTheDisk() throws {
        // In the library and (a copy) in the vault: four scans embedded unchanged, two rendered pages.
        let issueImages = try PDFMaker.pageImages(in: folder.appendingPathComponent("scratch/issue"),
                                                  kinds: ["jpeg-rgb", "png-rgb", "png-gray", "jpeg-gray"])
        let issue = folder.appendingPathComponent("library/Series/Issue 7.pdf")
        try makePDF(at: issue, images: issueImages, vectorPages: 2, vectorHeight: 738)
        // Only ever in the vault: larger scans (a page spans several 64 KiB chunks), another render.
        let secretImages = try PDFMaker.pageImages(in: folder.appendingPathComponent("scratch/secret"),
                                                   kinds: ["jpeg-rgb", "png-gray", "jpeg-rgb"], width: 900, height: 1_350)
        let secret = folder.appendingPathComponent("scratch/Nightshade.pdf")
        try makePDF(at: secret, images: secretImages, vectorPages: 1, vectorHeight: 700)
        let secretPDF = try readFile(secret.path)

        XCTAssertEqual(try vaultCommand(["init"]).status, 0)
        for (comic, into, keep) in [(issue, "Private", true), (secret, "Secret", false)] {
            let added = try vaultCommand(["add", comic.path, "--into", into] + (keep ? ["--keep"] : []))
            XCTAssertEqual(added.status, 0, added.stderr)
        }
        let mount = try MountedLibrary(library: folder.appendingPathComponent("library"),
                                       arguments: ["--vault", vault, "--state", state.path],
                                       environment: environment.merging(["XDG_CACHE_HOME": cache.path, "XDG_STATE_HOME": stateHome.path]) { $1 },
                                       covers: true)
        XCTAssertEqual(try control(["unlock", "--password-file", password]).status, 0)

        // The vault's copy lists and reads as the library's: exact sizes before any read, the
        // scans as the files img2pdf embedded, the rendered pages as the library renders them.
        let names = try pages("Series/Issue 7", mount)
        XCTAssertEqual(names, ["001.jpg", "002.png", "003.png", "004.jpg", "005.png", "006.png"])
        XCTAssertEqual(try pages("Vault/Private/Issue 7", mount), names)
        for (index, name) in names.enumerated() {
            let inVault = "Vault/Private/Issue 7/\(name)"
            let size = statSize(mount.path(inVault))
            let bytes = try readFile(mount.path(inVault))
            XCTAssertEqual(size, Int64(bytes.count), "\(name): its exact size before the read")
            XCTAssertEqual(digest(bytes), digest(try readFile(mount.path("Series/Issue 7/\(name)"))), "\(name): the library's page")
            if index < issueImages.count { XCTAssertEqual(digest(bytes), digest(try readFile(issueImages[index].path)), "\(name): the embedded image") }
        }

        let secretNames = try pages("Vault/Secret/Nightshade", mount)
        XCTAssertEqual(secretNames, ["001.jpg", "002.png", "003.jpg", "004.png"])
        guard secretNames.count == 4 else { return }
        var secretPages: [[UInt8]] = []
        for (index, name) in secretNames.enumerated() {
            let bytes = try readFile(mount.path("Vault/Secret/Nightshade/\(name)"))
            if index < secretImages.count { XCTAssertEqual(digest(bytes), digest(try readFile(secretImages[index].path)), "\(name): the embedded image") }
            secretPages.append(bytes)
        }
        XCTAssertEqual(Array(secretPages[3].prefix(4)), [0x89, 0x50, 0x4E, 0x47], "the vector page rendered to PNG")
        XCTAssertEqual(statSize(mount.path("Vault/Secret/Nightshade/004.png")), Int64(secretPages[3].count))

        // Covers as for any vault comic (from memory), and the library's on disk as ever.
        XCTAssertTrue(waitUntil(30) { FileManager.default.fileExists(atPath: mount.path("Vault/Secret/folder.jpg")) }, mount.logText)
        XCTAssertEqual(Array(try readFile(mount.path("Vault/Secret/folder.jpg")).prefix(2)), [0xFF, 0xD8])
        XCTAssertTrue(waitUntil(30) { FileManager.default.fileExists(atPath: mount.path("Series/folder.jpg")) }, mount.logText)
        XCTAssertFalse(try readFile(mount.path("Series/folder.jpg")).isEmpty)

        // Lock: the open page reads EIO, the names answer ENOENT.
        let open = try XCTUnwrap(FileHandle(forReadingAtPath: mount.path("Vault/Secret/Nightshade/001.jpg")))
        XCTAssertEqual(try control(["lock"]).status, 0)
        XCTAssertEqual(errnoName(readErrno(descriptor: open.fileDescriptor)), errnoName(EIO), "an open vault file reads EIO after lock")
        try? open.close()
        XCTAssertEqual(errnoName(readErrno(mount.path("Vault/Secret/Nightshade/002.png"))), errnoName(ENOENT))
        XCTAssertFalse(FileManager.default.fileExists(atPath: mount.path("Vault")))

        // One ciphertext byte flipped in a chunk that holds nothing but the first scan's bytes.
        let scan = try readFile(secretImages[0].path)
        let start = try XCTUnwrap(Data(secretPDF).range(of: Data(scan))?.lowerBound, "the scan is embedded unchanged")
        let chunk = (start + 65_535) / 65_536
        XCTAssertLessThanOrEqual((chunk + 1) * 65_536, start + scan.count, "a chunk lies inside the scan (\(scan.count) bytes)")
        try VaultObjectTamper.flipCiphertextByte(ofObject: try objectPath(of: "Secret/Nightshade.pdf"), chunk: chunk)

        XCTAssertEqual(try control(["unlock", "--password-file", password]).status, 0)
        XCTAssertEqual(statSize(mount.path("Vault/Secret/Nightshade/001.jpg")), Int64(scan.count), "the listing reads no scan")
        XCTAssertEqual(errnoName(readErrno(mount.path("Vault/Secret/Nightshade/001.jpg"))), errnoName(EIO), "the damaged page fails")
        XCTAssertEqual(digest(try readFile(mount.path("Vault/Secret/Nightshade/003.jpg"))), digest(secretPages[2]), "the pages after it still read")
        XCTAssertEqual(digest(try readFile(mount.path("Vault/Secret/Nightshade/002.png"))), digest(secretPages[1]))
        XCTAssertEqual(digest(try readFile(mount.path("Vault/Secret/Nightshade/004.png"))), digest(secretPages[3]))
        XCTAssertEqual(errnoName(readErrno(mount.path("Vault/Secret/Nightshade/001.jpg"))), errnoName(EIO), "and it fails again")
        XCTAssertTrue(mount.isDaemonAlive)
        XCTAssertEqual(try control(["lock"]).status, 0)
        XCTAssertEqual(mount.unmount(), 0)

        // Nothing of the vault-only comic on disk, the daemon gone and its state written: no
        // file of the cache, the logs or the state database holds a piece of any of its pages.
        func files(under root: URL) -> [URL] {
            (FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)?.allObjects as? [URL] ?? [])
                .filter { (try? $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true }
        }
        func holding(_ page: [UInt8], under root: URL) -> [String] {
            let middle = Data(page[(page.count / 2)..<(page.count / 2 + 4_096)])
            return files(under: root).filter { (try? Data(contentsOf: $0))?.range(of: middle) != nil }.map(\.lastPathComponent)
        }
        XCTAssertEqual(holding(try readFile(issueImages[0].path), under: folder.appendingPathComponent("library")), ["Issue 7.pdf"],
                       "the scan finds a page where it is")
        let scanned = [cache, stateHome, state].flatMap { files(under: $0) }.map(\.lastPathComponent)
        XCTAssertTrue(scanned.contains("state.sqlite"), "\(scanned)")
        XCTAssertTrue(scanned.contains { $0.hasSuffix(".jpg") }, "the library's cover is in the cache: \(scanned)")
        for (index, page) in secretPages.enumerated() {
            for root in [cache, stateHome, state] {
                XCTAssertEqual(holding(page, under: root), [], "page \(index + 1) of the vault comic under \(root.lastPathComponent)")
            }
        }
    }
}
