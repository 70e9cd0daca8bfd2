/// What an account of `inkyfs serve` is checked against: a slow hash, never the password.
///
/// KOReader's sync plugin never sends the password: it sends md5(password) in lowercase hex,
/// as `x-auth-key` on every request and as `password` when it registers. A browser or an OPDS
/// reader sends the password itself (HTTP Basic). So the one secret both can be checked
/// against is the sync key, md5hex(password), and what is stored is PBKDF2-HMAC-SHA256 of that
/// key under a per-account salt: a Basic login hashes the password it is given with MD5 first.
/// The MD5 step takes nothing from the slow hash (a guess costs one MD5 more), and neither the
/// password nor the sync key (which, to the sync protocol, is as good as the password) is kept.
/// The iteration count is stored with each account, so raising the default later leaves
/// existing accounts working (and `verify` tells when one is below it).
public struct AccountKey: Sendable, Equatable {
    public static let saltLength = 16
    public static let hashLength = 32
    /// As the vault's: OWASP's 2023 figure for PBKDF2-SHA256, about 0.13 s on the project's
    /// 2-core machine. A server checks it once per client and keeps the answer (InkySync).
    public static let defaultIterations: UInt32 = 600_000
    /// Bounds applied to what is read back from the database as well as to what is written.
    static let iterationBounds: ClosedRange<UInt32> = 1_000...100_000_000

    public let iterations: UInt32
    public let salt: [UInt8]
    public let hash: [UInt8]

    public init(iterations: UInt32, salt: [UInt8], hash: [UInt8]) {
        self.iterations = iterations
        self.salt = salt
        self.hash = hash
    }

    /// The sync key of a password: md5 of its bytes, lowercase hex, as KOReader computes it.
    public static func syncKey(password: [UInt8]) throws(CryptoError) -> [UInt8] {
        Array(try MD5.hex([password]).utf8)
    }

    /// A new account's stored form for `syncKey`, under a fresh random salt.
    public static func make(syncKey: [UInt8], iterations: UInt32 = defaultIterations) throws(CryptoError) -> AccountKey {
        let salt = try RandomBytes.bytes(count: saltLength)
        let derived = try derive(syncKey, salt: salt, iterations: iterations)
        return AccountKey(iterations: iterations, salt: salt, hash: derived.withUnsafeBytes { Array($0) })
    }

    /// Whether `syncKey` is this account's, compared in constant time. A stored form that is
    /// malformed (wrong lengths, iterations out of bounds) matches nothing.
    public func matches(syncKey: [UInt8]) -> Bool {
        guard salt.count == Self.saltLength, hash.count == Self.hashLength,
              let derived = try? Self.derive(syncKey, salt: salt, iterations: iterations) else { return false }
        let stored = SecureBytes(copying: hash)
        return derived.constantTimeEquals(stored)
    }

    /// Whether this was made with fewer iterations than today's default.
    public var isBelowDefault: Bool { iterations < Self.defaultIterations }

    private static func derive(_ syncKey: [UInt8], salt: [UInt8], iterations: UInt32) throws(CryptoError) -> SecureBytes {
        guard iterationBounds.contains(iterations) else {
            throw .invalidKDFParameters("PBKDF2 iterations \(iterations) outside \(iterationBounds)")
        }
        let key = SecureBytes(copying: syncKey)
        return try PBKDF2SHA256.deriveKey(password: key, salt: salt, iterations: iterations, length: hashLength)
    }
}
