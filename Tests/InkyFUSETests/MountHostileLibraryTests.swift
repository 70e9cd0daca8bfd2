import Foundation
import InkyTestSupport
import XCTest

/// The library folder is hostile input (docs/security.md). The daemon runs as root (these tests need
/// root), so it can read everything; another user created for the test reads through the mount
/// and must get exactly what the library itself would give them, and no link may lead anyone
/// out of the library or around a loop.
final class MountHostileLibraryTests: XCTestCase {
    private var user: TestUser!
    private var fixture: HostileLibraryFixture!

    override func setUpWithError() throws {
        guard let made = try TestUser.make() else {
            throw XCTSkip("needs root: the daemon must be able to read what the test user may not, and the test creates that user")
        }
        user = made
        fixture = try HostileLibraryFixture()
    }

    override func tearDown() {
        user?.remove()
        fixture?.remove()
    }

    func testAnotherUserGetsNoMoreThanTheLibraryGivesThemAndNoLinkLeadsOut() throws {
        let plain = try HostileLibraryFixture(withLinks: false)
        defer { plain.remove() }
        let plainTime = try HostileLibraryFixture.timeToMount(plain.library, ["-o", "allow_other"]).1
        let (mount, time) = try HostileLibraryFixture.timeToMount(fixture.library, ["-o", "allow_other"])
        print("mount came up in \(time) s with the links, \(plainTime) s without")
        // How fast it comes up is scripts/bench's to measure; the mount came up, which is what a test can say.
        try checkOtherUser(mount, comics: ["Issue 001"])
        try checkMountingUser(mount, comics: ["Issue 001", "Hidden 001", "Secret 001"])

        // Links added while mounted, in a new folder with a comic: once the watcher has seen
        // them (it watches the new folder), nothing changes, and it watches each real folder once.
        let late = fixture.library.appendingPathComponent("Late")
        try FileManager.default.createDirectory(at: late, withIntermediateDirectories: true)
        try fixture.addLinks([("Late/back", ".."), ("Late/self", "../Late"), ("Late/shadow", "/etc/shadow"), ("Open/again", "../.."),
                              ("Late/fav.cbz", "../Series/Issue 001.cbz")])
        try FileManager.default.copyItem(atPath: Corpus.fixture("Space Patrol/Space Patrol 001.cbz"), toPath: late.path + "/Late 001.cbz")
        let realFolders = 5 // the root, Series, Private, Open, Late
        let deadline = Date().addingTimeInterval(5)
        // The watcher has seen them once it watches Late and made the kernel forget the root's listing.
        func seen() -> Bool {
            HostileLibraryFixture.inotifyWatches(of: mount.process.processIdentifier) >= realFolders
                && ((try? FileManager.default.contentsOfDirectory(atPath: mount.mountpoint.path)) ?? []).contains("Late")
        }
        while !seen() && Date() < deadline { usleep(20_000) }
        XCTAssertEqual(HostileLibraryFixture.inotifyWatches(of: mount.process.processIdentifier), realFolders)
        try checkOtherUser(mount, comics: ["Issue 001", "Late 001"])
        try checkMountingUser(mount, comics: ["Issue 001", "Hidden 001", "Secret 001", "Late 001"])
        XCTAssertEqual(HostileLibraryFixture.inotifyWatches(of: mount.process.processIdentifier), realFolders, "no watch through a link")
        XCTAssertEqual(try user.run("/usr/bin/readlink", [mount.path("Late/fav.cbz")]).stdout, "../Series/Issue 001\n")
        XCTAssertTrue(mount.isDaemonAlive)
    }

    func testWithoutAllowOtherNothingChangesForTheMountingUser() throws {
        let mount = try MountedLibrary(library: fixture.library)
        try checkMountingUser(mount, comics: ["Issue 001", "Hidden 001", "Secret 001"])
        let refused = try user.run("/bin/ls", [mount.mountpoint.path])
        XCTAssertNotEqual(refused.status, 0, "others cannot even look without allow_other")
    }

