import Foundation
import XCTest

extension MountedLibrary {
    /// Runs `body`, the part of a test that says the mount never hangs; if it has not returned
    /// within `seconds`, the daemon is killed, its FUSE connection aborted (fusectl) and the mount
    /// detached (`fusermount3 -u -z`), which ends every request stuck in it (ENOTCONN), and the
    /// test fails saying so. Without this a hang stalls CI until its own limit. The abort is not
    /// optional: a reader waiting on a page the dead daemon's invalidation left locked stays
    /// stuck after the kill and the detach (seen when lock waited on a held worker). The deadline bounds a hang, not a speed: make it
    /// generous, the body ends as soon as it is done.
    public func failingIfHung<T>(after seconds: Double, _ what: String, file: StaticString = #filePath, line: UInt = #line,
                                 _ body: () throws -> T) rethrows -> T {
        let finished = DispatchSemaphore(value: 0)
        let fired = LockedBox(false)
        let daemon = process.processIdentifier, mountpoint = mountpoint.path
        try? FUSEConnections.ensure()
        let connection = FUSEConnections.connection(of: mountpoint)
        Thread.detachNewThread {
            guard finished.wait(timeout: .now() + seconds) == .timedOut else { return }
            fired.value = true
            kill(daemon, SIGKILL)
            if let connection { FUSEConnections.abort(connection) }
            _ = try? CommandRunner.capture("/usr/bin/fusermount3", ["-u", "-z", mountpoint])
        }
        defer {
            finished.signal()
            if fired.value {
                XCTFail("\(what): still not done after \(seconds) s; the daemon was killed and the mount detached", file: file, line: line)
            }
        }
        return try body()
    }
}
