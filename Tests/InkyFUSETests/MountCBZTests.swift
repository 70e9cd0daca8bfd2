import Foundation
import InkyTestSupport
import XCTest

/// `--as cbz` through real mounts: every comic, whatever its format, is one `NAME.cbz` that
/// every ZIP reader accepts, holding the folder view's pages byte for byte, whose `stat` size
/// is what a read returns, in any order of range reads.
final class MountCBZTests: XCTestCase {
    private var library: URL!
    private var scratch: URL!

    override func setUpWithError() throws {
        library = ArchiveMaker.temporaryDirectory("cbz-lib")
        scratch = ArchiveMaker.temporaryDirectory("cbz-scratch")
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: library)
        try? FileManager.default.removeItem(at: scratch)
    }

    /// Pages of sizes that cross the 64 KiB reads a client makes, unique per comic, in reverse
    /// reading order in the archive. Odd seeds: noise seeds n and n | 1 are the same stream, and
    /// a solid archive of pages that repeat each other is refused as a bomb (100:1).
    private func pages(_ seed: UInt64, count: Int = 7) -> [(String, [UInt8])] {
        (0..<count).map { ("page \(count - $0).jpg", ArchiveMaker.noise(count: 1_000 + $0 * 70_001, seed: (seed * 100 + UInt64($0)) * 2 + 1)) }
    }

    private func assertValidCBZ(_ cbz: String, pagesIn folder: String, loose: Bool = false,
                                file: StaticString = #filePath, line: UInt = #line) {
        CBZChecks.assertValid(cbz, pagesIn: folder, loose: loose, file: file, line: line)
    }

    /// Each of the CBZ's pages against its source, read by Python, 7-Zip or bsdtar (not inkyfs).
    private func assertPagesAreTheSources(_ cbz: String, pagesIn folder: String, loose: URL? = nil,
                                          file: StaticString = #filePath, line: UInt = #line) -> Int {
        CBZChecks.assertPagesAreTheSources(cbz, pagesIn: folder, looseFolder: loose, file: file, line: line)
    }

    func testEveryFormatIsACBZOfTheFolderViewsPages() throws {
        var jobs: [GeneratedComic.Job] = []
        for (number, container) in GeneratedComic.Container.allCases.enumerated() {
            jobs.append(GeneratedComic.Job(pages(UInt64(number + 1)), as: container, to: library.appendingPathComponent(container.fileName("Issue \(container.rawValue)"))))
        }
        // ComicInfo.xml travels into the CBZ under its own name.
        jobs.append(GeneratedComic.Job(pages(20) + [("ComicInfo.xml", Array("<ComicInfo><Series>Test</Series></ComicInfo>".utf8))],
                                       as: .zipDeflated, to: library.appendingPathComponent("With Info.cbz")))
        try GeneratedComic.write(jobs)
        let images = try PDFMaker.pageImages(in: scratch, kinds: ["jpeg-rgb", "png-rgb"])
        try PDFMaker.imagePDF(at: library.appendingPathComponent("Images.pdf"), images: images)
        try PDFMaker.vectorPDF(at: library.appendingPathComponent("Vector.pdf"), pages: 2)

        let folders = try MountedLibrary(library: library, arguments: ["--no-list-ahead"])
        let files = try MountedLibrary(library: library, arguments: ["--as", "cbz", "--no-list-ahead"])
        // A folder of loose images ("Issue folder") is a comic too.
        let generated = GeneratedComic.Container.allCases.map { "Issue \($0.rawValue)" }
        let comics = generated + ["With Info", "Images", "Vector"]
        // (The metadata views beside them come once the comics are indexed: not compared here.)
        let shown = try FileManager.default.contentsOfDirectory(atPath: files.path("")).sorted()
        XCTAssertEqual(shown.filter { $0.hasSuffix(".cbz") }, comics.map { "\($0).cbz" }.sorted())
        XCTAssertFalse(shown.contains("Issue folder"), "\(shown)")
        for comic in comics {
            var info = stat()
            XCTAssertEqual(lstat(files.path("\(comic).cbz"), &info), 0)
            XCTAssertEqual(info.st_mode & S_IFMT, S_IFREG, comic)
            assertValidCBZ(files.path("\(comic).cbz"), pagesIn: folders.path(comic), loose: comic == "Issue folder")
            let compared = assertPagesAreTheSources(files.path("\(comic).cbz"), pagesIn: folders.path(comic),
                                                    loose: comic == "Issue folder" ? library.appendingPathComponent(comic) : nil)
            // Every page of every archive and of the loose folder, against its source; the PDFs'
            // rendered pages have no second renderer to compare with.
            XCTAssertEqual(compared, ["Images", "Vector"].contains(comic) ? 0 : 7, comic)
        }
        XCTAssertEqual(files.unmount(), 0)
        XCTAssertEqual(folders.unmount(), 0)
    }

    func testAnUnreadableComicIsATextFileAndNamesStayUnique() throws {
        try GeneratedComic.write(pages(1), as: .zipStored, to: library.appendingPathComponent("Twin.cbz"))
        try GeneratedComic.write(pages(2), as: .rar5, to: library.appendingPathComponent("Twin.cbr"))
        try Data("not an archive at all".utf8).write(to: library.appendingPathComponent("Broken.cbz"))
        let folders = try MountedLibrary(library: library, arguments: ["--no-list-ahead"])
        // The fstab form of --as cbz; a shape it does not know is refused before mounting.
        let refused = try CommandRunner.inkyfs(["mount", "-o", "as=pdf", library.path, scratch.path])
        XCTAssertEqual(refused.status, 64, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("'pdf' is invalid for '--as <folders|cbz>'"), refused.stderr)
        let files = try MountedLibrary(library: library, arguments: ["-o", "as=cbz", "--no-list-ahead", "--no-continue"])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: files.path("")).sorted(),
                       ["Broken.cbz.error.txt", "Twin.cbr.cbz", "Twin.cbz.cbz"])
        let text = String(decoding: try readFile(files.path("Broken.cbz.error.txt")), as: UTF8.self)
        XCTAssertTrue(text.hasPrefix("inkyfs cannot show this comic."), text)
        XCTAssertEqual(open(files.path("Broken.cbz"), O_RDONLY), -1, "no CBZ for a comic that cannot be read")
        XCTAssertEqual(errno, ENOENT)
        assertValidCBZ(files.path("Twin.cbr.cbz"), pagesIn: folders.path("Twin.cbr"))
        assertValidCBZ(files.path("Twin.cbz.cbz"), pagesIn: folders.path("Twin.cbz"))
        XCTAssertNotEqual(try readFile(files.path("Twin.cbr.cbz")), try readFile(files.path("Twin.cbz.cbz")))
        XCTAssertEqual(files.unmount(), 0)
        XCTAssertEqual(folders.unmount(), 0)
    }

    /// CRC-32s computed at the first read are kept in the index: the next mount serves `stat`
    /// and the central directory of a deflated and a solid comic without reading the archive.
    /// To prove it, the archives' bytes are zeroed in place between the mounts (same size,
    /// inode and mtime, so the index still takes them for the listed files): the directory is
    /// served as before, while a page's range now fails.
    func testAnIndexedComicsDirectoryIsServedWithoutDecodingAPage() throws {
        let comics = [("Deflated", "Deflated.cbz"), ("Solid", "Solid.cb7")]
        try GeneratedComic.write([GeneratedComic.Job(pages(3, count: 12), as: .zipDeflated, to: library.appendingPathComponent(comics[0].1)),
                                  GeneratedComic.Job(pages(4, count: 12), as: .sevenZipSolid, to: library.appendingPathComponent(comics[1].1))])
        let state = scratch.appendingPathComponent("state")
        let arguments = ["--as", "cbz", "--no-list-ahead", "--state", state.path]
        let first = try MountedLibrary(library: library, arguments: arguments)
        let whole = try comics.map { try readFile(first.path("\($0.0).cbz")) }
        XCTAssertEqual(first.unmount(), 0)
        for (_, file) in comics {
            let path = library.appendingPathComponent(file).path
            var before = stat()
            XCTAssertEqual(stat(path, &before), 0)
            let fd = open(path, O_WRONLY)
            XCTAssertEqual(pwrite(fd, [UInt8](repeating: 0, count: Int(before.st_size)), Int(before.st_size), 0), Int(before.st_size))
            close(fd)
            var times = [before.st_atim, before.st_mtim]
            XCTAssertEqual(utimensat(AT_FDCWD, path, &times, 0), 0)
        }

        let second = try MountedLibrary(library: library, arguments: arguments)
        for ((name, _), bytes) in zip(comics, whole) {
            var info = stat()
            XCTAssertEqual(stat(second.path("\(name).cbz"), &info), 0)
            XCTAssertEqual(Int(info.st_size), bytes.count)
            let fd = open(second.path("\(name).cbz"), O_RDONLY)
            XCTAssertGreaterThanOrEqual(fd, 0)
            // The central directory (a 46-byte record and a 7-byte name per page, 22 bytes of
            // end), which starts on a kernel page boundary.
            let directory = 12 * (46 + 7) + 22
            XCTAssertEqual((bytes.count - directory) % 4096, 0)
            var tail = [UInt8](repeating: 0, count: directory)
            XCTAssertEqual(pread(fd, &tail, tail.count, off_t(bytes.count - tail.count)), tail.count)
            XCTAssertTrue(tail == Array(bytes.suffix(tail.count)), "\(name): the central directory as the first mount served it")
            var page = [UInt8](repeating: 0, count: 4096)
            XCTAssertEqual(pread(fd, &page, page.count, 1_000_000), -1, "\(name): a page's bytes come from the (now zeroed) archive")
            XCTAssertEqual(errnoName(errno), errnoName(EIO), "\(name): a damaged page fails with EIO")
            close(fd)
        }
        XCTAssertEqual(second.unmount(), 0)
    }

    /// A comic replaced on disk while its CBZ is open never gives bytes at the old layout's
    /// offsets: the open file fails, and a new open serves the new comic.
    func testAReplacedComicNeverServesBytesAtTheOldOffsets() throws {
        let comic = library.appendingPathComponent("Issue.cbz")
        try GeneratedComic.write(pages(5), as: .zipDeflated, to: comic)
        let files = try MountedLibrary(library: library, arguments: ["--as", "cbz", "--no-list-ahead"])
        let fd = open(files.path("Issue.cbz"), O_RDONLY)
        XCTAssertGreaterThanOrEqual(fd, 0)
        var before = stat()
        XCTAssertEqual(fstat(fd, &before), 0)
        let oldSize = before.st_size
        var head = [UInt8](repeating: 0, count: 100)
        XCTAssertEqual(pread(fd, &head, head.count, 0), head.count)
        let staging = scratch.appendingPathComponent("new.cbz")
        try GeneratedComic.write(pages(6, count: 9), as: .zipDeflated, to: staging)
        XCTAssertEqual(rename(staging.path, comic.path), 0)
        var rest = [UInt8](repeating: 0, count: 65_536)
        XCTAssertEqual(pread(fd, &rest, rest.count, 1_000_000), -1, "the old file's range is not served from the new comic")
        XCTAssertTrue([ESTALE, EIO].contains(errno), "errno \(errno)")
        // Closed before the unmount: a lazy unmount waits for the last open file.
        close(fd)
        // The library watcher tells the kernel the name changed (0.3 s debounce): then `stat` shows
        // the new comic's size, and the file is the new comic's CBZ.
        var info = stat()
        let deadline = Date().addingTimeInterval(5)
        while stat(files.path("Issue.cbz"), &info) == 0, Int(info.st_size) == Int(oldSize), Date() < deadline { usleep(20_000) }
        XCTAssertNotEqual(Int(info.st_size), Int(oldSize), "the kernel still shows the replaced comic's size")
        let folders = try MountedLibrary(library: library, arguments: ["--no-list-ahead"])
        assertValidCBZ(files.path("Issue.cbz"), pagesIn: folders.path("Issue"))
        XCTAssertEqual(folders.unmount(), 0)
        XCTAssertEqual(files.unmount(), 0)
    }

    /// A desktop thumbnailer (evince's, as GNOME file managers run it) makes a cover from the
    /// CBZ of comics most readers cannot open themselves: RAR5 and solid 7z.
    func testADesktopThumbnailerMakesACoverFromTheCBZOfARAR5AndACB7() throws {
        let images = try PDFMaker.pageImages(in: scratch, kinds: ["jpeg-rgb", "jpeg-gray", "jpeg-rgb"])
        let members = try images.enumerated().map { ("p\($0.offset + 1).jpg", try readFile($0.element.path)) }
        try GeneratedComic.write([GeneratedComic.Job(members, as: .rar5, to: library.appendingPathComponent("Five.cbr")),
                                  GeneratedComic.Job(members, as: .sevenZipSolid, to: library.appendingPathComponent("Seven.cb7"))])
        let files = try MountedLibrary(library: library, arguments: ["--as", "cbz", "--no-list-ahead"])
        for name in ["Five", "Seven"] {
            let cover = scratch.appendingPathComponent("\(name).png")
            try ArchiveMaker.run("/usr/bin/evince-thumbnailer", ["-s", "256", files.path("\(name).cbz"), cover.path])
            try ArchiveMaker.python("""
                import sys
                from PIL import Image
                image = Image.open(sys.argv[1])
                assert image.format == "PNG" and max(image.size) == 256, (image.format, image.size)
                # The first page (480x720) scaled: portrait, not a placeholder icon.
                assert image.size[1] > image.size[0], image.size
                """, arguments: [cover.path])
        }
        XCTAssertEqual(files.unmount(), 0)
    }

    /// A ZIP's and a RAR5's pages carry their CRC-32s in the archive's headers: the CBZ opens and
    /// its directory reads without a pass over the pages. One page's bytes are damaged on disk,
    /// which a pass would stumble on: the CBZ still opens and lists every page, only that page
    /// fails, with EIO, and the others read.
    func testHeaderCRCsNeedNoPassOverThePages() throws {
        let members = pages(7)
        let damaged = members[3].1
        for (container, file) in [(GeneratedComic.Container.zipDeflated, "Zip.cbz"), (.rar5, "Rar.cbr")] {
            let url = library.appendingPathComponent(file)
            try GeneratedComic.write(members, as: container, to: url)
            // Incompressible bytes lie verbatim in both (deflate stores them): flip one inside.
            var bytes = try Data(contentsOf: url)
            let probe = Data(damaged[100_000..<101_000])
            let at = try XCTUnwrap(bytes.range(of: probe)?.lowerBound, file) + 500
            bytes[at] ^= 0xFF
            try bytes.write(to: url)
        }
        let files = try MountedLibrary(library: library, arguments: ["--as", "cbz", "--no-list-ahead"])
        for name in ["Zip", "Rar"] {
            try ArchiveMaker.python("""
                import sys, zipfile
                z = zipfile.ZipFile(sys.argv[1])
                names = z.namelist()
                assert len(names) == 7, names
                bad = [n for n in names if n != "004.jpg"]
                for n in bad:
                    z.read(n)
                try:
                    z.read("004.jpg")
                    raise SystemExit("the damaged page read")
                except OSError:
                    pass
                """, arguments: [files.path("\(name).cbz")])
        }
        XCTAssertEqual(files.unmount(), 0)
    }

    /// A folder of loose images is a comic only with nothing but images in it: one with a link
    /// among its images (to a file outside the library) stays a folder, the link a link, and
    /// nothing of the link's target is read into a CBZ.
    func testAFolderOfImagesWithALinkStaysAFolder() throws {
        let loose = library.appendingPathComponent("Loose")
        let linked = library.appendingPathComponent("Linked")
        for folder in [loose, linked] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for (name, bytes) in pages(9, count: 2) { try Data(bytes).write(to: folder.appendingPathComponent(name)) }
        }
        XCTAssertEqual(symlink("/etc/passwd", linked.appendingPathComponent("page 3.jpg").path), 0)
        let files = try MountedLibrary(library: library, arguments: ["--as", "cbz", "--no-list-ahead", "--no-continue"])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: files.path("")).sorted(), ["Linked", "Loose.cbz"])
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: files.path("Linked/page 3.jpg")), "/etc/passwd")
        let folders = try MountedLibrary(library: library, arguments: ["--no-list-ahead", "--no-continue"])
        assertValidCBZ(files.path("Loose.cbz"), pagesIn: folders.path("Loose"), loose: true)
        XCTAssertEqual(folders.unmount(), 0)
        XCTAssertEqual(files.unmount(), 0)
    }
}
