import InkyCommandLine
import InkyTestSupport
import XCTest

/// The notify datagram itself, for both kinds of socket name systemd hands out.
final class SystemdNotifyTests: XCTestCase {
    func testAPathSocketGetsTheStateVerbatim() throws {
        let socket = try NotifySocket()
        XCTAssertTrue(SystemdNotify.send("READY=1\nSTATUS=serving", socketName: socket.name))
        XCTAssertEqual(socket.receive(timeout: 5), "READY=1\nSTATUS=serving")
    }

    func testAnAbstractSocketNameStartsWithAt() throws {
        let socket = try NotifySocket(abstract: true)
        XCTAssertTrue(SystemdNotify.send("READY=1", socketName: socket.name))
        XCTAssertEqual(socket.receive(timeout: 5), "READY=1")
    }

    func testNoSocketOrANameSystemdWouldNotGiveSendsNothing() {
        XCTAssertFalse(SystemdNotify.send("READY=1", socketName: nil))
        XCTAssertFalse(SystemdNotify.send("READY=1", socketName: "relative/path"))
        XCTAssertFalse(SystemdNotify.send("READY=1", socketName: "/nonexistent/inkyfs-notify"))
    }
}
