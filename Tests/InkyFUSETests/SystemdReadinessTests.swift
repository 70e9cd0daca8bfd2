import Foundation
import InkyTestSupport
import XCTest

/// `Type=notify` readiness as systemd sees it (contrib/inkyfs@.service): READY=1 arrives on
/// $NOTIFY_SOCKET only when the mount answers, STOPPING=1 when SIGTERM unmounts it.
final class SystemdReadinessTests: XCTestCase {
    func testReadyArrivesOnlyOnceMountedAndSigtermSaysStopping() throws {
        let notify = try NotifySocket()
        let scratch = try ScratchMount()
        defer { scratch.remove() }
        let mountpoint = scratch.mountpoint, state = scratch.state
        let daemon = Process()
        daemon.executableURL = CommandRunner.binary
        daemon.arguments = ["mount", "--foreground", Corpus.fixtures.path, mountpoint.path]
        daemon.environment = ProcessInfo.processInfo.environment.merging(["NOTIFY_SOCKET": notify.name, "XDG_STATE_HOME": state.path]) { $1 }
        daemon.standardError = FileHandle.nullDevice
        try daemon.run()

        let ready = try XCTUnwrap(notify.receive(timeout: 20), "no READY=1 within 20 s")
        XCTAssertTrue(MountedLibrary.isMounted(mountpoint.path), "READY=1 comes after the mount, not before")
        let lines = Set(ready.split(separator: "\n").map(String.init))
        XCTAssertTrue(lines.contains("READY=1"), ready)
        XCTAssertTrue(lines.contains("MAINPID=\(daemon.processIdentifier)"), ready)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mountpoint.path + "/Moon Tales/Moon Tales 02").filter { $0.hasSuffix(".jpg") }.count, 6)

        kill(daemon.processIdentifier, SIGTERM)
        XCTAssertEqual(notify.receive(timeout: 20), "STOPPING=1")
        XCTAssertEqual(daemon.waitForExit(), 0, "SIGTERM is a clean stop")
        XCTAssertFalse(MountedLibrary.isMounted(mountpoint.path))
    }
}
