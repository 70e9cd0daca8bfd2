import Foundation
import Synchronization

/// Failed logins cost time, per client address and per account: after the n-th failure in a
/// row from an address, it is refused for 0.5 × 2ⁿ⁻¹ seconds, at most a minute, answered at once
/// with 429 Too Many Requests and `Retry-After` (never a delayed 401: a delay would hold a
/// connection, and a request, for each guess). An account is held back the same way once it
/// has failed `accountAllowance` times in a row, from anywhere: one client mistyping never locks
/// its owner's other devices out, many clients guessing one account are slowed all the same (its
/// owner then waits at most a minute). A refused attempt never reaches the slow hash, so
/// guessing costs the attacker time and the server no CPU; a success clears both. Registrations
/// (`Key.registration`) are paced per address the same way, each one counting.
///
/// Memory is bounded: past `capacity` entries the one whose refusal ended longest ago goes.
public final class LoginThrottle: Sendable {
    public static let first = 0.5
    public static let cap = 60.0
    static let capacity = 10_000

    public enum Key: Hashable, Sendable {
        case address(String)
        case account(String)
        case registration(String)
    }

    /// Failures of an account, from any address, before it is held back.
    public static let accountAllowance = 10

    private struct Entry {
        var failures: Int
        var notBefore: Double
    }

    private let entries = Mutex<[Key: Entry]>([:])
    private let clock: @Sendable () -> Double

    /// `clock`: monotonic seconds (a test passes its own).
    public init(clock: @escaping @Sendable () -> Double = { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }) {
        self.clock = clock
    }

    /// Seconds until `keys` may try again (the longest of their waits); 0 when they may now.
    public func wait(_ keys: [Key]) -> Double {
        let now = clock()
        return entries.withLock { entries in keys.map { max(0, (entries[$0]?.notBefore ?? 0) - now) }.max() ?? 0 }
    }

    /// Records a failure of each key; returns the longest wait it imposes.
    @discardableResult
    public func failed(_ keys: [Key]) -> Double {
        let now = clock()
        return entries.withLock { entries in
            var longest = 0.0
            for key in keys {
                var entry = entries[key] ?? Entry(failures: 0, notBefore: 0)
                entry.failures += 1
                let counted = if case .account = key { entry.failures - Self.accountAllowance } else { entry.failures }
                let delay = Self.delay(afterFailures: counted)
                entry.notBefore = now + delay
                entries[key] = entry
                longest = max(longest, delay)
            }
            if entries.count > Self.capacity, let oldest = entries.min(by: { $0.value.notBefore < $1.value.notBefore })?.key {
                entries[oldest] = nil
            }
            return longest
        }
    }

    public func succeeded(_ keys: [Key]) {
        entries.withLock { entries in for key in keys { entries[key] = nil } }
    }

    static func delay(afterFailures count: Int) -> Double {
        guard count > 0 else { return 0 }
        return min(cap, first * Double(1 << min(count - 1, 20)))
    }
}
