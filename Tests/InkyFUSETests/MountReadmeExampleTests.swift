import Foundation
import InkyTestSupport
import XCTest

/// The README's own image-viewer example, run as written against a real mount: a comic's
/// folder also holds its hidden `.ComicInfo.xml` and `.directory`, which feh given the folder
/// tried to load as images ("No Imlib2 loader for that file format").
final class MountReadmeExampleTests: XCTestCase {
    /// The README's `feh ...` line of its Usage, without its comment.
    private func readmeFehExample() throws -> String {
        let readme = try String(contentsOf: Corpus.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let line = try XCTUnwrap(readme.split(separator: "\n").first { $0.hasPrefix("feh ~/mnt/") }, "the README shows feh")
        return String(line.split(separator: "#", maxSplits: 1)[0]).trimmingCharacters(in: .whitespaces)
    }

    func testTheReadmesFehExampleShowsEveryPageAndNoWarning() throws {
        let home = ArchiveMaker.temporaryDirectory("readme-home"), library = ArchiveMaker.temporaryDirectory("readme-library")
        defer { for folder in [home, library] { try? FileManager.default.removeItem(at: folder) } }
        // `~/mnt/Series/Issue 001` as the README has it: a tagged comic of three real images.
        try FileManager.default.createDirectory(at: library.appendingPathComponent("Series"), withIntermediateDirectories: true)
        try ArchiveMaker.python("""
            import io, sys, zipfile
            from PIL import Image
            with zipfile.ZipFile(sys.argv[1], "w") as z:
                z.writestr("ComicInfo.xml", "<ComicInfo><Series>Series</Series><Number>1</Number></ComicInfo>")
                for n, colour in enumerate(["red", "green", "blue"], 1):
                    page = io.BytesIO()
                    Image.new("RGB", (60, 90), colour).save(page, "PNG")
                    z.writestr("%02d.png" % n, page.getvalue())
            """, arguments: [library.appendingPathComponent("Series/Issue 001.cbz").path])
        let mounted = try MountedLibrary(library: library, arguments: ["--state", home.appendingPathComponent("state").path], covers: true)
        defer { mounted.unmount() }
        try FileManager.default.createSymbolicLink(atPath: home.appendingPathComponent("mnt").path, withDestinationPath: mounted.mountpoint.path)
        let hidden = try FileManager.default.contentsOfDirectory(atPath: mounted.path("Series/Issue 001")).filter { $0.hasPrefix(".") }
        XCTAssertEqual(Set(hidden), [".ComicInfo.xml"], "what the example must leave out is there (.directory is not listed)")

        // As the README writes it, with feh listing what it loads instead of opening a window.
        let example = try readmeFehExample()
        let run = try CommandRunner.capture("/bin/sh", ["-c", "feh --list " + example.dropFirst("feh ".count)], environment: ["HOME": home.path])
        XCTAssertEqual(run.status, 0, "\(example)\n\(run.stderr)")
        XCTAssertEqual(run.stderr, "", example)
        let listed = run.stdout.split(separator: "\n").dropFirst().map { ($0.split(separator: "\t").last.map(String.init) ?? "") }
        XCTAssertEqual(listed.map { ($0 as NSString).lastPathComponent }, ["001.png", "002.png", "003.png"], run.stdout)
    }
}
