import Foundation
import InkyTestSupport
import XCTest

/// A vault's files are read past the kernel's page cache (direct I/O): a read reaches the daemon
/// whole, up to 1 MiB a request where readahead cut it into 128 KiB, and no page of plaintext
/// stays in the kernel once read. Image viewers map pages shared, which the kernel refuses for
/// such files (ENODEV) unless the mount's INIT granted FUSE_DIRECT_IO_ALLOW_MMAP: it must.
final class MountVaultDirectReadsTests: XCTestCase {
    /// Resident bytes of `path` in the page cache, as util-linux's fincore counts them.
    private func residentBytes(_ path: String) throws -> Int {
        let said = try ArchiveMaker.run("/usr/bin/fincore", ["--bytes", "--noheadings", "--output", "RES", path])
        return try XCTUnwrap(Int(said.trimmingCharacters(in: .whitespacesAndNewlines)), said)
    }

    /// The file's bytes through mmap(MAP_SHARED), as an image viewer maps a page.
    private func mappedShared(_ path: String) throws -> [UInt8] {
        let descriptor = open(path, O_RDONLY)
        XCTAssertGreaterThanOrEqual(descriptor, 0, "open \(path): \(errno)")
        defer { close(descriptor) }
        var info = stat()
        XCTAssertEqual(fstat(descriptor, &info), 0)
        let size = Int(info.st_size)
        let mapped = mmap(nil, size, PROT_READ, MAP_SHARED, descriptor, 0)
        guard let mapped, mapped != MAP_FAILED else {
            XCTFail("mmap(MAP_SHARED) of \(path): errno \(errno)")
            return []
        }
        defer { munmap(mapped, size) }
        return Array(UnsafeRawBufferPointer(start: mapped, count: size))
    }

    func testAVaultPageIsReadPastThePageCacheAndStillMapsShared() throws {
        let fixture = try VaultMountFixture()
        try fixture.unlock()
        let comic = "Secret Series/Moon Tales 01"
        let pages = try FileManager.default.contentsOfDirectory(atPath: fixture.path("Vault/\(comic)")).sorted()
        XCTAssertGreaterThan(pages.count, 2, "\(pages)")
        for page in pages.prefix(3) {
            let vaultPage = fixture.path("Vault/\(comic)/\(page)")
            // The same comic in the library, as the control: its pages are kept (keep_cache).
            let libraryPage = fixture.path("Moon Tales/Moon Tales 01/\(page)")
            let expected = try XCTUnwrap(FileManager.default.contents(atPath: libraryPage).map { Array($0) })
            XCTAssertGreaterThan(try residentBytes(libraryPage), 0, "fincore sees a library page the kernel kept")

            // (Compared as one truth: a page's bytes printed in a failure are no help.)
            XCTAssertTrue(FileManager.default.contents(atPath: vaultPage).map { Array($0) } == expected, "\(page) read")
            XCTAssertEqual(try residentBytes(vaultPage), 0, "\(page): read, and nothing of it left in the page cache")
            XCTAssertTrue(try mappedShared(vaultPage) == expected, "\(page) mapped shared")
        }
        XCTAssertTrue(fixture.mount.isDaemonAlive)
    }
}
