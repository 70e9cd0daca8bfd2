import Foundation
import InkyArchive
import InkyCore
import InkyTestSupport
import XCTest
@testable import InkyVault
@testable import InkyWorker
@testable import InkyWorkerProcess

/// Stored pages of a vault ZIP are decrypted by the daemon from the range the worker's listing
/// names in the object's plaintext: byte for byte the members, with anything that does not fit
/// left to a worker, and nothing served or kept across a lock.
final class VaultStoredPageReaderTests: XCTestCase {
    private var dir: URL!
    private var object: String!
    private var key: SecureBytes!
    private var listing: ComicListing!
    private var identity: FileIdentity!
    /// Pages over several 64 KiB chunks, none aligned to one.
    private let members = (1...4).map { ("p\($0).jpg", ArchiveMaker.noise(count: 70_000 * $0 + 3, seed: UInt64($0))) }

    override func setUpWithError() throws {
        dir = ArchiveMaker.temporaryDirectory("vault-stored-reader")
        let archive = dir.appendingPathComponent("c.cbz")
        try ArchiveMaker.zip(at: archive, members: members)
        let plaintext = try readFile(archive.path)
        key = try SecureBytes(randomCount: 32)
        object = dir.appendingPathComponent("object").path
        let writer = try VaultObjectWriter(path: object, key: key, fileID: VaultFileID(bytes: try RandomBytes.bytes(count: 32))!,
                                           plaintextSize: UInt64(plaintext.count))
        try writer.write(plaintext)
        try writer.finish()
        // Listed as a worker lists a vault object: from its decrypted bytes.
        listing = try ComicOpener.open(bytes: VaultObjectBytes(VaultObjectReader(path: object, key: key)), label: "object").listing
        identity = try FileIdentity.of(object).get()
    }

    override func tearDown() { try? FileManager.default.removeItem(at: dir) }

    private func request(_ page: Page) -> EntryRequest {
        EntryRequest(page)
    }

    private func bytes(_ outcome: VaultStoredPageReader.Outcome) -> [UInt8]? {
        if case .read(.success(let bytes)) = outcome { return bytes }
        return nil
    }

    private func goesToAWorker(_ outcome: VaultStoredPageReader.Outcome) -> Bool {
        if case .toWorker = outcome { return true }
        return false
    }

    func testStoredPagesDecryptExactlyAndOneReaderServesThemAll() throws {
        let pages = VaultStoredPageReader()
        var keysAsked = 0
        XCTAssertEqual(listing.pages.count, members.count)
        for page in listing.pages {
            let stored = try XCTUnwrap(page.storedData, page.name)
            let outcome = pages.read(object, identity: identity, entry: request(page), stored: stored, limits: .default) {
                keysAsked += 1
                return key
            }
            XCTAssertEqual(bytes(outcome), members[page.number].1, page.name)
        }
        XCTAssertEqual(keysAsked, 1, "the reader opened for the first page is kept for the others")
        XCTAssertEqual(pages.pagesServed, members.count)

        // No idle reader and no key: not a vault object, as far as this reader knows.
        pages.dropAll()
        let page = listing.pages[0]
        guard case .locked = pages.read(object, identity: identity, entry: request(page), stored: page.storedData!,
                                                limits: .default, key: { nil }) else { return XCTFail("a path without a key") }
    }

