import Foundation
import InkyCore
import Synchronization

/// How a mount answers a look at its root. A daemon that died leaves ENOTCONN; one that stopped
/// reading its connection (stopped, stuck, or killed before it took the connection from
/// fusermount3) leaves every request waiting, for ever: a plain `stat` by doctor or status
/// then hung with it. So the look is made on a thread of its own and given up after a while;
/// the thread left waiting ends with the process (a FUSE wait is killable).
public enum MountAnswer: Sendable, Equatable {
    case answering
    /// ENOTCONN: the daemon is gone.
    case gone
    /// No answer within the time given.
    case notAnswering

    public static func of(_ mountpoint: String, within seconds: Double = 2) -> MountAnswer {
        final class Outcome: Sendable { let value = Mutex<MountAnswer?>(nil) }
        let outcome = Outcome(), answered = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let answer: MountAnswer = MountPreflight.isDeadMount(mountpoint) ? .gone : .answering
            outcome.value.withLock { $0 = answer }
            answered.signal()
        }
        guard answered.wait(timeout: .now() + seconds) == .success else { return .notAnswering }
        return outcome.value.withLock { $0 } ?? .notAnswering
    }

    /// What clears a mount that does not answer, in the order to try. The abort needs the FUSE
    /// control folder (fusectl), which a machine without systemd may not have mounted.
    public static func fix(for mountpoint: String, connections: String = "/sys/fs/fuse/connections") -> String {
        let detach = "fusermount3 -u -z '\(mountpoint)'"
        guard let mount = InkyfsMount.current().first(where: { $0.mountpoint == mountpoint }) else { return detach }
        let control = FileManager.default.fileExists(atPath: connections + "/\(mount.connection)")
            ? "" : "sudo mount -t fusectl fusectl \(connections); "
        return detach + "; if that hangs too: " + control + "echo 1 | sudo tee \(connections)/\(mount.connection)/abort"
    }
}
