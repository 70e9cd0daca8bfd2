import Foundation
import Synchronization

/// Collects results computed on several threads and hands them on in index order, as soon as
/// all before them are in, one call at a time (so output reads in library order while work
/// runs in parallel).
public final class OrderedDelivery<Value: Sendable>: Sendable {
    private struct State {
        var pending: [Value?]
        var next = 0
    }

    private let state: Mutex<State>
    private let deliver: @Sendable (Int, Value) -> Void

    public init(count: Int, deliver: @escaping @Sendable (Int, Value) -> Void) {
        state = Mutex(State(pending: Array(repeating: nil, count: count)))
        self.deliver = deliver
    }

    /// `deliver` runs under the lock: that is what keeps the calls one at a time and in order.
    public func store(_ index: Int, _ value: Value) {
        state.withLock { state in
            state.pending[index] = value
            while state.next < state.pending.count, let ready = state.pending[state.next] {
                state.pending[state.next] = nil
                deliver(state.next, ready)
                state.next += 1
            }
        }
    }
}
