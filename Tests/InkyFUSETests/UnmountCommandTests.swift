import Foundation
import InkyTestSupport
import XCTest

/// `inkyfs unmount` says why it cannot: nothing mounted there, or which programs hold it; and
/// libfuse's own reason for refusing options reaches the terminal of a background mount.
final class UnmountCommandTests: XCTestCase {
    func testABusyMountNamesItsHoldersAndOffersLazy() throws {
        let mount = try MountedLibrary(library: Corpus.fixtures)
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/bin/sleep")
        holder.arguments = ["600"]
        holder.currentDirectoryURL = URL(fileURLWithPath: mount.path("Moon Tales"))
        try holder.run()
        defer { if holder.isRunning { holder.terminate() } }
        let busy = try CommandRunner.inkyfs(["unmount", mount.mountpoint.path])
        XCTAssertEqual(busy.status, 5)
        XCTAssertEqual(busy.stderr, """
            inkyfs: \(mount.mountpoint.path) is busy: in use by sleep (pid \(holder.processIdentifier): working directory)
              fix: close it, or detach it now with: inkyfs unmount --lazy \(mount.mountpoint.path)

            """)
        XCTAssertTrue(MountedLibrary.isMounted(mount.mountpoint.path))
        holder.terminate()
        holder.waitUntilExit()
        let unmounted = try CommandRunner.inkyfs(["unmount", mount.mountpoint.path])
        XCTAssertEqual(unmounted.status, 0, unmounted.stderr)
        XCTAssertEqual(mount.process.waitForExit(), 0)
        let again = try CommandRunner.inkyfs(["unmount", mount.mountpoint.path])
        XCTAssertEqual(again.status, 4)
        XCTAssertTrue(again.stderr.hasPrefix("inkyfs: \(mount.mountpoint.path) is not an inkyfs mount: nothing is mounted there"), again.stderr)
    }

    func testLibfuseReasonForABadOptionReachesTheTerminal() throws {
        let scratch = try ScratchMount()
        defer { scratch.remove() }
        let result = try CommandRunner.inkyfs(["mount", "-o", "bogus", Corpus.fixtures.path, scratch.mountpoint.path],
                                              environment: ["XDG_STATE_HOME": scratch.state.path])
        XCTAssertEqual(result.status, 3)
        XCTAssertTrue(result.stderr.hasPrefix("inkyfs: libfuse refused the mount options: fuse: unknown option(s): `-o bogus'\n"), result.stderr)
        XCTAssertFalse(MountedLibrary.isMounted(scratch.mountpoint.path))
    }
}
