import Foundation
import InkyStore
import InkyVault
import Synchronization

/// Checks a request's account: HTTP Basic (a password) or KOReader's `x-auth-user` and
/// `x-auth-key` (md5hex of the password); both come down to a sync key checked against the
/// account's slow hash (`AccountKey`), under the throttle (`LoginThrottle`).
///
/// The slow hash costs about 0.13 s, and an OPDS reader sends its Basic header with every page
/// it fetches: a key that passed is remembered, as a SHA-256 of a random per-process secret and
/// the key, beside the stored hash it passed against, so the next request costs one SHA-256.
/// The account is read from the database every time: one removed (or added again with another
/// password) is refused at once.
public final class Authenticator: Sendable {
    public enum Outcome: Sendable, Equatable {
        case granted(account: String)
        case denied
        /// Too many failures: refused without checking, for this many seconds more.
        case throttled(retryAfter: Int)
    }

    public let state: StateDatabase
    public let throttle: LoginThrottle
    private let secret: [UInt8]
    private let passed = Mutex<[String: (stored: [UInt8], tag: [UInt8])]>([:])
    private let gates = Mutex<[String: Gate]>([:])

    public init(state: StateDatabase, throttle: LoginThrottle = LoginThrottle()) {
        self.state = state
        self.throttle = throttle
        secret = (try? RandomBytes.bytes(count: 32)) ?? []
    }

    /// Whether any account exists (with none, loopback serves without login).
    public var hasAccounts: Bool { (try? state.hasAccounts()) ?? true }

    /// Checks `syncKey` (md5hex of the password, as bytes) for `account`, from `address`.
    public func check(account: String, syncKey: [UInt8], from address: String) -> Outcome {
        let keys: [LoginThrottle.Key] = [.address(address), .account(account)]
        let wait = throttle.wait(keys)
        if wait > 0 { return .throttled(retryAfter: Int(wait.rounded(.up))) }
        guard AccountNames.problem(with: account) == nil, !syncKey.isEmpty,
              let stored = try? state.account(account), stored.kdf == AccountNames.kdf,
              let iterations = UInt32(exactly: stored.iterations) else {
            // As slow as a wrong password: the time taken tells no one which accounts exist.
            _ = Self.decoy.matches(syncKey: syncKey)
            throttle.failed(keys)
            return .denied
        }
        let tag = (try? SHA256Hasher.hash(secret + syncKey)) ?? []
        if isRemembered(account, stored.hash, tag) { return .granted(account: account) }
        // One slow check at a time per account: a reader that opens with eight requests at once
        // costs one derivation, the other seven find the key remembered.
        return gate(account).withLock {
            if isRemembered(account, stored.hash, tag) { return .granted(account: account) }
            let key = AccountKey(iterations: iterations, salt: stored.salt, hash: stored.hash)
            guard key.matches(syncKey: syncKey) else {
                throttle.failed(keys)
                return .denied
            }
            throttle.succeeded(keys)
            passed.withLock { $0[account] = (raised(key, of: stored, syncKey: syncKey) ?? stored.hash, tag) }
            return .granted(account: account)
        }
    }

    private func isRemembered(_ account: String, _ stored: [UInt8], _ tag: [UInt8]) -> Bool {
        guard let remembered = passed.withLock({ $0[account] }) else { return false }
        return remembered.stored == stored && Self.equal(remembered.tag, tag)
    }

    /// The lock the slow check of `account` is made under (one per account that ever logged in).
    private func gate(_ account: String) -> Gate {
        gates.withLock { gates in
            if let gate = gates[account] { return gate }
            let gate = Gate()
            gates[account] = gate
            return gate
        }
    }

    final class Gate: Sendable {
        private let mutex = Mutex(())
        func withLock(_ body: () -> Outcome) -> Outcome { mutex.withLock { _ in body() } }
    }

    /// Checked in place of an account that does not exist; matches nothing.
    private static let decoy = AccountKey(iterations: AccountKey.defaultIterations, salt: Array(repeating: 0, count: AccountKey.saltLength),
                                          hash: Array(repeating: 0, count: AccountKey.hashLength))

    /// An account hashed with fewer iterations than today's default is hashed again with it at its
    /// first login since (only then is the key at hand); returns the new hash when it was stored.
    private func raised(_ key: AccountKey, of stored: StoredAccount, syncKey: [UInt8]) -> [UInt8]? {
        guard key.isBelowDefault, let made = try? AccountKey.make(syncKey: syncKey) else { return nil }
        var raised = stored
        (raised.iterations, raised.salt, raised.hash) = (Int(made.iterations), made.salt, made.hash)
        return (try? state.replaceAccountKey(raised, previous: stored.hash)) == true ? made.hash : nil
    }

    /// An `Authorization: Basic …` header's account, checked (its password MD5'd first).
    public func check(basic header: String, from address: String) -> Outcome {
        guard let (account, password) = Self.basicCredentials(header), let key = try? AccountKey.syncKey(password: Array(password.utf8)) else {
            throttle.failed([.address(address)])
            return .denied
        }
        return check(account: account, syncKey: key, from: address)
    }

    /// KOReader's headers, checked: `x-auth-key` is already md5hex(password).
    public func check(user: String?, key: String?, from address: String) -> Outcome {
        guard let user, let key else {
            throttle.failed([.address(address)])
            return .denied
        }
        return check(account: user, syncKey: Array(key.utf8), from: address)
    }

    /// The user and password of `Basic base64(user:password)`; nil when malformed.
    static func basicCredentials(_ header: String) -> (String, String)? {
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "basic",
              let data = Data(base64Encoded: String(parts[1]).trimmingCharacters(in: .whitespaces)),
              let text = String(data: data, encoding: .utf8), let colon = text.firstIndex(of: ":") else { return nil }
        return (String(text[..<colon]), String(text[text.index(after: colon)...]))
    }

    /// Constant time in the length of `a`.
    private static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        return zip(a, b).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
