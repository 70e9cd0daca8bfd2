import Foundation

/// Runs one body at a time, with typed throws carried through, when there is no value to
/// guard. `Locked<Void>` did the same, but its zero-size stored value sits at the object's own
/// address, so ThreadSanitizer took every serialized `add` for an access race on it.
final class SerialSection: @unchecked Sendable {
    private let lock = NSLock()

    func run<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}
