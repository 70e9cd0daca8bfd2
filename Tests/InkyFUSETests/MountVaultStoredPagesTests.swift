import Foundation
import InkyArchive
import InkyTestSupport
import InkyVault
import XCTest

/// A stored CBZ in the vault is served by the daemon decrypting each page's byte range of the
/// object itself; a deflated one still goes through a worker. Through the kernel both must read
/// exactly the original pages, a damaged chunk must fail its pages (never serve other bytes),
/// and lock must leave no reader, key or page behind, not even one a worker was still reading.
final class MountVaultStoredPagesTests: XCTestCase {
    private var folder: URL!
    private var environment: [String: String] { ["XDG_RUNTIME_DIR": folder.appendingPathComponent("run").path] }
    private var vault: String { folder.appendingPathComponent("vault").path }
    private var password: String { folder.appendingPathComponent("pw").path }
    private var comics: [String: URL] = [:]
    /// Pages of several 64 KiB chunks, none aligned to a chunk: each page's range starts and
    /// ends inside a chunk it shares with its neighbour's header or bytes.
    private let pages = (1...12).map { ("page \(String(format: "%02d", $0)).jpg", ArchiveMaker.noise(count: 150_000 + 7_919 * $0, seed: UInt64($0))) }

    override func setUpWithError() throws {
        folder = ArchiveMaker.temporaryDirectory("vault-stored")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("run"), withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("library"), withIntermediateDirectories: true)
        try "sesame\n".write(to: folder.appendingPathComponent("pw"), atomically: true, encoding: .utf8)
        XCTAssertEqual(try vaultCommand(["init"]).status, 0)
        for compression in ["stored", "deflated"] {
            let comic = folder.appendingPathComponent("\(compression).cbz")
            try ArchiveMaker.zip(at: comic, members: pages, compression: compression)
            comics[compression] = comic
            let added = try vaultCommand(["add", comic.path, "--keep", "--into", "Private"])
            XCTAssertEqual(added.status, 0, added.stderr)
        }
    }

    override func tearDown() { try? FileManager.default.removeItem(at: folder) }

    private func vaultCommand(_ arguments: [String]) throws -> CommandRunner.Result {
        try CommandRunner.inkyfs(["vault"] + arguments + ["--vault", vault, "--password-file", password], environment: environment)
    }

    private func control(_ arguments: [String]) throws -> CommandRunner.Result {
        try CommandRunner.inkyfs(["vault"] + arguments, environment: environment)
    }

    private func debugReport() throws -> [String: String] {
        Dictionary(uniqueKeysWithValues: try control(["debug"]).stdout.split(whereSeparator: \.isWhitespace).compactMap { field in
            let parts = field.split(separator: "=", maxSplits: 1).map(String.init)
            return parts.count == 2 ? (parts[0], parts[1]) : nil
        })
    }

    /// Where the vault keeps the comic shown at `displayPath` (the vault must be locked).
    private func objectPath(of displayPath: String) throws -> String {
        // Its rollback record goes to this test's folder, not to the machine's state folder.
        let previous = ProcessInfo.processInfo.environment["XDG_STATE_HOME"]
        setenv("XDG_STATE_HOME", folder.appendingPathComponent("state-home").path, 1)
        defer { if let previous { setenv("XDG_STATE_HOME", previous, 1) } else { unsetenv("XDG_STATE_HOME") } }
        let unlocked = try Vault.unlock(at: vault, password: SecureBytes(copying: Array("sesame".utf8)))
        defer { unlocked.lock() }
        return unlocked.objectPath(for: try XCTUnwrap(try unlocked.entries.first { $0.displayPath == displayPath }))
    }

    private func mount(_ extra: [String: String] = [:], arguments: [String] = []) throws -> MountedLibrary {
        try MountedLibrary(library: folder.appendingPathComponent("library"),
                           arguments: ["--vault", vault, "--state", folder.appendingPathComponent("state").path] + arguments,
                           environment: environment.merging(extra) { $1 })
    }

    func testStoredPagesReadExactlyFromTheDaemonAndADamagedChunkFailsOnlyItsPages() throws {
        let mount = try mount()
        XCTAssertEqual(try control(["unlock", "--password-file", password]).status, 0)
        var expected: [String: [(name: String, bytes: [UInt8])]] = [:]
        for (compression, comic) in comics {
            let reader = try ComicOpener.open(comic.path)
            expected[compression] = try reader.listing.pages.map { ($0.name, try reader.readPage($0)) }
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path("Vault/Private/\(compression)")).sorted(),
                           reader.listing.pages.map(\.name))
        }
        for compression in ["stored", "deflated"] {
            for page in try XCTUnwrap(expected[compression]) {
                XCTAssertEqual(try readFile(mount.path("Vault/Private/\(compression)/\(page.name)")), page.bytes, "\(compression) \(page.name)")
            }
        }
        let unlocked = try debugReport()
        XCTAssertEqual(unlocked["pagesDecryptedInDaemon"], "12", "every stored page, and no deflated one, decrypted by the daemon")
        let cached = try XCTUnwrap(Int(try XCTUnwrap(unlocked["cachedVaultPages"])))
        XCTAssertGreaterThan(cached, 0)

        XCTAssertEqual(try control(["lock"]).status, 0)
        let locked = try debugReport()
        XCTAssertEqual(locked["liveKeyBuffers"], "0", "the daemon's readers went with the lock, and their keys")
        XCTAssertEqual(locked["cachedVaultPages"], "0")
        XCTAssertEqual(locked["wipedVaultPages"], String(cached), "every cached page zeroed in place before it was released")
        XCTAssertEqual(locked["wipedVaultPagesShared"], "0", "no reply was sending one")

        // One ciphertext byte of the stored comic's object flipped, in the middle of a chunk.
        // Padded, both objects may be the same size: the manifest says which is the stored one.
        let object = try objectPath(of: "Private/stored.cbz")
        try VaultObjectTamper.flipCiphertextByte(ofObject: object, chunk: 12)

        XCTAssertEqual(try control(["unlock", "--password-file", password]).status, 0)
        var failed: [String] = []
        for page in try XCTUnwrap(expected["stored"]) {
            do {
                let bytes = try readFile(mount.path("Vault/Private/stored/\(page.name)"))
                XCTAssertEqual(bytes, page.bytes, "stored \(page.name) after the damage")
            } catch {
                failed.append(page.name)
            }
        }
        // Chunk 12 is plaintext 786,432..<851,968, inside page 5's bytes (679,395..<868,990:
        // pages of 150,000 + 7,919·k bytes, each behind a 41-byte local header), so no header
        // the listing reads is damaged. Page 5 fails; every other page still reads exactly.
        XCTAssertEqual(failed, ["005.jpg"], "only the page holding the damaged chunk fails")
        XCTAssertTrue(mount.isDaemonAlive)
    }

    /// A page's chunks come in runs (one read for many) that stay with the daemon's reader, and
    /// its neighbours' runs and one-chunk cache share chunks with it. With one chunk inside page
    /// 5 damaged: page 5 fails on every read, whichever page read first left which chunks in the
    /// reader, and so do reads of a few bytes across any of its chunks' boundaries (nothing of a
    /// page is served unless all of it is authentic); pages 4 and 6, which share page 5's first
    /// and last chunks, read exactly before and after it.
    func testADamagedChunkFailsItsPageOnEveryReadAndItsNeighboursReadExactly() throws {
        let mount = try mount()
        let reader = try ComicOpener.open(try XCTUnwrap(comics["stored"]).path)
        let stored = reader.listing.pages
        let expected = try stored.map { try reader.readPage($0) }
        // Page 5 is plaintext 679,395..<868,990 (pages of 150,000 + 7,919·k bytes, each behind a
        // 41-byte local header): chunks 10-13, of which 10 and 13 hold pages 4 and 6's ends and
        // the local headers between. Chunk 12 (786,432..<851,968) holds page 5's bytes only.
        let object = try objectPath(of: "Private/stored.cbz")
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: object))
        let damaged: UInt64 = 56 + 12 * (65_536 + 28) + 12 + 65_000   // near chunk 12's end
        try handle.seek(toOffset: damaged)
        let byte = try XCTUnwrap(handle.read(upToCount: 1)).first!
        try handle.seek(toOffset: damaged)
        handle.write(Data([byte ^ 0x01]))
        try handle.close()

        XCTAssertEqual(try control(["unlock", "--password-file", password]).status, 0)
        let folder = mount.path("Vault/Private/stored")
        func page(_ index: Int) -> String { "\(folder)/\(stored[index].name)" }
        XCTAssertEqual(try readFile(page(5)), expected[5], "page 6 first: its run is chunks 13-16")
        XCTAssertEqual(readErrno(page(4)), EIO, "page 5: its run is chunks 10-13, chunk 12 damaged")
        XCTAssertEqual(try readFile(page(3)), expected[3], "page 4: chunks 7-10")
        XCTAssertEqual(readErrno(page(4)), EIO, "page 5 again")
        XCTAssertEqual(try readFile(page(5)), expected[5], "page 6 again, after page 5's run")
        // A few bytes across each boundary of page 5's chunks (11|12, 12|13 and 10|11).
        for boundary in [786_432, 851_968, 720_896] {
            let fd = open(page(4), O_RDONLY)
            XCTAssertGreaterThanOrEqual(fd, 0)
            var few = [UInt8](repeating: 0, count: 64)
            errno = 0
            XCTAssertEqual(pread(fd, &few, 64, off_t(boundary - 679_395 - 32)), -1, "across \(boundary)")
            XCTAssertEqual(errno, EIO, "a read across the chunk boundary at \(boundary): \(errnoName(errno))")
            close(fd)
        }
        for (index, pageInfo) in stored.enumerated() where index != 4 {
            XCTAssertEqual(try readFile("\(folder)/\(pageInfo.name)"), expected[index], "\(pageInfo.name) after the damage")
        }
        XCTAssertTrue(mount.isDaemonAlive)
    }

    /// A worker still decoding a vault page when the vault locks must not put that page into
    /// the cache after lock dropped the rest: the read waiting for it fails, nothing is kept.
    /// Nor does lock wait for that worker: it kills it, key and all.
    func testAPageAWorkerFinishesAfterTheLockIsDiscarded() throws {
        // Every page read of a vault object is held while `hold` exists (the listing is not);
        // no watchdog ends the hold before this test does.
        let hold = folder.appendingPathComponent("hold")
        FileManager.default.createFile(atPath: hold.path, contents: nil)
        let mount = try mount(["INKYFS_TEST_WORKER_FAULT": "stall-read:/objects/", "INKYFS_TEST_WORKER_HOLD": hold.path],
                              arguments: ["--worker-timeout", "600"])
        XCTAssertEqual(try control(["unlock", "--password-file", password]).status, 0)
        let comic = mount.path("Vault/Private/deflated")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: comic).count, pages.count)
        let result = LockedBox<Result<[UInt8], POSIXError>?>(nil)
        let reading = DispatchGroup()
        DispatchQueue.global().async(group: reading) {
            let fd = open(comic + "/001.jpg", O_RDONLY)
            var buffer = [UInt8](repeating: 0, count: 1 << 20)
            let got = fd < 0 ? -1 : read(fd, &buffer, buffer.count)
            result.value = got < 0 ? .failure(POSIXError(POSIXErrorCode(rawValue: errno)!)) : .success(Array(buffer[0..<got]))
            if fd >= 0 { close(fd) }
        }
        // Locked once a worker is inside the read (locked before, the read would never start).
        XCTAssertTrue(waitUntil(20) { !mount.workers(withThreadNamed: "inky-stall").isEmpty }, "a worker stalls inside the page read")
        // Locked while the worker is still inside the read, which then ends while the worker is
        // still held: lock killed it rather than wait for it (the kernel's invalidation of the
        // file waited for that read).
        try mount.failingIfHung(after: 60, "the lock, and the read in flight across it") {
            XCTAssertEqual(try control(["lock"]).status, 0)
            reading.wait()
        }
        XCTAssertEqual(try debugReport()["keysInWorkers"], "0", "no worker holds a key after lock")
        try FileManager.default.removeItem(at: hold)
        switch result.value {
        case .failure(let error)?: XCTAssertEqual(error.code, .EIO, "the read that waited across the lock fails")
        case .success(let bytes)?: XCTFail("served \(bytes.count) bytes decrypted before the lock, after it")
        case nil: XCTFail("no result")
        }
        // The page in flight completes before its waiter wakes: whatever the cache kept of it
        // is there now. The prefetched pages, stalled alike, were asked for with it: once no
        // worker stalls any more, every one of them has come back too.
        XCTAssertEqual(try debugReport()["cachedVaultPages"], "0")
        XCTAssertTrue(waitUntil(20) { mount.workers(withThreadNamed: "inky-stall").isEmpty }, "the stalled reads end")
        let report = try debugReport()
        XCTAssertEqual(report["cachedVaultPages"], "0", "no page a worker finished after the lock was kept")
        XCTAssertEqual(report["unlocked"], "false")
        XCTAssertTrue(mount.isDaemonAlive)
    }
}
