/// Wrong vault passwords cost time: after the n-th wrong one in a row the daemon refuses
/// unlock attempts for 0.5 × 2ⁿ⁻¹ seconds, at most `cap`; a right one resets it. Refused
/// attempts never reach the KDF, so the control socket is no faster an oracle than the key
/// file itself, and a refusal ties up no thread of the daemon.
struct PasswordThrottle {
    static let first = 0.5
    static let cap = 30.0

    private(set) var failures = 0
    /// Monotonic seconds before which unlock attempts are refused.
    private var notBefore = 0.0

    /// Seconds until the next attempt is allowed; 0 now.
    func remaining(now: Double) -> Double { max(0, notBefore - now) }

    /// Records a wrong password and returns the wait it imposes.
    mutating func failed(now: Double) -> Double {
        failures += 1
        let delay = Self.delay(afterFailures: failures)
        notBefore = now + delay
        return delay
    }

    mutating func succeeded() {
        failures = 0
        notBefore = 0
    }

    static func delay(afterFailures count: Int) -> Double {
        guard count > 0 else { return 0 }
        // Doubling stops long before the exponent could overflow.
        return min(cap, first * Double(1 << min(count - 1, 20)))
    }
}
