import InkyTestSupport
import XCTest
@testable import InkyArchive
@testable import InkyCore

/// Every file of the shared corpus (minus the ones libarchive itself crashes or hangs on,
/// which only the isolated workers may touch) must give what its MANIFEST says, with typed
/// errors and no crash, reading every page it lists.
final class CorpusTests: XCTestCase {
    func testEveryCorpusFileMatchesItsManifestStatus() throws {
        let files = Corpus.manifest.filter { !Corpus.knownHostile.contains($0.path) }
        try XCTSkipIf(files.isEmpty, "../shared/corpus is missing")
        var outcomes: [String: Int] = [:]
        for file in files {
            let status = file.expected.status
            let result: Result<ComicListing, ComicError>
            do throws(ComicError) {
                let reader = try ComicOpener.open(Corpus.path(file.path))
                for page in reader.listing.pages {
                    do throws(ComicError) { _ = try reader.readPage(page) } catch {
                        // A listed page that will not read is acceptable only where the manifest expects trouble.
                        XCTAssertNotEqual(status, "ok", "\(file.path): \(error)")
                    }
                }
                result = .success(reader.listing)
            } catch {
                result = .failure(error)
            }
            switch (status, result) {
            case ("ok", .success(let listing)):
                XCTAssertEqual(listing.pages.map(\.sourcePath), file.expected.pages.map(\.entry), file.path)
                outcomes["ok", default: 0] += 1
            case ("error", .failure), ("error_or_empty", .failure), ("empty", .failure(.noPages)):
                outcomes["rejected", default: 0] += 1
            case ("pdf_only", .success(let listing)):
                // "Pages only with PDF support": the comicbox PDFs are four text pages, rendered.
                XCTAssertEqual(listing.format, .pdf, file.path)
                XCTAssertEqual(listing.pages.count, 4, file.path)
                outcomes["pdf", default: 0] += 1
            case ("empty", .success(let listing)), ("error_or_empty", .success(let listing)):
                // Test archives hold text and binaries; a few hold images the manifest's reference
                // rule leaves out (.tif, .jp2 and friends, which we accept as pages). None may pass otherwise.
                let extra = listing.pages.filter { !["tif", "tiff", "heic", "heif", "jp2", "j2k"].contains(EntryPath.lowercasedExtension(of: $0.sourcePath)) }
                XCTAssertEqual(extra.map(\.sourcePath), [], "\(file.path) should have no pages")
                outcomes["empty", default: 0] += 1
            case ("empty", .failure(.notAComicArchive)) where file.libarchiveFormat == nil:
                // libarchive's tar bidder accepts this fuzzed block with zero entries; nothing to serve either way.
                outcomes["rejected", default: 0] += 1
            case ("empty", .failure(.encrypted)) where file.path.hasSuffix("rar5_only_crypt_exfld.rar"):
                // Its one entry carries a RAR5 encryption record: "encrypted" says more than "no pages".
                outcomes["rejected", default: 0] += 1
            case ("empty", .failure(let error)):
                XCTFail("\(file.path) is a readable archive but failed: \(error)")
            default:
                XCTFail("\(file.path): expected \(status), got \(result)")
            }
        }
        print("corpus outcomes: \(outcomes.sorted { $0.key < $1.key })")
        XCTAssertEqual(outcomes.values.reduce(0, +), files.count)
    }

    func testEncryptedArchivesSayEncrypted() throws {
        let encrypted = ["real-comics/patool/p.cbz", "rarfile-tests/rar5-psw.rar", "rarfile-tests/rar5-hpsw.rar",
                         "rarfile-tests/rar3-comment-psw.rar", "rarfile-tests/rar3-comment-hpsw.rar",
                         "py7zr-tests/encrypted_3.7z", "libarchive-tests/test_read_format_zip_winzip_aes256.zip"]
        try Corpus.skipUnlessPresent(encrypted[0])
        for file in encrypted {
            XCTAssertThrowsError(try ComicOpener.open(Corpus.path(file)), file) { error in
                guard case ComicError.encrypted = error else { return XCTFail("\(file): \(error)") }
            }
        }
    }

    func testUnsupportedAndNonArchivesAreRejectedInWords() throws {
        let ace = Corpus.path("real-comics/patool/t.cba")
        try Corpus.skipUnlessPresent("real-comics/patool/t.cba")
        XCTAssertThrowsError(try ComicOpener.open(ace)) { error in
            XCTAssertEqual((error as? ComicError)?.kind, "unsupported-format")
            XCTAssertTrue((error as? ComicError)?.message.contains("ACE") ?? false)
        }
        XCTAssertThrowsError(try ComicOpener.open(Corpus.fixture("Broken/Not A Comic.cbr"))) { error in
            XCTAssertEqual(error as? ComicError, .notAComicArchive(path: Corpus.fixture("Broken/Not A Comic.cbr")))
        }
    }
}
