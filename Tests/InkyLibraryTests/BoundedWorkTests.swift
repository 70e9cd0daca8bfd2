import Foundation
import Synchronization
import XCTest
@testable import InkyLibrary

/// Page fetches block on the worker pool: they must park at most `limit` threads, and a solid
/// comic's requests must run one at a time, in order, without holding up other comics.
final class BoundedWorkTests: XCTestCase {
    /// Waits (a generous deadline, never a speed) until `condition` holds.
    private func waitUntil(_ what: String, _ condition: () -> Bool) {
        let deadline = Date().addingTimeInterval(20)
        while !condition() {
            guard Date() < deadline else { return XCTFail("never happened: \(what)") }
            usleep(1_000)
        }
    }

    func testBlockedWorkNeverHoldsMoreThreadsThanTheLimit() {
        let work = BoundedWork<Int>(label: "test", limit: 3)
        let running = Mutex((now: 0, most: 0, done: 0))
        let gate = DispatchSemaphore(value: 0)
        for _ in 0..<20 {
            work.submit {
                running.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
                gate.wait()
                running.withLock { $0.now -= 1; $0.done += 1 }
            }
        }
        waitUntil("three items blocked") { running.withLock { $0.now } == 3 }
        XCTAssertLessThanOrEqual(work.threadCount, 3)
        for _ in 0..<20 { gate.signal() }
        waitUntil("every item done") { running.withLock { $0.done } == 20 }
        XCTAssertEqual(running.withLock { $0.most }, 3, "as many at once as the limit, never more")
        XCTAssertLessThanOrEqual(work.threadCount, 3)
    }

    func testOneStrandRunsInOrderOneAtATime() {
        let work = BoundedWork<String>(label: "test", limit: 4)
        let seen = Mutex((order: [Int](), inside: 0, overlapped: false))
        for index in 0..<50 {
            work.submit(strand: "solid.cb7") {
                seen.withLock { $0.inside += 1; $0.overlapped = $0.overlapped || $0.inside > 1 }
                usleep(200)
                seen.withLock { $0.order.append(index); $0.inside -= 1 }
            }
        }
        waitUntil("all fifty ran") { seen.withLock { $0.order.count } == 50 }
        XCTAssertEqual(seen.withLock { $0.order }, Array(0..<50))
        XCTAssertFalse(seen.withLock { $0.overlapped }, "two items of one strand ran at once")
    }

    func testABlockedStrandHoldsUpOnlyItself() {
        let work = BoundedWork<String>(label: "test", limit: 2)
        let gate = DispatchSemaphore(value: 0)
        let events = Mutex([String]())
        work.submit(strand: "a") { events.withLock { $0.append("a1 started") }; gate.wait(); events.withLock { $0.append("a1 done") } }
        work.submit(strand: "a") { events.withLock { $0.append("a2") } }
        work.submit(strand: "b") { events.withLock { $0.append("b1") } }
        waitUntil("b1 ran while a1 is blocked") { events.withLock { $0.contains("b1") } }
        // a2 cannot have started: a1, before it on its strand, is still waiting on the gate.
        XCTAssertFalse(events.withLock { $0.contains("a2") })
        gate.signal()
        waitUntil("a2 ran after a1") { events.withLock { $0.contains("a2") } }
        let log = events.withLock { $0 }
        guard let first = log.firstIndex(of: "a1 done"), let second = log.firstIndex(of: "a2") else { return XCTFail("\(log)") }
        XCTAssertLessThan(first, second, "\(log)")
    }
}
