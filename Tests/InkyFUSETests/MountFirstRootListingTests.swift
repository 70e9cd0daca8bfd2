import Foundation
import InkyTestSupport
import XCTest

/// The README's first example is what a reader sees: `ls` of a fresh mount of `Fixtures/Library`
/// on an index made before lists every folder the README shows, the metadata views included, on
/// the root's first listing. The views' trees were once made only when the root was first listed
/// (or at the index's check half a second later), so that listing, which never waits for them,
/// left them out until the next one.
final class MountFirstRootListingTests: XCTestCase {
    private let state = ArchiveMaker.temporaryDirectory("first-root-state")

    override func tearDown() {
        try? FileManager.default.removeItem(at: state)
    }

    /// The names in the README's block after "`ls /tmp/comics` gives".
    private func readmeListing() throws -> [String] {
        let readme = try String(contentsOf: Corpus.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let after = try XCTUnwrap(readme.range(of: "`ls /tmp/comics` gives\n\n```\n"), "the README's ls example")
        let line = readme[after.upperBound...].prefix { $0 != "\n" }
        return line.components(separatedBy: "  ").filter { !$0.isEmpty }.sorted()
    }

    func testTheFirstListingOfAMountOnAWarmIndexIsTheReadmesExample() throws {
        let expected = try readmeListing()
        XCTAssertTrue(expected.contains("By Publisher") && expected.contains("Recently Added"), "\(expected)")
        let arguments = ["--state", state.path]
        // The first mount makes the index (the views appear as it fills).
        let first = try MountedLibrary(library: Corpus.fixtures, arguments: arguments, views: true)
        XCTAssertTrue(first.logSays("By Publisher/ shown", within: 30), first.logText)
        XCTAssertEqual(first.unmount(), 0)

        // The second starts from that index: listed the moment it is mounted, as a reader who
        // types `ls` after `inkyfs mount` does. Its views were made while it mounted.
        let second = try MountedLibrary(library: Corpus.fixtures, arguments: arguments, views: true)
        defer { second.unmount() }
        let listed = try FileManager.default.contentsOfDirectory(atPath: second.mountpoint.path).sorted()
        XCTAssertEqual(listed, expected)
    }
}
