import Foundation
import InkyTestSupport
import XCTest

/// Reading order through a real mount, for generated comics in every container: sequences
/// 1...N (N up to 10,000; unpadded, padded, mixed) in shuffled member order, real spread
/// naming, chapter folders and compatibility forms (docs/reading-order.md). Page k holds the
/// text "k\n", so `cat *` in a comic's directory must print 1, 2, 3, … one a line.
final class MountReadingOrderTests: XCTestCase {
    /// Each count crosses a width of the page numbers (1, 2, 3, 4 and 5 digits) or a bound of
    /// the sampled pages; 5,000 crossed none that 1,500 and 10,000 do not, at 30 s of a loaded run.
    static let counts = [9, 99, 120, 999, 1_000, 1_500, 10_000]
    /// The order of names is one code for every container, checked to 10,000 in the others; in
    /// 7z, whose last pages of 10,000 cost a decode of the whole stream (110 s of a CI run), the
    /// mapping of names to members is what is left to check, and 1,500 pages cross every width.
    static func counts(for container: GeneratedComic.Container) -> [Int] {
        container == .sevenZipSolid || container == .sevenZipCopy ? counts.filter { $0 <= 1_500 } : counts
    }

    func testSequencesInZipStored() throws { try checkSequences(.zipStored) }
    func testSequencesInZipDeflated() throws { try checkSequences(.zipDeflated) }
    func testSequencesInRAR5() throws { try checkSequences(.rar5) }
    func testSequencesIn7zSolid() throws { try checkSequences(.sevenZipSolid) }
    func testSequencesIn7zCopy() throws { try checkSequences(.sevenZipCopy) }
    func testSequencesInTar() throws { try checkSequences(.tar) }
    func testSequencesInFolders() throws { try checkSequences(.folder) }

    func testSpreadsChaptersAndCompatibilityFormsInEveryContainer() throws {
        let library = ArchiveMaker.temporaryDirectory("order-named")
        defer { try? FileManager.default.removeItem(at: library) }
        try GeneratedComic.write(GeneratedComic.Container.allCases.flatMap { container in
            Self.namedCases.map { stem, names in
                GeneratedComic.Job(shuffledPages(names), as: container,
                                   to: library.appendingPathComponent(container.fileName("\(stem) \(container.rawValue)")))
            }
        })
        let mount = try MountedLibrary(library: library)
        for container in GeneratedComic.Container.allCases {
            for (stem, names) in Self.namedCases {
                let comic = "\(stem) \(container.rawValue)"
                if container == .folder, names.contains(where: { $0.contains("/") }) {
                    // A folder of folders is a folder of comics, one per chapter.
                    for chapter in Set(names.map { String($0.prefix { $0 != "/" }) }) {
                        let pages = names.indices.filter { names[$0].hasPrefix(chapter + "/") }
                        try checkOrder(of: "\(comic)/\(chapter)", in: mount, container,
                                       sources: pages.map { String(names[$0].dropFirst(chapter.count + 1)) },
                                       text: pages.map { "\($0 + 1)\n" }.joined())
                    }
                } else {
                    try checkOrder(of: comic, in: mount, container, sources: names, text: expectedText(names.count))
                }
            }
        }
        XCTAssertTrue(mount.isDaemonAlive)
    }

    /// The comic's pages are `sources` in this order, and reading them gives `text`. An archive
    /// shows as a directory of pages named in reading order: their `user.inkyfs.source` and
    /// `cat *` say it. A folder of images stays a folder in the mount (its files keep their
    /// names, so a viewer orders them): its order is what `inkyfs pages` (and `scan`, the
    /// index) lists, and its files read through the mount in that order give `text`.
    private func checkOrder(of comic: String, in mount: MountedLibrary, _ container: GeneratedComic.Container,
                            sources: [String], text: String, sample: [Int]? = nil) throws {
        let label = "\(container.rawValue): \(comic)"
        if container == .folder {
            XCTAssertEqual(try listedSources(mount.library.appendingPathComponent(comic).path), sources, label)
            let names = sample.map { $0.map { sources[$0 - 1] } } ?? sources
            XCTAssertEqual(try catPages(mount.path(comic), names), text, label)
            return
        }
        XCTAssertEqual(try sourcePaths(mount.path(comic)), sources, label)
        let width = max(3, String(sources.count).count)
        let names = sample.map { $0.map { String(repeating: "0", count: width - String($0).count) + "\($0).png" } } ?? []
        XCTAssertEqual(try catPages(mount.path(comic), names), text, label)
    }

