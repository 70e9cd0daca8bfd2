import Foundation
import InkyCore
import InkyTestSupport
import XCTest

/// A mount placed where its own daemon would read it (its mountpoint inside its library, a
/// bind mount of it there, a second mount of a library holding the first) must never have a
/// daemon wait on itself: refused at mount, and passed over by every walk and listing.
final class MountOwnMountTests: XCTestCase {
    private var folder: URL!
    private var library: URL { folder.appendingPathComponent("library") }
    private var binds: [String] = []

    override func setUpWithError() throws {
        folder = ArchiveMaker.temporaryDirectory("own-mount")
        try FileManager.default.createDirectory(at: library, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Corpus.fixture("Moon Tales"), toPath: library.appendingPathComponent("Moon Tales").path)
    }

    override func tearDown() {
        unbind()
        try? FileManager.default.removeItem(at: folder)
    }

    func testAMountpointInsideTheLibraryOrALibraryInsideTheMountpointIsRefused() throws {
        let inside = library.appendingPathComponent("view")
        try FileManager.default.createDirectory(at: inside, withIntermediateDirectories: true)
        // Reached through a link: the two paths are compared once every link is resolved.
        let link = folder.appendingPathComponent("link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: library)
        let refused = try CommandRunner.inkyfs(["mount", link.path, inside.path])
        XCTAssertEqual(refused.status, 2, refused.stderr)
        XCTAssertEqual(refused.stderr, """
            inkyfs: mountpoint \(inside.path) is inside the library \(link.path): inkyfs would read its own mount
              fix: mount on an empty directory outside the library, e.g. mkdir -p ~/mnt/comics

            """)
        XCTAssertFalse(MountedLibrary.isMounted(inside.path))

        let hidden = try CommandRunner.inkyfs(["mount", "-o", "nonempty", library.appendingPathComponent("Moon Tales").path, library.path])
        XCTAssertEqual(hidden.status, 2, hidden.stderr)
        XCTAssertTrue(hidden.stderr.contains("is inside the mountpoint \(library.path): the mount would hide it"), hidden.stderr)
        XCTAssertFalse(MountedLibrary.isMounted(library.path))
    }

    /// Mounting again on a live mount names it and how to unmount it; -o nonempty, which the
    /// "not empty" message offers elsewhere, would stack a second daemon on it and is refused too.
    func testMountingOnALiveMountSaysWhoseItIs() throws {
        let mounted = try MountedLibrary(library: library)
        for extra in [[], ["-o", "nonempty"]] {
            let again = try CommandRunner.inkyfs(["mount"] + extra + [library.path, mounted.mountpoint.path])
            XCTAssertEqual(again.status, 2, again.stderr)
            XCTAssertEqual(again.stderr, """
                inkyfs: \(mounted.mountpoint.path) is already an inkyfs mount of \(library.path) (pid \(mounted.process.processIdentifier))
                  fix: unmount it with `inkyfs unmount \(mounted.mountpoint.path)`, or mount on another empty directory

                """)
        }
        XCTAssertEqual(InkyfsMount.current().filter { $0.mountpoint == mounted.mountpoint.path }.count, 1, "no second daemon stacked on it")
        XCTAssertEqual(mounted.unmount(), 0, mounted.logText)
    }

    /// A mount's own mountpoint bound into its library, then a second mount of that library:
    /// the second one's walks (listing ahead, watcher) and every listing through either mount
    /// end, and the bound mount shows in neither. Without the guard the first daemon answers
    /// each listing of the loop by listing its own mount, one thread deeper each time.
    func testABindMountOfALiveMountInsideTheLibraryIsPassedOver() throws {
        guard getuid() == 0 else { throw XCTSkip("bind mounts need root") }
        let first = try MountedLibrary(library: library, arguments: ["--no-continue"])
        let loop = library.appendingPathComponent("loop")
        try FileManager.default.createDirectory(at: loop, withIntermediateDirectories: true)
        _ = try ArchiveMaker.run("/usr/bin/mount", ["--bind", first.mountpoint.path, loop.path])
        binds.append(loop.path)
        // The bound mount keeps the first daemon's connection alive: it goes before either
        // daemon is unmounted, or the first would wait for an unmount that never ends.
        defer {
            abortIfHung(first)
            unbind()
        }
        let second = try MountedLibrary(library: library, arguments: ["--no-continue"])
        defer { abortIfHung(second) }
        // A generous watchdog: a hang is a failure, not a stuck suite.
        for mount in [first, second] {
            let listing = try within(60, ["/usr/bin/ls", mount.mountpoint.path])
            XCTAssertEqual(listing.status, 0, listing.stderr)
            XCTAssertTrue(listing.stdout.hasPrefix("Moon Tales\n"), listing.stdout)
            // The first mount may still show `loop` as the empty folder it was before the bind
            // (its listing of the library is kept until the folder changes): either way, nothing
            // below it is ever read.
            let walk = try within(60, ["/usr/bin/find", mount.mountpoint.path])
            XCTAssertEqual(walk.stdout.split(separator: "\n").filter { $0.contains("/loop/") }, [], walk.stdout)
            XCTAssertTrue(walk.stdout.contains("Moon Tales 01/001.jpg"), walk.stdout)
            let inside = try within(60, ["/usr/bin/ls", mount.path("loop")])
            XCTAssertNotEqual(inside.status, 0, inside.stdout)
            XCTAssertTrue(inside.stderr.contains("No such file or directory") || inside.stderr.contains("Too many levels of symbolic links"),
                          inside.stderr)
        }
        XCTAssertEqual(try within(60, ["/usr/bin/ls", second.mountpoint.path]).stdout, "Moon Tales\n",
                       "a mount made after the bind never shows it")
        XCTAssertTrue(first.isDaemonAlive && second.isDaemonAlive)
        unbind()
        XCTAssertEqual(second.unmount(), 0, second.logText)
        XCTAssertEqual(first.unmount(), 0, first.logText)
    }

    private func unbind() {
        for bind in binds.reversed() { _ = try? ArchiveMaker.run("/usr/bin/umount", ["-l", bind]) }
        binds = []
    }

    /// `command` with a deadline (timeout(1) kills it: 124).
    private func within(_ seconds: Int, _ command: [String]) throws -> CommandRunner.Result {
        let result = try CommandRunner.capture("/usr/bin/timeout", [String(seconds)] + command)
        XCTAssertNotEqual(result.status, 124, "\(command) still waited after \(seconds) s: the daemon waits on itself")
        return result
    }

    /// A daemon that hangs on itself can be freed only by aborting its FUSE connection: so a
    /// failure here leaves nothing stuck.
    private func abortIfHung(_ mount: MountedLibrary) {
        guard MountedLibrary.isMounted(mount.mountpoint.path) else { return }
        let probe = try? CommandRunner.capture("/usr/bin/timeout", ["5", "/usr/bin/stat", "-f", mount.mountpoint.path])
        guard probe?.status == 124 else { return }
        try? FUSEConnections.ensure()
        if let connection = FUSEConnections.connection(of: mount.mountpoint.path) { FUSEConnections.abort(connection) }
    }
}
