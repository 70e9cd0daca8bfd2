import Foundation
import InkyCore
import InkyTestSupport
import XCTest

/// `rm` of a link in `Continue Reading/`, the one write the mount takes: it forgets that comic's
/// reading state as `inkyfs progress forget` does, for good, and only for the mounting user.
/// Through a real mount with /bin/rm; pages are read with `cat`, one after another, as a person
/// paging through (two pages make a comic "reading": MountReadingRuleTests).
final class MountContinueReadingRemovalTests: XCTestCase {
    private var state: URL!

    override func setUp() { state = ArchiveMaker.temporaryDirectory("forget-state") }
    override func tearDown() { try? FileManager.default.removeItem(at: state) }

    private func pageThrough(_ mount: MountedLibrary, _ comic: String, pages: [String]) throws {
        for page in pages {
            let read = try CommandRunner.capture("/bin/cat", [mount.path("\(comic)/\(page).jpg")])
            XCTAssertEqual(read.status, 0, read.stderr)
        }
    }

    private func links(_ mount: MountedLibrary) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: mount.path("Continue Reading")).sorted()
    }

    /// `inkyfs progress --all --json`, as library-relative paths.
    private func progress(_ library: URL) throws -> [String] {
        let result = try CommandRunner.inkyfs(["progress", "--all", "--json", "--state", state.path])
        XCTAssertEqual(result.status, 0, result.stderr)
        let rows = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
        return rows.map { ($0["path"] as? String ?? "").replacingOccurrences(of: library.path + "/", with: "") }
    }

    func testRmOfALinkForgetsItsComicForGoodAndKeepsItsBookmarks() throws {
        var mount = try MountedLibrary(library: Corpus.fixtures, arguments: ["--state", state.path])
        try pageThrough(mount, "Moon Tales/Moon Tales 02", pages: ["001", "002"])
        try pageThrough(mount, "Space Patrol/Space Patrol 001", pages: ["001", "002"])
        XCTAssertEqual(try links(mount), ["01 - Space Patrol 001", "02 - Moon Tales 02"])
        let marked = try CommandRunner.inkyfs(["bookmark", "add", Corpus.fixture("Space Patrol/Space Patrol 001.cbz"), "5", "--state", state.path])
        XCTAssertEqual(marked.status, 0, marked.stderr)

        let removed = try CommandRunner.capture("/bin/rm", [mount.path("Continue Reading/01 - Space Patrol 001")])
        XCTAssertEqual(removed.status, 0, removed.stderr)
        XCTAssertEqual(removed.stderr, "")
        XCTAssertEqual(try links(mount), ["01 - Moon Tales 02"], "gone at once, the others renumbered")
        XCTAssertEqual(try progress(Corpus.fixtures), ["Moon Tales/Moon Tales 02.cbt"])
        XCTAssertTrue(mount.logSays("forgot the reading state of \(Corpus.fixture("Space Patrol/Space Patrol 001.cbz"))"), mount.logText)
        let bookmarks = try CommandRunner.inkyfs(["bookmark", "list", "--state", state.path])
        XCTAssertEqual(bookmarks.stdout, "\(Corpus.fixture("Space Patrol/Space Patrol 001.cbz")): 5\n", "bookmarks stay, as with progress forget")

        // A viewer still open on it reads on: one more page does not bring it back; reading starts over at two.
        try pageThrough(mount, "Space Patrol/Space Patrol 001", pages: ["003"])
        XCTAssertEqual(try links(mount), ["01 - Moon Tales 02"])
        let again = try CommandRunner.capture("/bin/rm", [mount.path("Continue Reading/01 - Space Patrol 001")])
        XCTAssertEqual(again.status, 1)
        XCTAssertTrue(again.stderr.hasSuffix(": No such file or directory\n"), again.stderr)

        XCTAssertEqual(mount.unmount(), 0)
        mount = try MountedLibrary(library: Corpus.fixtures, arguments: ["--state", state.path])
        XCTAssertEqual(try links(mount), ["01 - Moon Tales 02"], "still gone after a remount")
        XCTAssertEqual(try progress(Corpus.fixtures), ["Moon Tales/Moon Tales 02.cbt"])
        XCTAssertEqual(mount.unmount(), 0)
    }

    /// `-o ro` (`--read-only`) is not dropped as `rw` is: the kernel mounts read-only, so it
    /// refuses the `rm` before the daemon hears of it, and mount(8) and statvfs say `ro`. Its
    /// EROFS comes before the modes' EACCES, so another user hears it too.
    func testAnRoMountRefusesRmInTheKernelAndSaysSo() throws {
        let mount = try MountedLibrary(library: Corpus.fixtures, arguments: ["--state", state.path, "-o", "ro,allow_other"])
        try pageThrough(mount, "Space Patrol/Space Patrol 001", pages: ["001", "002"])
        XCTAssertEqual(try links(mount), ["01 - Space Patrol 001"])
        let link = mount.path("Continue Reading/01 - Space Patrol 001")
        XCTAssertEqual(SystemCall.errnoOf { unlink(link) }, EROFS)
        let removed = try CommandRunner.capture("/bin/rm", [link])
        XCTAssertEqual(removed.status, 1)
        XCTAssertTrue(removed.stderr.hasSuffix(": Read-only file system\n"), removed.stderr)
        if getuid() == 0 {
            // The link is past a folder nobody may not search: the path, not the write, fails first.
            for (command, said) in [(["/bin/rm", "-f", link], "Permission denied"),
                                    (["/bin/rm", "-f", mount.path("Space Patrol/Space Patrol 001/001.jpg")], "Read-only file system"),
                                    (["/bin/mkdir", mount.path("Space Patrol/new folder")], "Read-only file system")] {
                let run = try CommandRunner.capture("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups"] + command)
                XCTAssertEqual(run.status, 1, command.joined(separator: " "))
                XCTAssertTrue(run.stderr.hasSuffix(": \(said)\n"), "nobody: \(command.joined(separator: " ")): \(run.stderr)")
            }
        }
        XCTAssertEqual(try links(mount), ["01 - Space Patrol 001"], "the link stays")
        XCTAssertEqual(try progress(Corpus.fixtures), ["Space Patrol/Space Patrol 001.cbz"])

        var volume = statvfs()
        XCTAssertEqual(statvfs(mount.mountpoint.path, &volume), 0)
        XCTAssertNotEqual(volume.f_flag & UInt(ST_RDONLY), 0, "ST_RDONLY")
        let mounts = try XCTUnwrap(ProcFile.read("/proc/self/mounts"))
        let line = try XCTUnwrap(mounts.split(separator: "\n").first { $0.contains(" \(mount.mountpoint.path) ") })
        XCTAssertTrue(line.contains(" ro,") && line.contains("nosuid") && line.contains("nodev"), String(line))
        XCTAssertTrue(mount.logSays("not the defaults:"), mount.logText)
        let settings = mount.logText.split(separator: "\n").first { $0.contains("not the defaults:") } ?? ""
        XCTAssertTrue(settings.contains(" --read-only "), "the setting the daemon runs with: \(settings)")
        XCTAssertFalse(mount.logText.contains("forgot the reading state"), mount.logText)
        XCTAssertEqual(mount.unmount(), 0)
    }

    /// With `-o allow_other`, another user can remove no link (the folder is 0700, the mounting
    /// user's) and write nothing, the errno being the one the kernel's checks give first. Given
    /// CAP_DAC_OVERRIDE, which lets them past the modes as it lets root, the daemon refuses them
    /// itself: EACCES for the link (the reading state is the mounting user's), EROFS elsewhere.
    func testAnotherUserCanNeitherForgetNorWrite() throws {
        guard getuid() == 0 else { throw XCTSkip("needs root to run commands as nobody") }
        let fixture = try VaultMountFixture(mountArguments: ["-o", "allow_other"])
        try fixture.unlock()
        let link = fixture.path("Continue Reading/01 - Space Patrol 001")
        for page in ["001", "002"] { _ = try readFile(fixture.path("Space Patrol/Space Patrol 001/\(page).jpg")) }
        XCTAssertTrue(waitUntil(3) { SystemCall.status(link) != nil }, "a link to try")
        let libraryBefore = TreeSnapshot.of(fixture.library.path, includeTimes: true)
        let page = fixture.path("Space Patrol/Space Patrol 001/001.jpg"), comic = fixture.path("Space Patrol/Space Patrol 001")
        let vaultPage = fixture.path("Vault/Secret Series/Moon Tales 01/001.jpg")

        func asNobody(_ command: [String], overridingModes: Bool = false) throws -> CommandRunner.Result {
            let capabilities = overridingModes ? ["--inh-caps=+dac_override", "--ambient-caps=+dac_override"] : []
            return try CommandRunner.capture("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups"] + capabilities + command)
        }
        func expect(_ ending: String, _ command: [String], overridingModes: Bool = false) throws {
            let run = try asNobody(command, overridingModes: overridingModes)
            let said = run.stderr.split(separator: "\n")
            let shown = (overridingModes ? "(past the modes) " : "") + command.joined(separator: " ")
            XCTAssertNotEqual(run.status, 0, shown)
            XCTAssertFalse(said.isEmpty, shown)
            XCTAssertTrue(said.allSatisfy { $0.hasSuffix(": " + ending) }, "\(shown): \(run.stderr)")
        }
        XCTAssertEqual(try asNobody(["/usr/bin/stat", "-c", "%i", page]).status, 0, "nobody reaches the library")

        try expect("Permission denied", ["/bin/rm", link])
        try expect("Permission denied", ["/bin/rm", "-f", link])
        // -f: rm asks before removing a file its user may not write, when run from a terminal.
        try expect("Permission denied", ["/bin/rm", "-f", page])
        try expect("Permission denied", ["/bin/rm", "-rf", comic])
        try expect("Permission denied", ["/bin/rm", "-f", vaultPage])
        try expect("Permission denied", ["/usr/bin/touch", page])
        try expect("Permission denied", ["/usr/bin/touch", fixture.path("Space Patrol/new file")])
        try expect("Permission denied", ["/bin/mkdir", fixture.path("Space Patrol/new folder")])
        try expect("Permission denied", ["/bin/mv", page, fixture.path("Space Patrol/moved.jpg")])
        try expect("Permission denied", ["/bin/cp", "/etc/hostname", fixture.path("Space Patrol/")])
        // Only a file's owner may change its mode (EPERM), read-only filesystem or not.
        try expect("Operation not permitted", ["/bin/chmod", "600", page])

        try expect("Permission denied", ["/bin/rm", link], overridingModes: true)
        try expect("Read-only file system", ["/bin/rm", "-f", page], overridingModes: true)
        try expect("Read-only file system", ["/bin/rm", "-f", vaultPage], overridingModes: true)
        try expect("Read-only file system", ["/usr/bin/touch", fixture.path("Space Patrol/new file")], overridingModes: true)
        try expect("Read-only file system", ["/bin/mkdir", fixture.path("Continue Reading/new folder")], overridingModes: true)

        XCTAssertNotNil(SystemCall.status(link), "the link stays")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: fixture.path("Continue Reading")), ["01 - Space Patrol 001"])
        XCTAssertEqual(TreeSnapshot.of(fixture.library.path, includeTimes: true), libraryBefore)
        XCTAssertTrue(FileManager.default.fileExists(atPath: vaultPage), "the vault stays unlocked")
        XCTAssertTrue(fixture.mount.isDaemonAlive, fixture.mount.logText)
    }
}
