import Foundation
import InkyCore
import InkyStore
import InkyTestSupport
import XCTest
@testable import InkyLibrary

/// KOReader's partial MD5, as inkyfs computes it, against Python's hashlib doing what KOReader's
/// util.partialMD5 does: of files whose size ends a sample short, exactly, or past several; of
/// the CBZ served for a comic (the golden digest a real mount's CBZ has too); and a comic found
/// again by either digest, with its page count.
final class KOReaderDigestTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "needs python3")
        folder = ArchiveMaker.temporaryDirectory("koreader-digest")
    }

    // Nil when setUp skipped (no python3): unwrapping it then would crash the whole run.
    override func tearDown() { if let folder { try? FileManager.default.removeItem(at: folder) } }

    func testFileDigestsMatchKOReadersOwnAlgorithm() throws {
        // Empty; one short sample; exactly one sample (the second read is empty); a short sample
        // at 4 KiB; past 1 MiB (eight samples); and a real comic.
        var paths: [String] = []
        for (number, size) in [0, 700, 1024, 5_000, 1_300_000].enumerated() {
            let path = folder.appendingPathComponent("file\(number)").path
            try Data(ArchiveMaker.noise(count: size, seed: UInt64(number) * 2 + 1)).write(to: URL(fileURLWithPath: path))
            paths.append(path)
        }
        paths.append(Corpus.fixture("Moon Tales/Moon Tales 01.cb7"))
        let ours = try paths.map { path -> String in
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            defer { close(descriptor) }
            let size = try XCTUnwrap(statSize(path))
            return try XCTUnwrap(KOReaderDigest.digest(descriptor: descriptor, size: size))
        }
        XCTAssertEqual(ours, try PartialMD5.python(paths))
        XCTAssertEqual(ours[0], "d41d8cd98f00b204e9800998ecf8427e", "nothing read: the MD5 of no bytes")
        XCTAssertEqual(KOReaderDigest.offsets, [0, 1024, 4096, 16_384, 65_536, 262_144, 1 << 20, 1 << 22, 1 << 24, 1 << 26, 1 << 28, 1 << 30])
    }

    func testAComicIsFoundByTheDigestOfItsFileAndOfItsCBZ() throws {
        let library = try PartialMD5.goldenLibrary()
        defer { try? FileManager.default.removeItem(at: library) }
        let state = StateDatabase.open(at: folder.appendingPathComponent("state.sqlite").path)
        let filesystem = LibraryFilesystem(library: library.path, options: MountOptions(),
                                           backend: LibraryFilesystemTests.InProcessBackend(), state: state)
        let comic = ComicRef.library("Moon Tales 02.cbt")
        XCTAssertEqual(try filesystem.koreaderCBZDigest(comic).get(), PartialMD5.goldenCBZ,
                       "the CBZ's bytes changed: every KOReader that synced a served comic would lose it")
        let file = library.appendingPathComponent("Moon Tales 02.cbt").path
        let fileDigest = try XCTUnwrap(PartialMD5.python([file]).first)
        let expected = KOReaderDocument(comic: comic, file: LibraryFile(path: file), pageCount: 6)
        XCTAssertEqual(filesystem.document(forKOReaderDigest: PartialMD5.goldenCBZ), expected)
        XCTAssertEqual(filesystem.document(forKOReaderDigest: fileDigest), expected)
        XCTAssertNil(filesystem.document(forKOReaderDigest: "0123456789abcdef0123456789abcdef"))

        // Changed on disk: neither digest names it any more until it is digested again.
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: PartialMD5.goldenModified + 10)], ofItemAtPath: file)
        XCTAssertNil(filesystem.document(forKOReaderDigest: PartialMD5.goldenCBZ))
        XCTAssertNotEqual(try filesystem.koreaderCBZDigest(comic).get(), PartialMD5.goldenCBZ, "the CBZ is dated by the comic")
    }

    func testADigestPassCoversEveryListedComicOnce() throws {
        let library = ArchiveMaker.temporaryDirectory("digest-lib")
        defer { try? FileManager.default.removeItem(at: library) }
        for (number, name) in ["A", "B", "C"].enumerated() {
            try ArchiveMaker.zip(at: library.appendingPathComponent("\(name).cbz"), members: [("1.jpg", ArchiveMaker.noise(count: 3_000, seed: UInt64(number) * 2 + 1))])
        }
        let state = StateDatabase.open(at: folder.appendingPathComponent("state.sqlite").path)
        let filesystem = LibraryFilesystem(library: library.path, options: MountOptions(),
                                           backend: LibraryFilesystemTests.InProcessBackend(), state: state)
        // Listed as `ls` of each comic lists it (a lookup alone, a `stat`, does not list it).
        for name in ["A", "B", "C"] { _ = try filesystem.unnumberedEntries(of: filesystem.lookup(name, in: filesystem.rootNode).get().node).get() }
        filesystem.finishStateWrites()
        XCTAssertEqual(filesystem.digestLibraryFiles(), 3)
        XCTAssertEqual(filesystem.digestLibraryFiles(), 0, "kept: nothing to do again")
        let digests = try PartialMD5.python(["A", "B", "C"].map { library.appendingPathComponent("\($0).cbz").path })
        XCTAssertEqual(Set(digests).count, 3)
        for (name, digest) in zip(["A", "B", "C"], digests) {
            XCTAssertEqual(filesystem.document(forKOReaderDigest: digest)?.comic, .library("\(name).cbz"))
        }
    }
}
