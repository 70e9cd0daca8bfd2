import Foundation
import InkyTestSupport
import XCTest

/// The whole shared corpus (with archives that crash or hang libarchive) plus the generated
/// hostile comics under one mount, every file read with a deadline: the daemon keeps answering within its memory budget, every hostile comic is
/// served safely or shows ERROR.txt, no name under the mount can hurt a script or a terminal, and
/// nothing outside the mount is read or written.
final class MountHostileCorpusTests: XCTestCase {
    private let secret = "inkyfs-canary-secret-\(UUID().uuidString)"
    /// The folders the README names at the mount's root, which follow the index as it changes.
    private static let viewFolders: Set = ["By Series", "By Publisher", "Story Arcs", "Reading Lists", "Recently Added", "Continue Reading"]

    /// The corpus is cached by its generator's version: a change in any module of
    /// `hostilecorpus/` makes a new one, as a change in the script does; Python's bytecode cache
    /// beside the modules does not.
    func testTheCorpusIsBuiltAnewWhenAnyFileOfItsGeneratorChanges() throws {
        let dev = ArchiveMaker.temporaryDirectory("hostile-generator")
        defer { try? FileManager.default.removeItem(at: dev) }
        try FileManager.default.createDirectory(at: dev, withIntermediateDirectories: true)
        let source = Corpus.packageRoot.appendingPathComponent("scripts/dev")
        for name in ["make-hostile-corpus", "hostilecorpus"] {
            try FileManager.default.copyItem(at: source.appendingPathComponent(name), to: dev.appendingPathComponent(name))
        }
        try? FileManager.default.removeItem(at: dev.appendingPathComponent("hostilecorpus/__pycache__"))
        let original = try HostileCorpus.generatorVersion(in: dev)
        XCTAssertEqual(original, try HostileCorpus.generatorVersion(in: source), "the same files, the same version")

        let module = dev.appendingPathComponent("hostilecorpus/names.py")
        try (String(contentsOf: module, encoding: .utf8) + "\n# changed\n").write(to: module, atomically: true, encoding: .utf8)
        let changed = try HostileCorpus.generatorVersion(in: dev)
        XCTAssertNotEqual(changed, original, "a changed module makes a new corpus")

        try FileManager.default.createDirectory(at: dev.appendingPathComponent("hostilecorpus/__pycache__"), withIntermediateDirectories: true)
        try Data("bytecode".utf8).write(to: dev.appendingPathComponent("hostilecorpus/__pycache__/names.cpython-313.pyc"))
        XCTAssertEqual(try HostileCorpus.generatorVersion(in: dev), changed, "Python's bytecode cache is no part of the generator")

        try Data("# new module\n".utf8).write(to: dev.appendingPathComponent("hostilecorpus/extra.py"))
        XCTAssertNotEqual(try HostileCorpus.generatorVersion(in: dev), changed, "a new module makes a new corpus")
    }

    func testEveryHostileComicIsServedSafelyOrShowsErrorText() throws {
        try XCTSkipIf(Corpus.manifest.isEmpty, "../shared/corpus is missing")
        let generated = try HostileCorpus.build()
        let manifest = try HostileCorpus.manifest(in: generated)
        XCTAssertEqual(manifest.canary, HostileCorpus.canary)
        let canary = URL(fileURLWithPath: HostileCorpus.canary)
        try? FileManager.default.removeItem(at: canary)
        try FileManager.default.createDirectory(at: canary, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: canary) }
        try Data((secret + "\n").utf8).write(to: canary.appendingPathComponent("secret.txt"))
        let library = ArchiveMaker.temporaryDirectory("hostile-library")
        defer { try? FileManager.default.removeItem(at: library) }
        try ArchiveMaker.run("/bin/cp", ["-a", Corpus.root.path, library.appendingPathComponent("corpus").path])
        try ArchiveMaker.run("/bin/cp", ["-a", generated.appendingPathComponent("comics").path, library.appendingPathComponent("hostile").path])
        let canaryBefore = try snapshot(canary.path)
        let libraryBefore = try snapshot(library.path)
        let escapes = ["/tmp/inkyfs-escape1", "/x"].filter { !FileManager.default.fileExists(atPath: $0) }

