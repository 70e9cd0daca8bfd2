import Foundation

/// Polls `condition` until it holds, at most `seconds`; true if it held in time. For what a test
/// can only see by looking again (a log line arriving through a pipe, a file the daemon makes, a
/// worker's state in /proc): a bare sleep in its place passes or fails with the machine's load.
/// The deadline is only there so that what never happens fails the test instead of hanging it:
/// make it generous, the wait ends as soon as the condition holds.
@discardableResult
public func waitUntil(_ seconds: Double = 10, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while !condition() {
        guard Date() < deadline else { return false }
        usleep(20_000)
    }
    return true
}

/// Polls `value` until it has not changed for `still` seconds, at most `seconds` in all; true
/// if it settled. For what only stops changing (a log arriving through a pipe, a daemon's I/O
/// counters once its background work is done).
@discardableResult
public func waitUntilSteady<T: Equatable>(_ seconds: Double = 10, still: Double, _ value: () -> T) -> Bool {
    var last = (value: value(), since: Date())
    return waitUntil(seconds) {
        let now = value()
        if now != last.value { last = (now, Date()) }
        return Date().timeIntervalSince(last.since) >= still
    }
}
