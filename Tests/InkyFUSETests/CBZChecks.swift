import Foundation
import InkyTestSupport
import XCTest

/// The checks every synthesized CBZ must pass, against the folder view of the same comic.
enum CBZChecks {
    /// One Python run per comic: testzip, the member names in order, each member's bytes equal
    /// the folder view's file, the `stat` size equals the bytes read, and 300 reads at random
    /// offsets and lengths equal the same ranges of a sequential read. A folder of loose images
    /// ("loose") shows its own file names in the folder view: its pages are then matched in
    /// natural order (digits as numbers), the order a reader of the folder shows them in.
    static let script = """
        import os, random, re, sys, zipfile
        cbz, folder, loose = sys.argv[1], sys.argv[2], sys.argv[3] == "loose"
        size = os.stat(cbz).st_size
        whole = open(cbz, "rb").read()
        assert len(whole) == size, f"stat says {size}, read gave {len(whole)}"
        z = zipfile.ZipFile(cbz)
        assert z.testzip() is None, "testzip found a bad member"
        names = z.namelist()
        natural = lambda n: [int(p) if p.isdigit() else p.lower() for p in re.split(r"(\\d+)", n)]
        shown = sorted((n for n in os.listdir(folder) if not n.startswith(".")), key=natural if loose else None)
        sources = shown + ([".ComicInfo.xml"] if os.path.exists(os.path.join(folder, ".ComicInfo.xml")) else [])
        if loose:
            assert len(names) == len(sources), f"{names} != {sources}"
        else:
            assert names == [s.lstrip(".") if s == ".ComicInfo.xml" else s for s in sources], f"{names} != {sources}"
        for name, source in zip(names, sources):
            assert z.read(name) == open(os.path.join(folder, source), "rb").read(), f"{name} != {source}"
            info = z.getinfo(name)
            assert info.compress_type == zipfile.ZIP_STORED and info.file_size == info.compress_size, name
        rng = random.Random(7)
        with open(cbz, "rb", buffering=0) as f:
            for _ in range(300):
                start = rng.randrange(size)
                length = rng.choice([1, 17, 4096, 65536, 200000])
                f.seek(start)
                assert f.read(length) == whole[start:start + length], f"range {start}+{length}"
        """

    /// `zipfile` (the script above), `unzip -t`, `7z t` and `bsdtar -tf` on `cbz`, whose pages
    /// must be those of the folder view's `folder`.
    static func assertValid(_ cbz: String, pagesIn folder: String, loose: Bool = false,
                            file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertNoThrow(try ArchiveMaker.python(script, arguments: [cbz, folder, loose ? "loose" : "archive"]), cbz, file: file, line: line)
        XCTAssertNoThrow(try ArchiveMaker.run("/usr/bin/unzip", ["-tq", cbz]), cbz, file: file, line: line)
        XCTAssertNoThrow(try ArchiveMaker.run("/usr/bin/7z", ["t", cbz]), cbz, file: file, line: line)
        let listed = (try? ArchiveMaker.run("/usr/bin/bsdtar", ["-tf", cbz]))?.split(separator: "\n").map(String.init)
        let shown = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { !$0.hasPrefix(".") }
        XCTAssertEqual(listed?.filter { $0 != "ComicInfo.xml" }.count, shown.count, "bsdtar -tf \(cbz)", file: file, line: line)
        if !loose { XCTAssertEqual(listed?.filter { $0 != "ComicInfo.xml" }, shown.sorted(), "bsdtar -tf \(cbz)", file: file, line: line) }
    }

    /// The CBZ's page members (as Python's zipfile reads them) against what they came from, read
    /// by programs that are not inkyfs: the folder view is the same daemon, so agreeing with it
    /// proves nothing about the bytes. An archive's pages are its entries as ReferenceArchive
    /// extracts them (the folder view's `user.inkyfs.source` and `.archive` attributes only name
    /// the entry); a folder of loose images (`looseFolder`, in the library) holds exactly the
    /// CBZ's pages. A PDF's pages are rendered by MuPDF and no second renderer is installed: none
    /// are compared. Returns how many members were compared.
    @discardableResult
    static func assertPagesAreTheSources(_ cbz: String, pagesIn folder: String, looseFolder: URL? = nil,
                                         file: StaticString = #filePath, line: UInt = #line) -> Int {
        let members: [String: [UInt8]]
        do { members = try ReferenceArchive.zipMembers(cbz) } catch {
            XCTFail("zipfile cannot read \(cbz): \(error)", file: file, line: line)
            return 0
        }
        let pages = members.filter { $0.key != "ComicInfo.xml" }
        if let looseFolder {
            let images = ((try? FileManager.default.contentsOfDirectory(atPath: looseFolder.path)) ?? []).filter { !$0.hasPrefix(".") }
            let onDisk = images.compactMap { FileManager.default.contents(atPath: looseFolder.appendingPathComponent($0).path) }
            XCTAssertEqual(pages.values.map(Digest.sha256Hex).sorted(), onDisk.map(Digest.sha256Hex).sorted(),
                           "\(cbz): the pages are the folder's images", file: file, line: line)
            return pages.count
        }
        var compared = 0
        for (name, bytes) in pages.sorted(by: { $0.key < $1.key }) {
            let page = folder + "/" + name
            guard let archive = try? attribute("user.inkyfs.archive", page), ReferenceArchive.kind(of: archive) != nil else { continue }
            do {
                let expected = try ReferenceArchive.member(try sourceAttribute(page), of: archive)
                XCTAssertTrue(bytes == expected, "\(cbz) \(name): not the bytes of its entry in \(archive)", file: file, line: line)
                compared += 1
            } catch {
                XCTFail("\(cbz) \(name): \(error)", file: file, line: line)
            }
        }
        return compared
    }
}
