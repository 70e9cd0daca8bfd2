import Foundation

/// A value behind an `NSLock`, with typed throws carried through (`NSLock.withLock` is
/// `rethrows`, which erases them). NSLock rather than `Synchronization.Mutex` because
/// the package still declares macOS 14, where Mutex does not exist, and the rest of the
/// project uses NSLock too. `@unchecked Sendable`: every access goes through the lock.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
