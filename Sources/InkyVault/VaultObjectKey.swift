import Synchronization

/// The key of one vault object as a request carries it: what lock takes back. A request can be
/// in flight when the vault locks (a listing, a page being decoded), and whatever it holds then
/// would keep the key's bytes alive past the lock. It holds this instead: `revoke()` drops the
/// key here, so it is wiped as soon as the one step using it right now (a send to a worker,
/// a reader opened with it) lets go, and every later step finds none.
public final class VaultObjectKey: Sendable {
    private let key: Mutex<SecureBytes?>

    public init(_ key: SecureBytes) {
        self.key = Mutex(key)
    }

    /// The key for one step, nil once revoked. Hold it no longer than that step: whoever keeps
    /// it keeps its bytes alive after a lock.
    public var current: SecureBytes? { key.withLock { $0 } }

    public var isRevoked: Bool { key.withLock { $0 == nil } }

    /// Drops the key (at lock): wiped now unless a step holds it, then when that step ends.
    public func revoke() {
        let dropped = key.withLock { key in
            defer { key = nil }
            return key
        }
        _ = dropped  // released here, outside the lock
    }
}

extension VaultObjectKey: CustomStringConvertible {
    public var description: String { isRevoked ? "VaultObjectKey(revoked)" : "VaultObjectKey" }
}
