import Foundation
import InkyCore
import InkyTestSupport
import XCTest

/// Inode numbers come from persistent identity: the same path and file have the same number in
/// every mount (an SMB or NFS client, a backup tool may keep them), whatever order things are
/// looked up in, and a changed archive's pages get new ones.
final class MountInodeNumberTests: XCTestCase {
    private let paths = ["Space Patrol", "Space Patrol/Space Patrol 001", "Space Patrol/Space Patrol 001/001.jpg",
                         "Moon Tales/Moon Tales 02/003.jpg", "Moon Tales/Moon Tales 01/001.jpg", "Loose Sketches"]

    private func inodes(_ mounted: MountedLibrary, _ order: [String]) throws -> [String: UInt64] {
        var numbers: [String: UInt64] = [:]
        for path in order {
            let attributes = try FileManager.default.attributesOfItem(atPath: mounted.path(path))
            numbers[path] = try XCTUnwrap(attributes[.systemFileNumber] as? UInt64, path)
        }
        return numbers
    }

    func testTheSamePathsHaveTheSameInodesInEveryMountAndChangedPagesGetNewOnes() throws {
        let library = ArchiveMaker.temporaryDirectory("numbered")
        try FileManager.default.removeItem(at: library)
        try FileManager.default.copyItem(at: Corpus.fixtures, to: library)
        let state = ArchiveMaker.temporaryDirectory("numbered-state")
        defer {
            try? FileManager.default.removeItem(at: library)
            try? FileManager.default.removeItem(at: state)
        }
        let first = try MountedLibrary(library: library, arguments: ["--state", state.path, "--no-list-ahead"])
        let before = try inodes(first, paths)
        XCTAssertEqual(Set(before.values).count, paths.count, "every node its own number")
        first.unmount()

        let second = try MountedLibrary(library: library, arguments: ["--state", state.path, "--no-list-ahead"])
        XCTAssertEqual(try inodes(second, paths.reversed()), before, "looked up in another order, after a remount")

        // The same name, another archive: its pages are other inodes, the folder's stay.
        let comic = library.appendingPathComponent("Space Patrol/Space Patrol 001.cbz")
        try FileManager.default.removeItem(at: comic)
        try FileManager.default.copyItem(at: library.appendingPathComponent("Space Patrol/Space Patrol 002.cbz"), to: comic)
        // The watcher's word takes 0.3 s; under a loaded machine, give it time. Between the
        // removal and the copy's listing the comic's folder may be gone or its pages not yet
        // there: a lookup failing then is no answer yet, not a failure.
        var after: [String: UInt64] = [:]
        waitUntil(30) {
            guard let now = try? inodes(second, paths) else { return false }
            after = now
            return now[paths[2]] != before[paths[2]]
        }
        XCTAssertNotEqual(after[paths[2]], before[paths[2]], "a page of the replaced archive")
        XCTAssertEqual(after[paths[1]], before[paths[1]], "the comic's folder keeps its number")
        XCTAssertEqual(after[paths[3]], before[paths[3]], "other comics keep theirs")
    }
}