        let budget = 64 << 20
        let mount = try MountedLibrary(library: library, arguments: ["--cache-size", "\(budget)", "--worker-timeout", "5"],
                                       views: true)
        // The metadata views appear once the listing pass has read the comics' names (the
        // corpus's test_compat_zip_5 gives a series): walk them too, every time, not when the
        // walk happens to start after them.
        XCTAssertTrue(mount.appears("By Series", within: 90), mount.logText)
        // And the views stop changing once every comic is listed: a link of `Recently Added/`
        // leaves it while newer comics come in.
        XCTAssertTrue(mount.logSays("comics ahead in", within: 90), mount.logText)
        let report = try TreeReadReport.read(mount.mountpoint, daemon: mount.process.processIdentifier,
                                             forbid: [secret, "root:x:0:0"])
        let files = report.filesByPath
        print("hostile corpus: \(report.files.count) files in \(report.dirs.count) folders read in \(String(format: "%.1f", report.elapsed)) s; "
              + "\(report.files.filter { $0.status == "ok" }.count) ok, \(report.files.filter { $0.status == "error" }.count) EIO; "
              + "daemon peak RSS \(report.peak_rss_kib >> 10) MiB with a \(budget >> 20) MiB cache; slowest read "
              + (report.files.max { ($0.seconds ?? 0) < ($1.seconds ?? 0) }.map { "\($0.path.debugDescription) \($0.seconds ?? 0) s" } ?? "none"))

        // The daemon stayed up, answered a stat of the root after every folder, within its budget.
        XCTAssertTrue(mount.isDaemonAlive, mount.logText)
        XCTAssertEqual(report.root_failures.map(\.error), [])
        XCTAssertEqual(report.dir_errors.map { "\($0.path ?? ""): \($0.error)" }, [])
        XCTAssertEqual(report.batches, report.dirs.count)
        XCTAssertGreaterThan(report.peak_rss_kib, 0)
        // A sanitizer's quarantine and shadow memory are not the daemon's: scripts/dev/sanitize says when one runs.
        if !Sanitizer.isRunning {
            XCTAssertLessThanOrEqual(report.peak_rss_kib << 10, budget + (64 << 20), "daemon peak RSS")
        }
        XCTAssertLessThan(report.elapsed, 150)

        // Every file either read or failed with EIO, in time; none carried what lies outside.
        for file in report.files {
            if file.status == "vanished" {
                // Listed, then gone before it was read: only a view may change under a reader.
                let top = String(file.path.split(separator: "/").first ?? "")
                XCTAssertTrue(Self.viewFolders.contains(top), "\(file.path): \(file.error ?? "") outside the views")
                continue
            }
            if let target = file.target {
                // A view's link resolves inside the mount, to a comic or a series folder.
                XCTAssertEqual(file.status, "link", "\(file.path) -> \(target)")
                continue
            }
            XCTAssertTrue(file.status == "ok" || (file.status == "error" && file.error == "Input/output error"),
                          "\(file.path): \(file.status) \(file.error ?? "")")
            XCTAssertNil(file.forbidden, "\(file.path) holds bytes from outside the mount")
        }

