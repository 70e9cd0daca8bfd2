import Foundation

/// Work done off the FUSE threads, one job at a time, at most once in flight per key: a folder
/// listed again while its cover is being made does not queue a second making of it.
final class BackgroundOnce: @unchecked Sendable {
    private let queue: DispatchQueue
    private let lock = NSLock()
    private var pending: Set<String> = []

    init(label: String) { queue = DispatchQueue(label: label, qos: .utility) }

    /// Runs `work` later unless a job for `key` is queued or running.
    func schedule(_ key: String, _ work: @escaping @Sendable () -> Void) {
        guard lock.withLock({ pending.insert(key).inserted }) else { return }
        queue.async { [self] in
            work()
            lock.withLock { _ = pending.remove(key) }
        }
    }
}
