import Foundation
import InkyCore
import InkyTestSupport
import XCTest

/// Reading a library that may hold hostile links, FIFOs and loops without following any.
final class LibraryRootTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        folder = ArchiveMaker.temporaryDirectory("root")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("lib/A/B"), withIntermediateDirectories: true)
        try Data("inside".utf8).write(to: folder.appendingPathComponent("lib/A/file.txt"))
        try Data("outside".utf8).write(to: folder.appendingPathComponent("outside.txt"))
        for (name, target) in [("out", "../outside.txt"), ("loop", "."), ("A/B/up", "../.."), ("A/link.txt", "file.txt"), ("Via", "A")] {
            try FileManager.default.createSymbolicLink(atPath: folder.appendingPathComponent("lib/" + name).path, withDestinationPath: target)
        }
        XCTAssertEqual(mkfifo(folder.appendingPathComponent("lib/fifo").path, 0o644), 0)
    }

    override func tearDown() { try? FileManager.default.removeItem(at: folder) }

    private var root: LibraryRoot { LibraryRoot(path: folder.appendingPathComponent("lib").path) }

    private func read(_ relative: String, in root: LibraryRoot? = nil) -> Result<String, Errno> {
        (root ?? self.root).openFile(relative).map { fd in
            defer { close(fd) }
            var buffer = [UInt8](repeating: 0, count: 64)
            return String(decoding: buffer[0..<max(0, Glibc.read(fd, &buffer, 64))], as: UTF8.self)
        }
    }

    func testFilesOpenOnlyWhereNoLinkIsOnTheWay() {
        XCTAssertEqual(read("A/file.txt"), .success("inside"))
        XCTAssertEqual(read("out"), .failure(.ELOOP), "a link out is not followed")
        XCTAssertEqual(read("A/link.txt"), .failure(.ELOOP), "nor a link inside")
        XCTAssertEqual(read("Via/file.txt"), .failure(.ELOOP), "nor a linked folder on the way")
        XCTAssertEqual(read("../outside.txt"), .failure(.EACCES), "nor a climb out")
        XCTAssertEqual(read("fifo"), .failure(.EACCES), "a FIFO is refused without blocking")
        XCTAssertEqual(root.status("out").map { $0.st_mode & S_IFMT }, .success(S_IFLNK))
        XCTAssertEqual(root.linkText("A/B/up"), .success("../.."))
    }

    func testTheWalkNeverFollowsALinkNorEntersAFolderTwice() {
        var visited: [String] = []
        root.walk { folder, _ in
            visited.append(folder)
            return nil
        }
        XCTAssertEqual(visited.sorted(), ["", "A", "A/B"])
    }

    /// The walk by names sees what the walk by `lstat` sees: the same folders entered, the same
    /// names, links (to folders too) and special files never taken for folders.
    func testTheWalkByNamesEntersWhatTheWalkByStatusEnters() {
        var byStatus: [String: [String]] = [:], byName: [String: [String]] = [:]
        var foldersByStatus: Set<String> = [], foldersByName: Set<String> = []
        var devices: [String: UInt64] = [:]
        root.walk { folder, entries in
            byStatus[folder] = entries.map(\.name).sorted()
            for entry in entries where entry.info.st_mode & S_IFMT == S_IFDIR { foldersByStatus.insert(folder + "/" + entry.name) }
            return nil
        }
        root.walkNames { folder, device, names in
            byName[folder] = names.map(\.name).sorted()
            devices[folder] = device
            for name in names where name.isFolder { foldersByName.insert(folder + "/" + name.name) }
            return nil
        }
        XCTAssertEqual(byName, byStatus)
        XCTAssertEqual(foldersByName, foldersByStatus)
        for (folder, device) in devices { XCTAssertEqual(root.status(folder).map { UInt64($0.st_dev) }, .success(device), folder) }
        XCTAssertEqual(Set(byName.keys), ["", "A", "A/B"], "the linked folder Via is not entered")
        XCTAssertEqual(root.names("").map { $0.first { $0.name == "Via" }?.isFolder }, .success(false), "a link to a folder is no folder")
        XCTAssertEqual(root.names("nowhere").map { _ in "listed" }, .failure(.ENOENT))
    }

    func testAFolderKeptOpenIsNeverFollowedThroughALinkPutInItsPlace() throws {
        let library = folder.appendingPathComponent("lib").path
        let elsewhere = folder.appendingPathComponent("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        try Data("outside".utf8).write(to: elsewhere.appendingPathComponent("file.txt"))
        let kept = LibraryRoot(path: library, cachedFolders: 8, folderLifetime: 3600)
        let walked = LibraryRoot(path: library, cachedFolders: 8, folderLifetime: 0)
        for root in [kept, walked] { XCTAssertEqual(read("A/file.txt", in: root), .success("inside")) }
        XCTAssertEqual(rename(library + "/A", library + "/A.old"), 0)
        XCTAssertEqual(symlink(elsewhere.path, library + "/A"), 0)
        // Kept open, A is the folder it was: the old one answers, never the link's target.
        XCTAssertEqual(read("A/file.txt", in: kept), .success("inside"))
        XCTAssertEqual(kept.status("A/file.txt").map { $0.st_size }, .success(6))
        // Reached afresh (its lifetime over, or the watcher told of the change): the link is refused.
        XCTAssertEqual(read("A/file.txt", in: walked), .failure(.ELOOP))
        kept.forgetFolders(under: "A")
        XCTAssertEqual(read("A/file.txt", in: kept), .failure(.ELOOP))
        XCTAssertEqual(kept.status("A/B").map { _ in "found" }, .failure(.ELOOP))
    }
}