    func testRangesThatDoNotFitAndAChangedObjectGoToAWorker() throws {
        let pages = VaultStoredPageReader()
        let page = listing.pages[1]
        let stored = try XCTUnwrap(page.storedData)
        let entry = request(page)
        func outcome(_ stored: StoredData, size: Int64? = nil, identity claimed: FileIdentity? = nil) -> VaultStoredPageReader.Outcome {
            var lying = entry
            lying.size = size ?? entry.size
            return pages.read(object, identity: claimed ?? identity, entry: lying, stored: stored, limits: .default) { key }
        }
        XCTAssertEqual(bytes(outcome(stored)), members[1].1)
        let plaintextSize = try XCTUnwrap(VaultObjectReader(path: object, key: key).size)
        for (lie, size) in [(StoredData(offset: -1, crc32: stored.crc32), nil),
                            (StoredData(offset: Int64(plaintextSize) - 10, crc32: stored.crc32), nil),
                            (StoredData(offset: Int64.max - 2, crc32: stored.crc32), nil),
                            // Inside the object but not the page's bytes: the CRC-32 says no.
                            (StoredData(offset: stored.offset - 1, crc32: stored.crc32), nil),
                            (StoredData(offset: stored.offset, crc32: stored.crc32 ^ 1), nil),
                            (stored, Int64(-5)), (stored, ComicLimits.default.maxPageBytes + 1)] as [(StoredData, Int64?)] {
            XCTAssertTrue(goesToAWorker(outcome(lie, size: size)), "\(lie) \(String(describing: size))")
        }
        var stale = identity!
        stale.modifiedNanoseconds += 1
        XCTAssertTrue(goesToAWorker(outcome(stored, identity: stale)), "an object that is not the listed file")
        XCTAssertEqual(bytes(outcome(stored)), members[1].1, "and the next good read still reads")
        XCTAssertEqual(pages.pagesServed, 2)
    }

    func testALockDuringTheReadDiscardsThePageAndItsReader() throws {
        let pages = VaultStoredPageReader()
        let page = listing.pages[2]
        // The key is asked for after the read began: dropping everything then is a lock that
        // comes while the page is being read.
        let outcome = pages.read(object, identity: identity, entry: request(page), stored: page.storedData!, limits: .default) {
            pages.dropAll()
            return key
        }
        guard case .read(.failure(.io(_, EIO, let detail))) = outcome else { return XCTFail("\(outcome)") }
        XCTAssertTrue(detail.contains("locked"), detail)
        XCTAssertEqual(pages.pagesServed, 0)
        guard case .locked = pages.read(object, identity: identity, entry: request(page), stored: page.storedData!,
                                                limits: .default, key: { nil }) else { return XCTFail("the reader was kept") }
    }

    func testThePoolServesVaultPagesWithoutAWorkerAndNothingOnceTheKeyIsRevoked() throws {
        // No worker can start: what is read must come from the pool itself.
        let workers = WorkerPool(.init(executable: "/nonexistent/inkyfs", maxWorkers: 1, timeout: 5))
        defer { workers.shutdown() }
        let key = VaultObjectKey(self.key!), object = self.object!
        let requests = listing.pages.map(request)
        var got: [PageSource: [UInt8]] = [:]
        try workers.read(.vaultObject(object, key: key), identity: identity, entries: requests, limits: .default) { index, result in
            got[index] = try? result.get()
        }
        for page in listing.pages { XCTAssertEqual(got[page.source], members[page.number].1, page.name) }
        XCTAssertEqual(workers.vaultPagesDecryptedHere, members.count)

        // Locked: the key revoked while the pool still keeps a reader of the object. The request
        // that carries it reads nothing, from the kept reader or the file.
        key.revoke()
        var failures: [String] = []
        try workers.read(.vaultObject(object, key: key), identity: identity, entries: Array(requests.prefix(2)), limits: .default) { _, result in
            guard case .failure(.io(_, EIO, let detail)) = result else { return XCTFail("\(result)") }
            failures.append(detail)
        }
        XCTAssertEqual(failures.count, 2)
        XCTAssertTrue(failures.allSatisfy { $0.contains("locked") }, "\(failures)")
        // Asked for as a library file, the object's bytes are ciphertext and fail the CRC-32.
        try workers.read(object, identity: identity, entries: Array(requests.prefix(1)), limits: .default) { index, result in
            guard case .failure(.corrupted(_, let detail)) = result else { return XCTFail("\(result)") }
            XCTAssertTrue(detail.contains("CRC-32"), detail)
        }
        XCTAssertEqual(workers.vaultPagesDecryptedHere, members.count)
        // A listing (a worker's request) is not even sent: no worker starts for it.
        XCTAssertThrowsError(try workers.list(.vaultObject(object, key: key), limits: .default)) { error in
            guard case ComicError.io(_, EIO, let detail) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(detail.contains("locked"), detail)
        }
    }
}