    func testAComicSwappedForALinkWhileMountedNeverServesTheTargetsBytes() throws {
        let mount = try MountedLibrary(library: fixture.library, arguments: ["-o", "allow_other"])
        let (page, size) = HostileLibraryFixture.readablePage
        let original = try readFile(mount.path(page))
        XCTAssertEqual(original.count, size)
        let comic = fixture.path("Series/Issue 001.cbz")
        let kept = fixture.folder.appendingPathComponent("kept.cbz").path
        XCTAssertEqual(link(comic, kept), 0)
        var servedSecrets: [String] = []
        // Swapped both ways, between every lookup and read the kernel makes.
        for round in 0..<40 {
            let target = round % 2 == 0 ? "/etc/shadow" : fixture.home.appendingPathComponent("outside.cbz").path
            let swap = fixture.folder.appendingPathComponent("swap").path
            XCTAssertEqual(symlink(target, swap), 0)
            XCTAssertEqual(rename(swap, comic), 0)
            // (The link itself, `Series/Issue 001.cbz`, is the kernel's to follow with the
            // reader's rights; what the daemon serves is the comic's folder.)
            for relative in [page, "Series/Issue 001/040.jpg", "Series/Issue 001/ERROR.txt"] {
                guard let bytes = try? readFile(mount.path(relative)) else { continue }
                let text = String(decoding: bytes, as: UTF8.self)
                servedSecrets += fixture.secrets.filter { text.contains($0) }
            }
            XCTAssertEqual(link(kept, swap), 0)
            XCTAssertEqual(rename(swap, comic), 0)
            XCTAssertEqual(try readFile(mount.path(page)), original, "the comic back is served again")
        }
        XCTAssertEqual(servedSecrets, [], "a link's target is never served as the comic")
        XCTAssertTrue(mount.isDaemonAlive)
    }

    func testAFolderSwappedForALinkWhileMountedNeverServesTheTargetsBytes() throws {
        let mount = try MountedLibrary(library: fixture.library, arguments: ["-o", "allow_other"])
        let (page, size) = HostileLibraryFixture.readablePage
        let original = try readFile(mount.path(page))
        XCTAssertEqual(original.count, size)
        // The daemon now keeps Series/ open. A link in its place leads to a folder of the same
        // names whose comic carries a secret, on pages the real one lacks (nothing the kernel
        // could have cached). The comic's directory stays open here, so lookups in it reach the
        // daemon even after the kernel forgot the names above it.
        let decoy = fixture.home.appendingPathComponent("Series")
        try FileManager.default.createDirectory(at: decoy, withIntermediateDirectories: true)
        try HostileLibraryFixture.comic(at: decoy.appendingPathComponent("Issue 001.cbz").path, marker: fixture.markers.outside, pages: 40)
        let held = open(mount.path("Series/Issue 001"), O_RDONLY | O_DIRECTORY)
        XCTAssertGreaterThanOrEqual(held, 0)
        defer { close(held) }
        XCTAssertEqual(faccessat(held, "040.jpg", F_OK, 0), -1)
        let series = fixture.path("Series"), kept = fixture.path("Series.kept")
        func shown(_ type: mode_t) -> Bool {
            let deadline = Date().addingTimeInterval(5)
            while SystemCall.status(mount.path("Series")).map({ $0.st_mode & S_IFMT }) != type && Date() < deadline { usleep(20_000) }
            return SystemCall.status(mount.path("Series")).map { $0.st_mode & S_IFMT } == type
        }
        var servedSecrets: [String] = []
        for _ in 0..<5 {
            XCTAssertEqual(rename(series, kept), 0)
            XCTAssertEqual(symlink(decoy.path, series), 0)
            // Right away (the folder kept open answers), then once the watcher told the daemon.
            for settled in [false, true] {
                if settled { XCTAssertTrue(shown(S_IFLNK), "the watcher reports the swap") }
                for name in ["040.jpg", "001.jpg", "ERROR.txt"] {
                    let fd = openat(held, name, O_RDONLY)
                    guard fd >= 0 else { continue }
                    defer { close(fd) }
                    var buffer = [UInt8](repeating: 0, count: 1 << 16)
                    let count = read(fd, &buffer, buffer.count)
                    let text = String(decoding: buffer[0..<max(0, count)], as: UTF8.self)
                    servedSecrets += fixture.secrets.filter { text.contains($0) }
                }
            }
            XCTAssertEqual(unlink(series), 0)
            XCTAssertEqual(rename(kept, series), 0)
            XCTAssertTrue(shown(S_IFDIR))
            XCTAssertEqual(try readFile(mount.path(page)), original, "the folder back is served again")
        }
        XCTAssertEqual(servedSecrets, [], "a link's target is never served as the folder")
        XCTAssertTrue(mount.isDaemonAlive)
    }

