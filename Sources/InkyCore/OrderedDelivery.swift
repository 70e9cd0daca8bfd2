import Foundation

/// Collects results computed on several threads and hands them on in index order, as soon as
/// all before them are in, one call at a time (so output reads in library order while work
/// runs in parallel).
public final class OrderedDelivery<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var pending: [Value?]
    private var next = 0
    private let deliver: @Sendable (Int, Value) -> Void

    public init(count: Int, deliver: @escaping @Sendable (Int, Value) -> Void) {
        pending = Array(repeating: nil, count: count)
        self.deliver = deliver
    }

    public func store(_ index: Int, _ value: Value) {
        lock.withLock {
            pending[index] = value
            while next < pending.count, let ready = pending[next] {
                pending[next] = nil
                deliver(next, ready)
                next += 1
            }
        }
    }
}
