import Foundation
import InkyCore
import InkyTestSupport
import Synchronization
import XCTest
@testable import InkyLibrary
import InkyVault
import InkyWorker

/// The vault through the library core alone, no mount: unlock, read a vault page (decrypted by a
/// real worker given the key its request carries), lock, and see it gone; and a read in flight
/// when the vault locks, whose key is revoked under it and whose page is never kept.
final class VaultSessionTests: XCTestCase {
    /// The worker pool, with a gate that can hold a page request before it reaches the pool.
    final class GatedBackend: ComicBackend {
        let pool: WorkerPool
        /// (arrived, go on): set, the next read signals the first and waits for the second.
        let gate = Mutex<(arrived: DispatchSemaphore, proceed: DispatchSemaphore)?>(nil)
        /// The sources of the reads asked, in order.
        let reads = Mutex<[ComicSource]>([])

        init(_ pool: WorkerPool) { self.pool = pool }

        func list(_ source: ComicSource, limits: ComicLimits) throws(ComicError) -> (ComicListing, FileIdentity) {
            try pool.list(source, limits: limits)
        }

        func read(_ source: ComicSource, identity: FileIdentity, entries: [EntryRequest], limits: ComicLimits,
                  deliver: (PageSource, Result<[UInt8], ComicError>) -> Void) throws(ComicError) {
            reads.withLock { $0.append(source) }
            if let gate = gate.withLock({ gate in defer { gate = nil }; return gate }) {
                gate.arrived.signal()
                gate.proceed.wait()
            }
            try pool.read(source, identity: identity, entries: entries, limits: limits, deliver: deliver)
        }

        func comicInfo(_ source: ComicSource, identity: FileIdentity, limits: ComicLimits) throws(ComicError) -> [UInt8]? {
            try pool.comicInfo(source, identity: identity, limits: limits)
        }

        func vaultLocked() { pool.vaultLocked() }
    }

    private var folder: URL!

    override func setUp() { folder = ArchiveMaker.temporaryDirectory("vault-session") }
    override func tearDown() { try? FileManager.default.removeItem(at: folder) }

    private func page(_ filesystem: LibraryFilesystem, _ comic: ComicRef, _ generation: Int, _ index: Int) -> Result<[UInt8], Errno> {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<Result<[UInt8], Errno>?>(nil)
        filesystem.readPage(comic, generation: generation, index: index) { got in
            result.withLock { $0 = got }
            done.signal()
        }
        done.wait()
        return result.withLock { $0! }
    }

