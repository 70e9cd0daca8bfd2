import Foundation
import InkyCore
import InkyFUSE
import InkyWorker

/// A desktop notification through `notify-send`, when the machine has one. Fire and forget:
/// the daemon never waits on it (without a session bus it can hang for D-Bus's timeout), and
/// a missing or failing notify-send changes nothing but the notification.
enum DesktopNotification {
    static func send(title: String, body: String, log: @escaping LogSink) {
        guard let executable = MountPreflight.findExecutable("notify-send") else { return }
        let pid: Int32
        do throws(Errno) {
            pid = try ProcessSpawner.spawn(executable, ["--app-name=inkyfs", "--icon=dialog-password", title, body],
                                           files: [.open("/dev/null", flags: O_RDONLY, as: 0), .open("/dev/null", flags: O_WRONLY, as: 1),
                                                   .open("/dev/null", flags: O_WRONLY, as: 2)])
        } catch {
            log(.warning("notify-send could not start: \(error)"))
            return
        }
        // Reaped off the daemon's threads; killed if it is still hanging after 30 s.
        DispatchQueue.global(qos: .utility).async {
            var status: Int32 = 0
            for _ in 0 ..< 300 {
                if waitpid(pid, &status, WNOHANG) == pid { return }
                usleep(100_000)
            }
            kill(pid, SIGKILL)
            waitpid(pid, &status, 0)
        }
    }
}
