import Foundation
import InkyCore
import InkyLibrary

/// Locks the vault after a stretch of disuse, never while one of its files is open: the
/// filesystem's version of the iOS reader locking when the app went to the background.
final class VaultIdleLock: Sendable {
    private let seconds: Double
    private let filesystem: LibraryFilesystem
    private let log: LogSink
    /// A dispatch source is thread-safe; corelibs-dispatch just does not say so (not Sendable).
    nonisolated(unsafe) private let timer: DispatchSourceTimer

    init?(after seconds: Double, filesystem: LibraryFilesystem, log: @escaping LogSink) {
        guard seconds > 0 else { return nil }
        self.seconds = seconds
        self.filesystem = filesystem
        self.log = log
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "inkyfs.vault-idle"))
    }

    func start() {
        let interval = min(5, max(0.25, seconds / 8))
        timer.schedule(deadline: .now() + interval, repeating: interval)
        timer.setEventHandler { [self] in check() }
        timer.resume()
    }

    func stop() { timer.cancel() }

    private func check() {
        guard let idle = filesystem.vault.idleSeconds, idle >= seconds else { return }
        guard filesystem.vault.lock() else { return }
        log("vault locked after \(Int(seconds)) s without use")
        // Whoever reads the Vault/ folder should learn it is gone without having to look.
        DesktopNotification.send(title: "inkyfs: vault locked",
                                 body: "Locked after \(Int(seconds)) s without use. Unlock it again with: inkyfs vault unlock",
                                 log: log)
    }
}
