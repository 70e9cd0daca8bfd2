import Foundation
import InkyCore
import InkyTestSupport
import XCTest

/// Where the library watcher sees every change, the kernel keeps names, attributes and listings
/// until the watcher says otherwise, whatever `--tree-timeout` says; where it cannot see (a
/// library on another FUSE filesystem, as a network one would be), the timeout rules.
final class MountKernelCacheTests: XCTestCase {
    private func listEverything(_ mounted: MountedLibrary) throws -> String {
        try ArchiveMaker.run("/usr/bin/ls", ["-lRA", mounted.mountpoint.path])
    }

    /// Waits until `condition` holds, at most `seconds`.
    private func eventually(_ seconds: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            if Date() > deadline { return false }
            usleep(50_000)
        }
        return true
    }

    /// 8 series folders of 6 small comics each: expired, a listing costs 56 directories' requests.
    private func smallLibrary() throws -> URL {
        let library = ArchiveMaker.temporaryDirectory("watched")
        for series in 1...8 {
            try FileManager.default.createDirectory(at: library.appendingPathComponent("Series \(series)"), withIntermediateDirectories: true)
            for issue in 1...6 {
                try ArchiveMaker.zip(at: library.appendingPathComponent("Series \(series)/Issue \(issue).cbz"),
                                     members: [("1.jpg", [1, 2, 3]), ("2.jpg", [4, 5])])
            }
        }
        return library
    }

    func testAWatchedLibraryStaysCachedPastTheTreeTimeoutAndChangesStillShow() throws {
        let library = try smallLibrary()
        defer { try? FileManager.default.removeItem(at: library) }
        // The library's folders alone: the metadata views would appear between the two listings
        // (MountMetadataViewsTests checks that they are cached the same way).
        let mounted = try MountedLibrary(library: library, arguments: ["-o", "tree_timeout=1,debug", "--no-list-ahead", "--views", "none"])
        XCTAssertTrue(mounted.logSays("the library watcher sees every change"), mounted.logText)
        let first = try listEverything(mounted)
        usleep(1_500_000) // past the 1 s tree timeout: what is still cached now is cached until told
        let before = mounted.requestsReceived()
        // Equal but for `Continue Reading/`, whose time is now's (a minute may turn in between).
        let unchanging = { (listing: String) in listing.split(separator: "\n").filter { !$0.contains("Continue Reading") } }
        XCTAssertEqual(unchanging(try listEverything(mounted)), unchanging(first))
        _ = mounted.requestsReceived()
        let second = mounted.logText.components(separatedBy: ", opcode: ").dropFirst(before + 1)
        // On a mount that is not `ro` the kernel marks a directory's access time stale when it
        // fetches its listing, so `ls -R`'s fstat of each asks its attributes once more: at most
        // one GETATTR per directory, not counted. Expired, each directory would cost a LOOKUP or
        // a READDIRPLUS; what is left is `ls` asking the root's labels and the uncached `Continue Reading/`.
        let attributes = second.filter { $0.hasPrefix("GETATTR") }.count
        let requests = second.count - attributes
        let directories = first.split(separator: "\n").filter { $0.hasPrefix("d") }.count
        XCTAssertEqual(directories, 56 + 1, "the folders, the comics and Continue Reading")
        XCTAssertLessThan(requests, directories / 2, "a second listing past the tree timeout is answered by the kernel's cache")
        XCTAssertLessThanOrEqual(attributes, directories + 8, "at most once per directory, and the uncached Continue Reading/'s")

        // A change still shows: the watcher tells the kernel to forget the folder's listing.
        try FileManager.default.copyItem(at: library.appendingPathComponent("Series 1/Issue 1.cbz"),
                                         to: library.appendingPathComponent("Series 1/Issue 7.cbz"))
        XCTAssertTrue(eventually(5) { (try? FileManager.default.contentsOfDirectory(atPath: mounted.path("Series 1")))?.contains("Issue 7") == true },
                      "the new comic shows once the watcher saw it")
    }

    /// Without `Continue Reading/` there is no write to let through, so the mount is `ro` in the
    /// kernel, which then keeps folders' access times as they are: a second listing asks the
    /// daemon nothing per folder.
    ///
    /// The default mount keeps `rm` there, so it is not `ro`, and the kernel marks each directory's
    /// access time stale when it fetches its listing: the next `ls -l` of its parent would ask
    /// every comic's attributes once more (`FUSEParentRelisting`). The daemon drops each folder's
    /// listing instead once its subdirectories were listed, and a second listing costs a relisting
    /// per folder, not a request per comic; a third, the root's alone.
    func testASecondListingAsksNothingPerComicReadOnlyOrNot() throws {
        let library = try smallLibrary()
        defer { try? FileManager.default.removeItem(at: library) }
        struct Listing { var attributes = 0, listings = 0, requests = 0 }
        func listings(_ arguments: [String]) throws -> (readOnly: Bool, directories: Int, second: Listing, third: Listing) {
            let mounted = try MountedLibrary(library: library, arguments: arguments + ["-o", "debug", "--no-list-ahead", "--views", "none"])
            defer { mounted.unmount() }
            var volume = statvfs()
            XCTAssertEqual(statvfs(mounted.mountpoint.path, &volume), 0)
            let first = try listEverything(mounted)
            // `Continue Reading/` is never kept in the kernel: each stat of it asks, in every listing.
            var uncached = stat()
            let continueReading = lstat(mounted.path("Continue Reading"), &uncached) == 0 ? "nodeid: \(uncached.st_ino)," : "none"
            func listAgain() throws -> Listing {
                let before = mounted.requestsReceived()
                _ = try listEverything(mounted)
                _ = mounted.requestsReceived()
                let requests = mounted.logText.components(separatedBy: ", opcode: ").dropFirst(before + 1)
                return Listing(attributes: requests.filter { $0.hasPrefix("GETATTR") && !$0.contains(continueReading) }.count,
                               listings: requests.filter { $0.hasPrefix("READDIR") }.count, requests: requests.count)
            }
            let second = try listAgain()
            return (volume.f_flag & UInt(ST_RDONLY) != 0, first.split(separator: "\n").filter { $0.hasPrefix("d") }.count,
                    second, try listAgain())
        }
        let withoutContinue = try listings(["--no-continue"])
        XCTAssertTrue(withoutContinue.readOnly, "ST_RDONLY without Continue Reading")
        XCTAssertEqual(withoutContinue.directories, 56, "8 folders, 48 comics")
        XCTAssertLessThanOrEqual(withoutContinue.second.attributes, 2, "the root's, at most: no folder's access time went stale")
        XCTAssertLessThanOrEqual(withoutContinue.second.listings, 0, "every listing is the kernel's")

        let rw = try listings([])
        XCTAssertFalse(rw.readOnly, "rm in Continue Reading/ must reach the daemon")
        XCTAssertEqual(rw.directories, 57, "and Continue Reading")
        // The root and its 8 folders are listed again (a reply each and the empty one past its
        // end), and Continue Reading/, as always; only the root asks its attributes.
        XCTAssertLessThanOrEqual(rw.second.attributes, 1, "the root's: not one per comic (48)")
        XCTAssertLessThanOrEqual(rw.second.listings, 2 * (1 + 8) + 2)
        XCTAssertLessThanOrEqual(rw.third.attributes, 1)
        XCTAssertLessThanOrEqual(rw.third.listings, 2 * 2, "the root's and Continue Reading's alone")
    }

    /// A folder's index keeps what its listing saw of each comic's file, and a later listing of the
    /// folder shows that (the kernel keeps the same attributes as long). A comic whose times
    /// change in place, its folder's mtime left alone, must show its new time in the next
    /// listing of its folder once the watcher saw it, not the kept one.
    func testAComicChangedInPlaceShowsItsNewTimeInItsFolderListing() throws {
        let library = try smallLibrary()
        defer { try? FileManager.default.removeItem(at: library) }
        let mounted = try MountedLibrary(library: library, arguments: ["--no-list-ahead", "--views", "none"])
        XCTAssertTrue(mounted.logSays("the library watcher sees every change"), mounted.logText)
        let comic = mounted.path("Series 1/Issue 1")
        func shownTime() -> Int? {
            // The folder's listing first: its READDIRPLUS sets the attributes `stat` then reads.
            _ = try? FileManager.default.contentsOfDirectory(atPath: mounted.path("Series 1"))
            var info = stat()
            return lstat(comic, &info) == 0 ? info.st_mtim.tv_sec : nil
        }
        let before = try XCTUnwrap(shownTime())
        XCTAssertNotEqual(before, 1_000_000_000)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_000_000_000)],
                                              ofItemAtPath: library.appendingPathComponent("Series 1/Issue 1.cbz").path)
        XCTAssertTrue(eventually(5) { shownTime() == 1_000_000_000 }, "still \(shownTime() ?? -1)")
        // And it stays so: listing the folder again does not bring the kept time back.
        for _ in 0..<3 { XCTAssertEqual(shownTime(), 1_000_000_000) }
    }

    /// glibc sizes a directory stream's buffer by the directory's block size, and the kernel
    /// zeroes a buffer that large for every listing reply: 32 KiB (from a block size of 4 KiB),
    /// the least glibc takes, not 64 KiB as a file's block size would make it. A file keeps
    /// 64 KiB, which stdio reads at once.
    func testADirectoryAsksForTheSmallestListingBufferAndAFileForLargeReads() throws {
        let library = try smallLibrary()
        defer { try? FileManager.default.removeItem(at: library) }
        let mounted = try MountedLibrary(library: library, arguments: ["--no-list-ahead", "--views", "none"])
        var info = stat()
        for directory in ["", "Series 1", "Series 1/Issue 1"] {
            XCTAssertEqual(stat(mounted.path(directory), &info), 0)
            XCTAssertEqual(info.st_blksize, 4_096, directory)
        }
        let page = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: mounted.path("Series 1/Issue 1")).sorted().first)
        XCTAssertEqual(stat(mounted.path("Series 1/Issue 1/" + page), &info), 0)
        XCTAssertEqual(info.st_blksize, 65_536, page)
    }

    /// The watcher learns each filesystem's kind once per device: a folder of a local library on
    /// another filesystem (a FUSE mount here, as sshfs would be) is still found and named.
    func testAFolderOnAFilesystemTheWatcherCannotSeeIsFoundInsideALocalLibrary() throws {
        let library = try smallLibrary()
        defer { try? FileManager.default.removeItem(at: library) }
        let source = try smallLibrary()
        defer { try? FileManager.default.removeItem(at: source) }
        let unseen = try FaultFS(source: source, at: library.appendingPathComponent("Series 4/Shared"))
        try withExtendedLifetime(unseen) {
            let mounted = try MountedLibrary(library: library, arguments: ["-o", "tree_timeout=1", "--no-list-ahead", "--views", "none"])
            XCTAssertTrue(mounted.logSays("cannot see every change"), mounted.logText)
            XCTAssertTrue(mounted.logText.contains("part of the library is on fuse"), mounted.logText)
        }
    }

    func testALibraryTheWatcherCannotSeeIsCachedOnlyForTheTreeTimeout() throws {
        let source = try smallLibrary()
        defer { try? FileManager.default.removeItem(at: source) }
        let unseen = try FaultFS(source: source) // a FUSE filesystem: changes behind it reach no inotify watch
        let mounted = try MountedLibrary(library: unseen.mountpoint, arguments: ["-o", "tree_timeout=1,debug", "--no-list-ahead"])
        XCTAssertTrue(mounted.logSays("cannot see every change"), mounted.logText)
        XCTAssertTrue(mounted.logText.contains("fuse"), "the log names the filesystem: \(mounted.logText)")
        _ = try listEverything(mounted)
        usleep(1_500_000)
        let before = mounted.requestsReceived()
        let listing = try listEverything(mounted)
        let directories = listing.split(separator: "\n").filter { $0.hasPrefix("d") }.count
        XCTAssertGreaterThanOrEqual(mounted.requestsReceived() - before, directories, "past the tree timeout every directory is asked again")

        // Made "elsewhere": straight in the source, unseen by any watch on the FUSE mount.
        try FileManager.default.copyItem(at: source.appendingPathComponent("Series 1/Issue 1.cbz"),
                                         to: source.appendingPathComponent("Series 1/Issue 8.cbz"))
        XCTAssertTrue(eventually(5) { (try? FileManager.default.contentsOfDirectory(atPath: mounted.path("Series 1")))?.contains("Issue 8") == true },
                      "the new comic shows after the tree timeout")
    }

    /// Past the kernel's inotify watch limit (ENOSPC from inotify_add_watch; here the debug
    /// build's INKYFS_TEST_WATCH_LIMIT, so the machine's own limit stays as it is) the watcher
    /// is blind to the folders it could not watch: the log says so, and the kernel keeps their
    /// names and listings for `--tree-timeout` only, so a comic added in one still shows.
    func testPastTheWatchLimitTheTreeTimeoutRulesAndAChangeStillShows() throws {
        let library = try smallLibrary()
        defer { try? FileManager.default.removeItem(at: library) }
        // One watch: the library's root; its eight series folders go unwatched.
        let mounted = try MountedLibrary(library: library, arguments: ["-o", "tree_timeout=1", "--no-list-ahead", "--views", "none"],
                                         environment: ["INKYFS_TEST_WATCH_LIMIT": "1"])
        XCTAssertTrue(mounted.logSays("the library watcher cannot see every change (the inotify watch limit (fs.inotify.max_user_watches) "
                                      + "was reached or events were lost): names and attributes are cached for 1 s (--tree-timeout)"), mounted.logText)
        // Listed (so the kernel holds the listing), then changed where no watch sees it.
        XCTAssertFalse(try FileManager.default.contentsOfDirectory(atPath: mounted.path("Series 1")).contains("Issue 8"))
        try FileManager.default.copyItem(at: library.appendingPathComponent("Series 1/Issue 1.cbz"),
                                         to: library.appendingPathComponent("Series 1/Issue 8.cbz"))
        XCTAssertTrue(eventually(10) { (try? FileManager.default.contentsOfDirectory(atPath: mounted.path("Series 1")))?.contains("Issue 8") == true },
                      "the new comic shows once the 1 s tree timeout has passed")
        XCTAssertEqual(try readFile(mounted.path("Series 1/Issue 8/001.jpg")), [1, 2, 3])
        XCTAssertEqual(mounted.unmount(), 0)
    }
}
