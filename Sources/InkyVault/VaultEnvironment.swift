import Foundation

/// The vault's only inputs besides files and passwords: randomness and the clock.
/// Production uses `.system`; the known-answer fixture substitutes both so that its
/// output is reproducible (see `RandomSource.deterministic`).
struct VaultEnvironment: Sendable {
    var randomness: RandomSource
    var now: @Sendable () -> Date

    static let system = VaultEnvironment(randomness: .system, now: { Date() })
}
