import Foundation
import InkyTestSupport
import XCTest

/// The first walks through a fresh mount. The kernel makes a FUSE mount's root with no
/// permission bits, owner 0 and one link until it applies a GETATTR answer, and drops an answer
/// when the root was invalidated after the request went out; the views appear a moment after the
/// mount's first request and invalidate the root. Another user's first walk (`-o allow_other`)
/// then met the empty mode and failed with EACCES, no LOOKUP sent. Now the daemon gives the
/// kernel the root's attributes itself as it starts, and invalidates the root only after.
final class MountFirstWalkTests: XCTestCase {
    private var folders: [URL] = []

    override func tearDown() {
        for folder in folders { try? FileManager.default.removeItem(at: folder) }
    }

    private func folder(_ label: String) -> URL {
        let url = ArchiveMaker.temporaryDirectory(label)
        folders.append(url)
        XCTAssertEqual(chmod(url.path, 0o755), 0)
        return url
    }

    /// `inkyfs mount` in the background, as a person runs it: it returns once the daemon said it
    /// is ready. `body` runs while mounted; the mount goes after, whatever happened.
    private func mounted(_ library: URL, state: URL, options: [String] = [], _ body: (URL) throws -> Void) throws {
        try MountedLibrary.skipUnlessFUSEOpens()
        let mountpoint = folder("first-walk-mnt"), home = folder("first-walk-home")
        defer { _ = try? ArchiveMaker.run("/usr/bin/fusermount3", ["-u", "-z", mountpoint.path]) }
        let mount = try CommandRunner.inkyfs(["mount", "--no-covers", "--state", state.path] + options + [library.path, mountpoint.path],
                                             environment: ["XDG_STATE_HOME": home.path, "XDG_CACHE_HOME": home.path + "/cache"])
        XCTAssertEqual(mount.status, 0, mount.stderr)
        try body(mountpoint)
        let unmount = try CommandRunner.inkyfs(["unmount", mountpoint.path])
        XCTAssertEqual(unmount.status, 0, unmount.stderr)
    }

    /// What the kernel holds for `path` now, asking the daemon nothing (statx AT_STATX_DONT_SYNC).
    private func cachedMode(_ path: String) throws -> String {
        try ArchiveMaker.run("/usr/bin/stat", ["--cached=always", "-c", "%A %u", path]).trimmingCharacters(in: .newlines)
    }

    /// Nobody but the daemon touches the mount: the kernel still gets the root's attributes (the
    /// check asks the daemon nothing). Before, the root stayed "d--------- 0" until a request.
    func testTheKernelGetsTheRootsAttributesWithoutAnyoneAsking() throws {
        let (library, state) = try MetadataLibraryFixture.indexedLibrary(in: folder)
        XCTAssertEqual(chmod(library.path, 0o750), 0)
        try mounted(library, state: state) { mountpoint in
            let expected = "dr-xr-x--- \(getuid())"
            XCTAssertTrue(waitUntil(10) { (try? cachedMode(mountpoint.path)) == expected }, (try? cachedMode(mountpoint.path)) ?? "")
            XCTAssertTrue(try FileManager.default.contentsOfDirectory(atPath: mountpoint.path + "/Batman").contains("Extras"))
        }
    }

    func testAnotherUsersFirstWalkThroughAFreshMountIsNeverRefused() throws {
        guard getuid() == 0 else { throw XCTSkip("needs root to mount with allow_other and run a command as nobody") }
        let (library, state) = try MetadataLibraryFixture.indexedLibrary(in: folder)
        // A race: each fresh mount is one more chance to lose it.
        for round in 1...5 {
            try mounted(library, state: state, options: ["-o", "allow_other"]) { mountpoint in
                let walked = try CommandRunner.capture("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups",
                                                                            "/usr/bin/stat", "-c", "%A", mountpoint.path + "/Batman/"])
                XCTAssertEqual(walked.status, 0, "mount \(round): \(walked.stderr)")
                XCTAssertEqual(walked.stdout, "dr-xr-xr-x\n", "mount \(round)")
                XCTAssertTrue(waitUntil(10) { FileManager.default.fileExists(atPath: mountpoint.path + "/By Series") },
                              "the views appeared: mount \(round) was the race")
            }
        }
    }
}
