import Dispatch

/// The library core blocks (a comic listed by a worker, a cover made, a page decoded): its
/// calls run on this queue, never on an event loop or Swift's few cooperative threads.
enum OffLoop {
    private static let queue = DispatchQueue(label: "inkyfs.serve.library", qos: .userInitiated, attributes: .concurrent)

    /// `work`'s result, computed on the library queue.
    static func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: work()) }
        }
    }

    /// What a completion-style call of the library core hands its completion (called once).
    static func await<T: Sendable>(_ start: @escaping @Sendable (@escaping @Sendable (T) -> Void) -> Void) async -> T {
        await withCheckedContinuation { continuation in
            queue.async { start { continuation.resume(returning: $0) } }
        }
    }
}
