import Foundation
import InkyCore
import InkyFUSE
import InkyTestSupport
import XCTest

/// What doctor and status tell a user to run on a mount that does not answer.
final class MountAnswerTests: XCTestCase {
    /// The connection's number comes from the mount table (a stuck mount answers no stat), and
    /// must be the minor of the device a stat of the mountpoint reports; where the FUSE control
    /// folder is not mounted, the advice mounts it before the abort.
    func testTheFixNamesTheConnectionAndMountsTheControlFolderWhenItIsMissing() throws {
        let mount = try MountedLibrary(library: Corpus.fixtures)
        var info = stat()
        XCTAssertEqual(stat(mount.mountpoint.path, &info), 0)
        let minor = UInt64((info.st_dev & 0xff) | ((info.st_dev >> 12) & 0xfff00))
        XCTAssertEqual(InkyfsMount.current().first { $0.mountpoint == mount.mountpoint.path }?.connection, minor)

        let missing = "/nonexistent-fusectl-\(UUID().uuidString)"
        XCTAssertEqual(MountAnswer.fix(for: mount.mountpoint.path, connections: missing),
                       "fusermount3 -u -z '\(mount.mountpoint.path)'; if that hangs too: sudo mount -t fusectl fusectl \(missing); "
                       + "echo 1 | sudo tee \(missing)/\(minor)/abort")
        let present = FileManager.default.temporaryDirectory.appendingPathComponent("fusectl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: present.appendingPathComponent("\(minor)"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: present) }
        XCTAssertEqual(MountAnswer.fix(for: mount.mountpoint.path, connections: present.path),
                       "fusermount3 -u -z '\(mount.mountpoint.path)'; if that hangs too: echo 1 | sudo tee \(present.path)/\(minor)/abort")
        XCTAssertEqual(mount.unmount(), 0, mount.logText)
        XCTAssertEqual(MountAnswer.fix(for: mount.mountpoint.path), "fusermount3 -u -z '\(mount.mountpoint.path)'",
                       "no mount there: nothing to abort")
    }
}