    func testAChmodInTheLibraryReachesTheMountOnceTheWatcherSeesIt() throws {
        let mount = try MountedLibrary(library: fixture.library, arguments: ["-o", "allow_other"])
        let page = mount.path(HostileLibraryFixture.readablePage.0)
        XCTAssertEqual(try user.run("/bin/cat", [page]).status, 0)
        XCTAssertEqual(try user.run("/bin/ls", [mount.path("Open")]).status, 0)
        // The kernel keeps attributes until the watcher reports a change: it must report chmods.
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: fixture.path("Series/Issue 001.cbz"))
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: fixture.path("Open"))
        let deadline = Date().addingTimeInterval(5)
        func mode(_ path: String) -> mode_t? { SystemCall.status(path).map { $0.st_mode & 0o777 } }
        // Each waited for: the kernel may ask for one's attributes before the watcher's report
        // (it does after a read or a listing of it, on a mount that is not `ro`), not for another.
        while (mode(page) != 0o400 || mode(mount.path("Open")) != 0o500 || mode(mount.path("Series/Issue 001")) != 0o500)
                && Date() < deadline { usleep(20_000) }
        XCTAssertEqual(mode(page), 0o400)
        XCTAssertEqual(mode(mount.path("Series/Issue 001")), 0o500)
        let refused = try user.run("/bin/cat", [page])
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertEqual(refused.stdout, "")
        XCTAssertNotEqual(try user.run("/bin/ls", [mount.path("Open")]).status, 0)
    }

    func testWhatTheDaemonCannotReadSaysWhy() throws {
        // The test user's own 0600 comic and file and 0700 folder, and a daemon that is root
        // without the right to override file modes: it reads the library as any user would.
        let manager = FileManager.default
        try manager.createDirectory(atPath: fixture.path("Theirs"), withIntermediateDirectories: true)
        try HostileLibraryFixture.comic(at: fixture.path("Theirs 001.cbz"), marker: fixture.markers.secret)
        try HostileLibraryFixture.comic(at: fixture.path("Theirs/Inside 001.cbz"), marker: fixture.markers.secret)
        try Data("theirs".utf8).write(to: fixture.library.appendingPathComponent("theirs.txt"))
        for (relative, mode) in [("Theirs 001.cbz", 0o600), ("theirs.txt", 0o600), ("Theirs", 0o700)] {
            try ArchiveMaker.run("/bin/chown", ["\(user.name):\(user.name)", fixture.path(relative)])
            try manager.setAttributes([.posixPermissions: mode], ofItemAtPath: fixture.path(relative))
        }
        let mount = try MountedLibrary(library: fixture.library, launcher: ["/usr/bin/setpriv", "--bounding-set=-dac_override,-dac_read_search"])
        XCTAssertEqual(try manager.contentsOfDirectory(atPath: mount.path("Theirs 001")), ["ERROR.txt"])
        XCTAssertTrue(try String(contentsOfFile: mount.path("Theirs 001/ERROR.txt"), encoding: .utf8).contains("Permission denied"))
        XCTAssertEqual(SystemCall.openErrno(mount.path("theirs.txt"), O_RDONLY), EACCES)
        let listed = try CommandRunner.capture("/bin/ls", [mount.path("Theirs")])
        XCTAssertNotEqual(listed.status, 0)
        XCTAssertTrue(listed.stderr.contains("Permission denied"), listed.stderr)
        XCTAssertEqual(try readFile(mount.path(HostileLibraryFixture.readablePage.0)).count, HostileLibraryFixture.readablePage.1)
        XCTAssertTrue(mount.isDaemonAlive)
    }

    /// What the test user reads: nothing they could not read in the library, the in-library
    /// link works, and every walk ends within 10 s seeing each comic once.
    private func checkOtherUser(_ mount: MountedLibrary, comics: [String]) throws {
        let root = mount.mountpoint.path
        let found = try user.run("/usr/bin/timeout", ["10", "find", root])
        XCTAssertNotEqual(found.status, 124, "find ended within 10 s")
        assertEachOnce(comics, in: found.stdout)
        XCTAssertFalse(found.stdout.contains("Hidden 001"), "a 0700 folder of another user is not listed")
        let copy = ArchiveMaker.temporaryDirectory("rsync")
        defer { try? FileManager.default.removeItem(at: copy) }
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: copy.path)
        for walk in [["du", "-s", root], ["ls", "-R", root], ["rsync", "-a", root + "/", copy.path + "/"]] {
            XCTAssertNotEqual(try user.run("/usr/bin/timeout", ["10"] + walk).status, 124, walk.joined(separator: " "))
        }
        // Every file the user can reach, and every link followed with the user's rights (not
        // `parent`, which leads to the mount's parent folder, outside the mount).
        let links = "shadowlink homelink homecomic.cbz notes.txt fifo loop/notes.txt Open/up/notes.txt Series/absolute/notes.txt Late/shadow Late/back/notes.txt"
        let everything = try user.shell("find '\(root)' -type f -exec cat {} + ; cd '\(root)' && cat \(links) 2>/dev/null")
        let leaked = fixture.secrets.filter { everything.stdout.contains($0) }
        XCTAssertEqual(leaked.count, 0, "the user read what the library would refuse them: \(leaked.map { $0.prefix(20) })")
        for refused in ["notes.txt", "shadowlink", "homelink", "homecomic.cbz", "Secret 001/001.jpg", "Private/Hidden 001/001.jpg"] {
            let read = try user.run("/bin/cat", [mount.path(refused)])
            XCTAssertNotEqual(read.status, 0, refused)
            XCTAssertEqual(read.stdout, "", refused)
        }
        let (page, size) = HostileLibraryFixture.readablePage
        let viaLink = try user.run("/usr/bin/sha256sum", [mount.path("fav.cbz/001.jpg")])
        XCTAssertEqual(viaLink.status, 0, viaLink.stderr)
        XCTAssertTrue(viaLink.stdout.hasPrefix(Digest.sha256Hex(try readFile(mount.path(page)))), "the link inside the library works")
        XCTAssertEqual(try readFile(mount.path(page)).count, size)
        let modes = try user.run("/usr/bin/stat", ["-c", "%n %a %U"] + ["notes.txt", "Private", "Secret 001", "Series/Issue 001", page, "shadowlink"]
            .map { mount.path($0) })
        XCTAssertEqual(modes.stdout.replacingOccurrences(of: root + "/", with: ""), """
            notes.txt 400 root
            Private 500 root
            Secret 001 500 root
            Series/Issue 001 555 root
            \(page) 444 root
            shadowlink 777 root

            """)
        XCTAssertTrue(mount.isDaemonAlive)
    }

    /// What the mounting user (root) sees, with or without allow_other: everything, each comic
    /// once, links as links with their text, the in-library one rewritten to the comic's folder.
    private func checkMountingUser(_ mount: MountedLibrary, comics: [String]) throws {
        let root = mount.mountpoint.path
        let found = try CommandRunner.capture("/usr/bin/timeout", ["10", "find", root])
        XCTAssertEqual(found.status, 0, found.stderr)
        assertEachOnce(comics, in: found.stdout)
        XCTAssertEqual(try String(contentsOfFile: mount.path("notes.txt"), encoding: .utf8), fixture.markers.notes)
        XCTAssertTrue(String(decoding: try readFile(mount.path("Secret 001/001.jpg")), as: UTF8.self).contains(fixture.markers.secret))
        for (link, text) in [("shadowlink", "/etc/shadow"), ("fav.cbz", "Series/Issue 001"), ("loop", "."), ("Open/up", ".."),
                             ("parent", ".."), ("Series/absolute", "..")] {
            XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: mount.path(link)), text, link)
        }
        XCTAssertEqual(try readFile(mount.path("fav.cbz/001.jpg")), try readFile(mount.path(HostileLibraryFixture.readablePage.0)))
        XCTAssertFalse(FileManager.default.fileExists(atPath: mount.path("fifo")), "special files are not shown")
    }

    private func assertEachOnce(_ comics: [String], in listing: String, file: StaticString = #filePath, line: UInt = #line) {
        let names = listing.split(separator: "\n").map { ($0 as Substring).split(separator: "/").last.map(String.init) ?? "" }
        for comic in comics { XCTAssertEqual(names.count { $0 == comic }, 1, "\(comic) in \(listing)", file: file, line: line) }
    }
}
