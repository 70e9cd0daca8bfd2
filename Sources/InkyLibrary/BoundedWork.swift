import Foundation
import Synchronization

/// Blocking work (a page fetch waits on the worker pool) run on at most `limit` threads of its
/// own. On libdispatch's queues each block that blocks in a syscall or a condition costs one
/// more pool thread (a serial queue per comic gets its own; a concurrent one grows while its
/// threads wait), so many comics read at once parked dozens of threads on a pool of 4
/// workers. Here the work waits in a queue instead, as long as no thread is free.
///
/// Work with the same strand runs one item at a time, in the order given: a solid comic's
/// pages are one stream, read in order. Threads start on demand and end after 10 s idle, so
/// an idle mount (or a library made in a test) keeps none.
final class BoundedWork<Strand: Hashable & Sendable>: Sendable {
    private struct Item {
        var strand: Strand?
        var work: @Sendable () -> Void
    }

    private struct State {
        var queued: [Item] = []
        var busyStrands: Set<Strand> = []
        var threads = 0
        var idle = 0
    }

    private let limit: Int
    private let state = Mutex(State())
    /// Signalled once per item that may have become runnable; a thread that finds none waits again.
    private let runnable = DispatchSemaphore(value: 0)
    private let label: String

    init(label: String, limit: Int) {
        self.label = label
        self.limit = max(1, limit)
    }

    /// Threads running now (busy or idle), for tests.
    var threadCount: Int { state.withLock { $0.threads } }

    func submit(strand: Strand? = nil, _ work: @escaping @Sendable () -> Void) {
        let startThread = state.withLock { state in
            state.queued.append(Item(strand: strand, work: work))
            // A thread for each item no idle thread is there to take, up to the limit.
            guard state.queued.count > state.idle, state.threads < limit else { return false }
            state.threads += 1
            state.idle += 1
            return true
        }
        if startThread {
            let thread = Thread { [self] in run() }
            thread.name = label
            thread.start()
        }
        runnable.signal()
    }

    private func run() {
        while true {
            guard runnable.wait(timeout: .now() + 10) == .success else {
                let done = state.withLock { state in
                    // Still idle with nothing to do: end. Work queued meanwhile signals again.
                    guard state.queued.isEmpty else { return false }
                    state.threads -= 1
                    state.idle -= 1
                    return true
                }
                if done { return }
                continue
            }
            let item: Item? = state.withLock { state in
                guard let index = state.queued.firstIndex(where: { $0.strand.map { !state.busyStrands.contains($0) } ?? true }) else {
                    return nil
                }
                let item = state.queued.remove(at: index)
                if let strand = item.strand { state.busyStrands.insert(strand) }
                state.idle -= 1
                return item
            }
            guard let item else { continue } // its strand is busy: that item's end signals for it
            item.work()
            let more = state.withLock { state in
                state.idle += 1
                guard let strand = item.strand else { return false }
                state.busyStrands.remove(strand)
                return state.queued.contains { $0.strand == strand }
            }
            if more { runnable.signal() }
        }
    }
}