        // No name a script or terminal could trip on; no folder with two entries of one name.
        for (folder, names) in report.dirs {
            XCTAssertEqual(Set(names).count, names.count, "duplicate names in \(folder)")
            for name in names {
                let text = String(decoding: name.latin1Bytes, as: UTF8.self)
                XCTAssertFalse(name.isEmpty || name == "." || name == ".." || name.contains("/"), "\(folder): \(name.debugDescription)")
                XCTAssertFalse(text.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) },
                               "control character in \(folder)/\(text.debugDescription)")
            }
        }

        // Each hostile comic as its manifest allows.
        var shown = 0
        for (comic, expected) in manifest.comics.sorted(by: { $0.key < $1.key }) {
            guard let directory = mountDirectory(of: "hostile/" + comic, in: report) else {
                // Only a comic whose name is not UTF-8, or the NFC/NFD twin of a shown one, may be hidden.
                let bytes = comic.latin1Bytes
                let twinShown = String(validating: bytes, as: UTF8.self).map { name in
                    manifest.comics.keys.contains { $0 != comic && String(decoding: $0.latin1Bytes, as: UTF8.self) == name
                        && mountDirectory(of: "hostile/" + $0, in: report) != nil }
                } ?? false
                XCTAssertTrue(String(validating: bytes, as: UTF8.self) == nil || twinShown, "\(comic.debugDescription) is not shown")
                continue
            }
            shown += 1
            let names = report.dirs[directory] ?? []
            if names == ["ERROR.txt"] {
                let text = files[directory + "/ERROR.txt"]?.text ?? ""
                XCTAssertTrue(text.hasPrefix("inkyfs cannot show this comic"), "\(comic): \(text)")
                XCTAssertNil(expected.pages, "\(comic) should show its pages: \(text)")
                continue
            }
            XCTAssertNotEqual(expected.expect, "error", "\(comic) (\(expected.why)) shows \(names)")
            XCTAssertFalse(names.isEmpty, comic)
            for name in names {
                XCTAssertNotNil(name.wholeMatch(of: /\d{3,}\.[a-z]{3,4}|\.ComicInfo\.xml/), "\(comic): page named \(name.debugDescription)")
            }
            let served = names.sorted().filter { !$0.hasPrefix(".") }.compactMap { files[directory + "/" + $0] }
                .filter { $0.status == "ok" }.compactMap(\.sha256)
            for page in expected.contains ?? [] { XCTAssertTrue(served.contains(page), "\(comic) (\(expected.why)) lost a real page") }
            if let pages = expected.pages { XCTAssertEqual(served, pages, "\(comic) (\(expected.why))") }
            for page in expected.eio ?? [] {
                let file = files[directory + "/" + page]
                XCTAssertEqual(file?.status, "error", "\(comic) \(page) (\(expected.why))")
                XCTAssertLessThan(file?.seconds ?? 99, 20, "\(comic) \(page): bounded work")
            }
        }
        XCTAssertGreaterThan(shown, manifest.comics.count - 3)

        // The corpus comics with known pages show exactly those pages.
        var checked = 0
        for entry in Corpus.manifest where entry.expected.status == "ok" && !entry.expected.pages.isEmpty {
            let hashes = entry.expected.pages.compactMap(\.sha256)
            guard hashes.count == entry.expected.pages.count,
                  let directory = mountDirectory(of: "corpus/" + String(latin1: Array(entry.path.utf8)), in: report) else { continue }
            let served = (report.dirs[directory] ?? []).sorted().filter { !$0.hasPrefix(".") }.map { files[directory + "/" + $0]?.sha256 }
            XCTAssertEqual(served, hashes, entry.path)
            checked += 1
        }
        XCTAssertGreaterThan(checked, 10)
        XCTAssertFalse(report.files.filter { $0.target != nil }.isEmpty, "no view link was walked")
        // The archives on which libarchive itself crashes or loops cost only their own comic.
        for hostile in Corpus.knownHostile {
            let directory = "corpus/" + String(latin1: Array((hostile as NSString).deletingPathExtension.utf8))
            XCTAssertEqual(report.dirs[directory], ["ERROR.txt"], hostile)
        }

        // Nothing outside the mount was read, written or created.
        XCTAssertEqual(try snapshot(canary.path), canaryBefore, "the canary folder is untouched")
        XCTAssertEqual(try snapshot(library.path), libraryBefore, "the library is untouched")
        for path in escapes { XCTAssertFalse(FileManager.default.fileExists(atPath: path), "\(path) was created") }
        XCTAssertTrue(mount.isDaemonAlive)
        XCTAssertEqual(mount.unmount(), 0, mount.logText)
    }

    /// The mount folder of a library file: its name without the extension, or the full name
    /// when a sibling shares the stem; control characters shown as U+FFFD. Nil when not shown.
    private func mountDirectory(of path: String, in report: TreeReadReport) -> String? {
        let bytes = path.latin1Bytes
        let slash = bytes.lastIndex(of: UInt8(ascii: "/"))!
        let parent = String(latin1: Array(bytes[..<slash]))
        let name = Array(bytes[(slash + 1)...])
        let stem = name.lastIndex(of: UInt8(ascii: ".")).map { Array(name[..<$0]) } ?? name
        let siblings = report.dirs[parent] ?? []
        for candidate in [name, stem] {
            let shown = String(latin1: printable(candidate))
            if siblings.contains(shown), report.dirs[parent + "/" + shown] != nil,
               candidate == name || !siblings.contains(String(latin1: printable(name))) {
                return parent + "/" + shown
            }
        }
        return nil
    }

    private func printable(_ bytes: [UInt8]) -> [UInt8] {
        guard let text = String(validating: bytes, as: UTF8.self) else { return bytes }
        let scalars = text.unicodeScalars.map { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) ? "\u{FFFD}" : $0 }
        return Array(String(String.UnicodeScalarView(scalars)).utf8)
    }

    /// Every path under `root` with its size and mtime, to prove nothing changed.
    private func snapshot(_ root: String) throws -> [String] {
        try ArchiveMaker.run("/usr/bin/find", [root, "-printf", "%P %s %T@ %y\\n"]).split(separator: "\n").map(String.init).sorted()
    }
}