    /// Names in reading order; each case is one comic.
    static let namedCases: [(String, [String])] = [
        ("Separator spreads", ["p01.jpg", "p02-03.jpg", "p04.jpg", "p05_06.jpg", "p07.jpg"]),
        ("Joined spreads", ["01.jpg", "0203.jpg", "04.jpg", "05.jpg", "0607.jpg", "08.jpg", "09.jpg", "10.jpg", "1112.jpg"]),
        ("Chapters", ["Chapter 1/1.png", "Chapter 1/2.png", "Chapter 1/10.png", "Chapter 2/01.png", "Chapter 2/0405.png",
                      "Chapter 2/06.png", "Chapter 10/1.png", "Chapter 10/9.png", "Chapter 10/11.png"]),
        ("Compatibility", ["\u{FB01}le 9.jpg", "file 10.jpg", "File 11.jpg", "n 9.jpg", "n \u{FF11}\u{FF10}.jpg", "n 11.jpg",
                           "n \u{FF11}\u{FF12}.jpg", "STRASSE 1.jpg", "stra\u{DF}e 2.jpg", "x 2.jpg", "x \u{216B}.jpg"]),
    ]

    private func checkSequences(_ container: GeneratedComic.Container) throws {
        let library = ArchiveMaker.temporaryDirectory("order-\(container.rawValue)")
        defer { try? FileManager.default.removeItem(at: library) }
        var comics: [(name: String, sources: [String])] = []
        var jobs: [GeneratedComic.Job] = []
        for count in Self.counts(for: container) {
            for padding in GeneratedComic.Padding.allCases {
                let prefix = padding == .mixed ? "page_" : ""
                let name = "\(count) \(padding.rawValue)"
                let pages = GeneratedComic.sequence(count, padding: padding, prefix: prefix, seed: UInt64(count * 7 + prefix.count))
                jobs.append(.init(pages, as: container, to: library.appendingPathComponent(container.fileName(name))))
                comics.append((name, (1...count).map { padding.name($0, of: count, prefix: prefix) }))
            }
        }
        try GeneratedComic.write(jobs)
        let mount = try MountedLibrary(library: library)
        for comic in comics {
            // Every page of a short comic; of a long one, the pages around where a misread
            // number would land (10, 100, 1000, 1011) and the end: the order of all of them
            // is checked by their source paths.
            let count = comic.sources.count
            let sample = count <= 120 ? nil
                : Array(Set([1...12, 98...102, 998...1_013, (count - 3)...count].flatMap { $0 }.filter { $0 <= count })).sorted()
            try checkOrder(of: comic.name, in: mount, container, sources: comic.sources,
                           text: (sample ?? Array(1...count)).map { "\($0)\n" }.joined(), sample: sample)
        }
        XCTAssertTrue(mount.isDaemonAlive)
    }

    /// The pages of `names` (given in reading order) numbered in that order, then shuffled.
    private func shuffledPages(_ names: [String]) -> [(String, [UInt8])] {
        var generator = SeededGenerator(seed: UInt64(names.count))
        return names.enumerated().map { ($1, GeneratedComic.page($0 + 1)) }.shuffled(using: &generator)
    }

    private func expectedText(_ count: Int) -> String { (1...count).map { "\($0)\n" }.joined() }

    /// `cat` of the pages `names` (none: `*`, in byte order) in the comic's directory, in that order.
    private func catPages(_ directory: String, _ names: [String] = []) throws -> String {
        let result = try CommandRunner.capture("/bin/sh", ["-c", "cd \"$1\" && shift && { [ $# -gt 0 ] || set -- *; } && exec cat -- \"$@\"",
                                                           "sh", directory] + names, environment: ["LC_ALL": "C"])
        XCTAssertEqual(result.status, 0, result.stderr)
        return result.stdout
    }

    /// The order `inkyfs pages --json` lists, as source paths.
    private func listedSources(_ path: String) throws -> [String] {
        let result = try CommandRunner.inkyfs(["pages", "--json", path])
        XCTAssertEqual(result.status, 0, result.stderr)
        let listing = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        return (listing?["pages"] as? [[String: Any]] ?? []).compactMap { $0["sourcePath"] as? String }
    }

    /// Each page's `user.inkyfs.source`, pages in name order (`getfattr` on all of them at
    /// once; hex, as it would print a non-ASCII value in base64).
    private func sourcePaths(_ directory: String) throws -> [String] {
        let result = try CommandRunner.capture("/bin/sh", ["-c", "cd \"$1\" && exec getfattr -e hex --absolute-names -n user.inkyfs.source -- *",
                                                           "sh", directory], environment: ["LC_ALL": "C"])
        XCTAssertEqual(result.status, 0, result.stderr)
        return result.stdout.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("user.inkyfs.source=0x") else { return nil }
            let hex = Array(line.dropFirst("user.inkyfs.source=0x".count).utf8)
            let bytes = stride(from: 0, to: hex.count - 1, by: 2).compactMap { UInt8(String(decoding: hex[$0...($0 + 1)], as: UTF8.self), radix: 16) }
            return String(decoding: bytes, as: UTF8.self)
        }
    }
}