    func testUnlockReadLockThroughTheCoreAndAReadInFlightKeepsNoKey() throws {
        let keysBefore = SecureBytes.liveCount
        let pages = (1...6).map { (String(format: "p%02d.jpg", $0), (0..<30_000).map { _ in UInt8.random(in: 0...255) }) }
        let comic = folder.appendingPathComponent("Secret.cbz")
        // Deflated: every page is a worker's, which is sent the key with the request.
        try ArchiveMaker.zip(at: comic, members: pages, compression: "deflated")
        let library = folder.appendingPathComponent("library")
        try FileManager.default.createDirectory(at: library, withIntermediateDirectories: true)
        let directory = folder.appendingPathComponent("vault").path
        let password = { SecureBytes(copying: Array("sesame".utf8)) }
        try Vault.create(at: directory, password: password(), kdf: .pbkdf2SHA256(iterations: 1_000))
        let unlocked = try Vault.unlock(at: directory, password: password())
        let entry = try unlocked.add(file: comic.path, displayPath: "Shelf/Secret.cbz")

        let pool = WorkerPool(.init(executable: CommandRunner.workerBinary.path, maxWorkers: 2, timeout: 20))
        defer { pool.shutdown() }
        let backend = GatedBackend(pool)
        var options = MountOptions()
        options.window = WindowPolicy(window: 5, prefetch: 0)
        let filesystem = LibraryFilesystem(library: library.path, options: options, backend: backend)
        // Another part's hook, after the library's.
        let order = Mutex<[String]>([])
        filesystem.vault.whenLocking { [vault = filesystem.vault] shown in
            // The vault already answers nothing and its pages are gone; its entries are given.
            order.withLock { $0.append("\(shown.count) shown, unlocked \(vault.isUnlocked), \(vault.cachedPages) cached") }
        }

        // The vault's own views: their trees are made in the background at unlock.
        let views = try XCTUnwrap(filesystem.vault.views)
        let made = DispatchSemaphore(value: 0)
        views.changed = { made.signal() }
        filesystem.vault.unlock(unlocked)
        XCTAssertEqual(made.wait(timeout: .now() + 20), .success, "the views' trees were made")
        XCTAssertFalse(views.current().trees.values.allSatisfy(\.isEmpty), "the comic is in the vault's views")
        let ref = ComicRef.vault(entry.name)
        guard case .success(let (_, snapshot)) = filesystem.currentComic(ref), case .success(let listing) = snapshot.listing else {
            return XCTFail("the vault comic lists")
        }
        XCTAssertEqual(listing.pages.map(\.sourcePath), pages.map(\.0))
        XCTAssertEqual(try page(filesystem, ref, snapshot.generation, 0).get(), pages[0].1, "a vault page, decrypted by a worker")
        XCTAssertEqual(filesystem.vault.cachedPages, 1)
        XCTAssertEqual(pool.workersHoldingKeys, 1)
        guard case .vaultObject(let object, let key)? = backend.reads.withLock({ $0.first }) else { return XCTFail("a vault object's read") }
        XCTAssertEqual(object, unlocked.objectPath(for: entry))
        XCTAssertNotNil(key.current)

        // A read held on its way to the pool while the vault locks.
        let gate = (arrived: DispatchSemaphore(value: 0), proceed: DispatchSemaphore(value: 0))
        backend.gate.withLock { $0 = gate }
        let inFlight = Mutex<Result<[UInt8], Errno>?>(nil)
        let finished = DispatchSemaphore(value: 0)
        filesystem.readPage(ref, generation: snapshot.generation, index: 3) { got in
            inFlight.withLock { $0 = got }
            finished.signal()
        }
        gate.arrived.wait()
        XCTAssertTrue(filesystem.vault.lock())
        XCTAssertNil(key.current, "lock revoked the key the read in flight carries")
        gate.proceed.signal()
        finished.wait()
        XCTAssertEqual(inFlight.withLock { $0 }.map { result in result.map(\.count) }, .failure(.EIO), "nothing read once locked")

        XCTAssertEqual(order.withLock { $0 }, ["1 shown, unlocked false, 0 cached"])
        XCTAssertFalse(filesystem.vault.isUnlocked)
        XCTAssertNil(filesystem.vault.entries)
        XCTAssertTrue(views.current().trees.isEmpty, "the views' trees went with the names")
        XCTAssertNil(filesystem.vault.source(entry.name))
        XCTAssertEqual(filesystem.vault.cachedPages, 0)
        // Zeroed where it lay, or (a reply still holding it) its copy in the cache.
        let wiped = filesystem.vault.wipedPages
        XCTAssertEqual(wiped.inPlace + wiped.shared, 1, "the page read was zeroed at lock")
        // The worker that read page 1 may still be on its way back to the pool (its reply came
        // first): lock retired the idle ones, and it is stopped as it checks in.
        let deadline = Date() + 10
        while pool.workersHoldingKeys > 0, Date() < deadline { usleep(10_000) }
        XCTAssertEqual(pool.workersHoldingKeys, 0, "no worker keeps the key")
        XCTAssertNil(filesystem.comicState(ref), "the library forgot the vault's comics")
        XCTAssertEqual(SecureBytes.liveCount, keysBefore, "no key buffer left: the vault's, the object's, the pool's readers'")
        XCTAssertEqual(filesystem.vault.lock(), false, "locked once")
    }
}
