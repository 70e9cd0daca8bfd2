import Foundation
import Synchronization

/// Work done off the FUSE threads, one job at a time, at most once in flight per key: a folder
/// listed again while its cover is being made does not queue a second making of it.
final class BackgroundOnce: Sendable {
    private let queue: DispatchQueue
    private let pending = Mutex<Set<String>>([])

    init(label: String) { queue = DispatchQueue(label: label, qos: .utility) }

    /// Runs `work` later unless a job for `key` is queued or running.
    func schedule(_ key: String, _ work: @escaping @Sendable () -> Void) {
        guard pending.withLock({ $0.insert(key).inserted }) else { return }
        queue.async { [self] in
            work()
            pending.withLock { _ = $0.remove(key) }
        }
    }
}
