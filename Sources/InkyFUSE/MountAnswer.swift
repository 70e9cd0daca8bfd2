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

    /// The kernel's number for the mount's connection (the minor of its device in
    /// /proc/self/mountinfo), which names its folder in /sys/fs/fuse/connections: writing 1 to
    /// its `abort` ends every request a stuck daemon holds.
    public static func connection(of mountpoint: String, mountinfo: String = "/proc/self/mountinfo") -> Int? {
        for line in (ProcFile.read(mountinfo) ?? "").split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count > 4, FilesystemKind.unescape(String(fields[4])) == mountpoint,
                  let minor = fields[2].split(separator: ":").last.flatMap({ Int($0) }) else { continue }
            return minor
        }
        return nil
    }

    /// What clears a mount that does not answer, in the order to try.
    public static func fix(for mountpoint: String) -> String {
        let abort = connection(of: mountpoint).map { "; if that hangs too: echo 1 | sudo tee /sys/fs/fuse/connections/\($0)/abort" } ?? ""
        return "fusermount3 -u -z '\(mountpoint)'" + abort
    }
}
