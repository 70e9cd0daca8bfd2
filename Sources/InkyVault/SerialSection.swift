import Synchronization

/// Runs one body at a time, with typed throws carried through, when there is no value to guard.
final class SerialSection: Sendable {
    private let mutex = Mutex(())

    func run<R: Sendable, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        try mutex.withLock { _ throws(E) -> R in try body() }
    }
}
