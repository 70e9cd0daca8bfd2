import Foundation

/// The vault's only inputs besides files and passwords: randomness and the clock.
/// Production uses `.system`; the known-answer fixture substitutes both so that its
/// output is reproducible (see `RandomSource.deterministic`).
struct VaultEnvironment: Sendable {
    var randomness: RandomSource
    var now: @Sendable () -> Date
    /// Where the newest manifest seen of each vault is recorded (the rollback check).
    var rollbackRecords = VaultRollbackRecords(directory: nil)

    static var system: VaultEnvironment {
        VaultEnvironment(randomness: .system, now: { Date() }, rollbackRecords: .standard)
    }
}
