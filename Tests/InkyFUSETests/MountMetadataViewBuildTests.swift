import Foundation
import InkyCore
import InkyTestSupport
import XCTest

/// The metadata views are made beside the library, never in its way: while a view's tree is
/// being made (held by a test hook of debug builds) the library's folders list, look up and
/// read; and on an indexed library `By Series/` lists its series from the mount's first moment.
final class MountMetadataViewBuildTests: XCTestCase {
    private var folders: [URL] = []

    override func tearDown() {
        for folder in folders { try? FileManager.default.removeItem(at: folder) }
    }

    private func folder(_ label: String) -> URL {
        let url = ArchiveMaker.temporaryDirectory(label)
        folders.append(url)
        return url
    }

    /// The tagged library, indexed into its own state folder (metadata and all) before it mounts.
    private func indexedLibrary() throws -> (library: URL, state: URL) {
        let library = folder("view-build-library"), state = folder("view-build-state")
        try MetadataLibraryFixture.tagged(at: library)
        let indexed = try CommandRunner.inkyfs(["index", library.path, "--state", state.path])
        XCTAssertEqual(indexed.status, 0, indexed.stderr)
        return (library, state)
    }

    /// `LC_ALL=C ls ARGUMENTS` through `timeout`: a request stuck behind the held view fails
    /// the test (status 124) instead of hanging it.
    private func ls(_ arguments: [String]) throws -> CommandRunner.Result {
        try CommandRunner.capture("/usr/bin/env", ["LC_ALL=C", "timeout", "20", "ls"] + arguments)
    }

    func testLibraryFoldersAreServedWhileTheViewsAreBeingMade() throws {
        let (library, state) = try indexedLibrary()
        let hold = folder("view-build-hold").appendingPathComponent("hold")
        XCTAssertTrue(FileManager.default.createFile(atPath: hold.path, contents: nil))
        let mounted = try MountedLibrary(library: library, arguments: ["--state", state.path],
                                         environment: ["INKYFS_TEST_VIEW_HOLD": hold.path], views: true)
        // A failing run lets go before it unmounts: a daemon stuck behind the hold would never exit.
        defer {
            try? FileManager.default.removeItem(at: hold)
            mounted.unmount()
        }

        // Every view's making is held: the root lists the library (stat of each entry too), none of the views.
        let root = try ls(["-l", mounted.path("")])
        XCTAssertEqual(root.status, 0, root.stderr)
        XCTAssertTrue(root.stdout.contains("Batman") && root.stdout.contains("Loose"), root.stdout)
        XCTAssertFalse(root.stdout.contains("By Series"), "its making is held\n\(root.stdout)")
        let batman = try ls(["-l", mounted.path("Batman")])
        XCTAssertEqual(batman.status, 0, batman.stderr)
        XCTAssertTrue(batman.stdout.contains("Batman 010") && batman.stdout.contains("Extras"), batman.stdout)
        let saga = try ls(["-l", mounted.path("Loose/Saga v1 #054 (2018)")])
        XCTAssertEqual(saga.status, 0, saga.stderr)
        let page = hold.deletingLastPathComponent().appendingPathComponent("page")
        try Data(MetadataLibraryFixture.firstPage(seed: 20)).write(to: page)
        let read = try CommandRunner.capture("/usr/bin/timeout", ["20", "cmp", mounted.path("Loose/Saga v1 #054 (2018)/001.jpg"), page.path])
        XCTAssertEqual(read.status, 0, read.stdout + read.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: hold.path), "still held while the library was served")

        // Let go, the views appear by themselves.
        try FileManager.default.removeItem(at: hold)
        let deadline = Date().addingTimeInterval(20)
        var series: [String] = []
        while Date() < deadline {
            let listed = try ls(["-A", mounted.path("By Series")])
            series = listed.status == 0 ? listed.stdout.split(separator: "\n").map(String.init) : []
            if !series.isEmpty { break }
            usleep(20_000)
        }
        XCTAssertEqual(series, ["Batman (2011)", "Hellboy (1)", "Invincible (1)", "Saga (1)"], mounted.logText)
    }

    /// No waiting loop: the lookup of `By Series` waits for that view's first tree, so the first
    /// `ls` after the mount already lists every series the index knows.
    func testBySeriesListsItsSeriesAtTheMountsFirstListing() throws {
        let (library, state) = try indexedLibrary()
        let mounted = try MountedLibrary(library: library, arguments: ["--state", state.path], views: true)
        defer { mounted.unmount() }
        let listed = try ls(["-A", mounted.path("By Series")])
        XCTAssertEqual(listed.status, 0, listed.stderr + mounted.logText)
        XCTAssertEqual(listed.stdout.split(separator: "\n").map(String.init),
                       ["Batman (2011)", "Hellboy (1)", "Invincible (1)", "Saga (1)"])
        let batman = try ls(["-A", mounted.path("By Series/Batman (2011)")])
        XCTAssertEqual(batman.stdout.split(separator: "\n").count, 5, batman.stdout + batman.stderr)
    }
}
