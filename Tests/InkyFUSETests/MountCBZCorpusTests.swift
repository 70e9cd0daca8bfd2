import Foundation
import InkyTestSupport
import XCTest

/// `--as cbz` over the real libraries: every comic of Fixtures/ and of the corpus's real comics
/// that the folder view shows with pages (archives of every format, PDFs and folders of loose
/// images) is a CBZ that every ZIP reader accepts, holding the folder view's pages byte for byte.
final class MountCBZCorpusTests: XCTestCase {
    func testEveryFixtureComicIsAValidCBZ() throws {
        let checked = try checkEveryComic(in: Corpus.fixtures)
        XCTAssertTrue(checked.contains("Loose Sketches"), "the folder of loose images: \(checked)")
        XCTAssertGreaterThanOrEqual(checked.count, 6, "\(checked)")
    }

    func testEveryRealComicOfTheCorpusIsAValidCBZ() throws {
        let real = Corpus.root.appendingPathComponent("real-comics")
        try Corpus.skipUnlessPresent("real-comics")
        let checked = try checkEveryComic(in: real)
        // The manifest's readable comics, each shown with pages by the folder view.
        let readable = Corpus.manifest.filter { $0.path.hasPrefix("real-comics/") && $0.expected.status == "ok" }
        XCTAssertGreaterThanOrEqual(checked.count, readable.count, "\(checked)")
    }

    /// Whether the folder view's `relative` is a PDF's pages: the library has `relative.pdf`.
    private func isPDF(_ library: URL, _ relative: String) -> Bool {
        FileManager.default.fileExists(atPath: library.appendingPathComponent(relative + ".pdf").path)
            || FileManager.default.fileExists(atPath: library.appendingPathComponent(relative + ".PDF").path)
    }

    /// Mounts `library` both ways; every directory of the folder view holding pages only (a
    /// comic) must be a valid CBZ at the same place in the CBZ view. Returns the comics checked.
    private func checkEveryComic(in library: URL) throws -> [String] {
        let folders = try MountedLibrary(library: library, arguments: ["--no-list-ahead", "--no-continue"])
        let files = try MountedLibrary(library: library, arguments: ["--as", "cbz", "--no-list-ahead", "--no-continue"])
        defer {
            XCTAssertEqual(files.unmount(), 0)
            XCTAssertEqual(folders.unmount(), 0)
        }
        var checked: [String] = []
        let walker = FileManager.default.enumerator(atPath: folders.path(""))
        while let relative = walker?.nextObject() as? String {
            let path = folders.path(relative)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else { continue }
            let names = try FileManager.default.contentsOfDirectory(atPath: path).filter { !$0.hasPrefix(".") }
            let pages = names.filter { !$0.hasSuffix(".txt") && !FileManager.default.fileExists(atPath: path + "/" + $0 + "/.") }
            guard !pages.isEmpty, pages.count == names.count else { continue }
            // A comic archive's directory or a library folder of loose images (the only folders
            // the folder view shows as they are on disk).
            let loose = FileManager.default.fileExists(atPath: library.appendingPathComponent(relative).path + "/.")
            let cbz = files.path(relative + ".cbz")
            var info = stat()
            XCTAssertEqual(lstat(cbz, &info), 0, "\(relative).cbz is missing")
            XCTAssertEqual(info.st_mode & S_IFMT, S_IFREG, relative)
            CBZChecks.assertValid(cbz, pagesIn: path, loose: loose)
            let compared = CBZChecks.assertPagesAreTheSources(cbz, pagesIn: path, looseFolder: loose ? library.appendingPathComponent(relative) : nil)
            if !relative.lowercased().hasSuffix(".pdf") && !isPDF(library, relative) {
                XCTAssertEqual(compared, pages.count, "\(relative): every page against its source, not the folder view")
            }
            checked.append(relative)
        }
        return checked
    }
}
