import Synchronization

/// The password-based key derivation that protects the master key, with its cost.
///
/// Stored in the key file by id and parameters, never assumed: a vault created today must
/// still open after the default is raised, and a future KDF (Argon2id, id 3, once the
/// OpenSSL we link ships it) can be added without a format change.
public enum VaultKDF: Sendable, Equatable, CustomStringConvertible {
    /// PBKDF2-HMAC-SHA256 with this many iterations.
    case pbkdf2SHA256(iterations: UInt32)
    /// scrypt with cost N (a power of two), block size r and parallelism p.
    case scrypt(n: UInt64, r: UInt32, p: UInt32)

    /// What the issue specifies: PBKDF2-HMAC-SHA256, 600,000 iterations (OWASP's 2023
    /// figure for PBKDF2-SHA256). Measured: about 0.13 s per unlock on the project machine.
    public static let `default` = VaultKDF.pbkdf2SHA256(iterations: 600_000)

    /// A 32-byte random salt per key file: as long as the hash output, so no two key files
    /// (nor two password changes) ever share a derivation.
    public static let saltLength = 32

    public var description: String {
        switch self {
        case .pbkdf2SHA256(let iterations): "PBKDF2-HMAC-SHA256, \(iterations) iterations"
        case .scrypt(let n, let r, let p): "scrypt N=\(n) r=\(r) p=\(p)"
        }
    }

    // MARK: Bounds

    /// Caps that apply to parameters READ from disk as well as those we write: the key file
    /// is not authenticated until after the derivation, so a hostile or damaged one must not
    /// be able to make an unlock run for hours or allocate gigabytes. Worst cases on the
    /// project's 2-core machine (600,000 iterations take ~0.13 s): PBKDF2 at the cap ~25 s,
    /// scrypt at the caps 1 GiB of memory and ~25 s.
    static let pbkdf2Iterations: ClosedRange<UInt32> = 1_000...100_000_000
    static let scryptN: ClosedRange<UInt64> = 1 << 10...1 << 22
    static let scryptR: ClosedRange<UInt32> = 1...32
    static let scryptP: ClosedRange<UInt32> = 1...16
    /// 128·r·N, the memory scrypt's big array takes.
    static let scryptMaximumMemory: UInt64 = 1 << 30
    /// N·r·p, proportional to scrypt's running time (the default 2^15·8·1 is 2^18).
    static let scryptMaximumWork: UInt64 = 1 << 26

    /// Nil when acceptable, else why not.
    var outOfBoundsReason: String? {
        switch self {
        case .pbkdf2SHA256(let iterations):
            guard Self.pbkdf2Iterations.contains(iterations) else {
                return "PBKDF2 iterations \(iterations) outside \(Self.pbkdf2Iterations)"
            }
        case .scrypt(let n, let r, let p):
            guard Self.scryptN.contains(n), n & (n - 1) == 0 else {
                return "scrypt N=\(n) is not a power of two in \(Self.scryptN)"
            }
            guard Self.scryptR.contains(r), Self.scryptP.contains(p) else {
                return "scrypt r=\(r) p=\(p) outside r \(Self.scryptR), p \(Self.scryptP)"
            }
            // Each factor is bounded above, so these products cannot overflow.
            guard 128 * UInt64(r) * n <= Self.scryptMaximumMemory else {
                return "scrypt N=\(n) r=\(r) needs more than \(Self.scryptMaximumMemory >> 20) MiB"
            }
            guard n * UInt64(r) * UInt64(p) <= Self.scryptMaximumWork else {
                return "scrypt N·r·p=\(n * UInt64(r) * UInt64(p)) exceeds \(Self.scryptMaximumWork)"
            }
        }
        return nil
    }

    /// The KDF a password change re-derives with when none is asked for: today's default,
    /// unless this one already costs more (a PBKDF2 with more iterations, an scrypt of at
    /// least 2^15·8 work). A vault made years ago never carries its weaker cost forward.
    var raisedToDefault: VaultKDF {
        switch (self, Self.default) {
        case (.pbkdf2SHA256(let iterations), .pbkdf2SHA256(let floor)):
            return iterations >= floor ? self : .default
        case (.scrypt(let n, let r, let p), _):
            return n * UInt64(r) * UInt64(p) >= 1 << 18 ? self : .default
        default:
            return .default
        }
    }

    // MARK: Wire form

    /// The KDF id and three UInt64 parameter fields of the key file. Three fields cover
    /// PBKDF2 (iterations), scrypt (N, r, p) and Argon2id (t, m, p); unused ones must be 0,
    /// so every KDF setting has exactly one encoding.
    enum Identifier: UInt16 {
        case pbkdf2SHA256 = 1
        case scrypt = 2
        /// Reserved, not implemented: OpenSSL 3.0 has no Argon2.
        case argon2id = 3
    }

    var wireFields: (id: UInt16, parameters: (UInt64, UInt64, UInt64)) {
        switch self {
        case .pbkdf2SHA256(let iterations):
            (Identifier.pbkdf2SHA256.rawValue, (UInt64(iterations), 0, 0))
        case .scrypt(let n, let r, let p):
            (Identifier.scrypt.rawValue, (n, UInt64(r), UInt64(p)))
        }
    }

    /// Decodes the wire form and applies the bounds; the error string says what is wrong.
    static func decode(id: UInt16, parameters: (UInt64, UInt64, UInt64)) -> Result<VaultKDF, KDFDecodingFailure> {
        let kdf: VaultKDF
        switch Identifier(rawValue: id) {
        case .pbkdf2SHA256:
            guard parameters.1 == 0, parameters.2 == 0, parameters.0 <= UInt64(UInt32.max) else {
                return .failure(KDFDecodingFailure("PBKDF2 parameters \(parameters) are malformed"))
            }
            kdf = .pbkdf2SHA256(iterations: UInt32(parameters.0))
        case .scrypt:
            guard parameters.1 <= UInt64(UInt32.max), parameters.2 <= UInt64(UInt32.max) else {
                return .failure(KDFDecodingFailure("scrypt parameters \(parameters) are malformed"))
            }
            kdf = .scrypt(n: parameters.0, r: UInt32(parameters.1), p: UInt32(parameters.2))
        case .argon2id:
            return .failure(KDFDecodingFailure("Argon2id (KDF id 3) is not supported by this build"))
        case nil:
            return .failure(KDFDecodingFailure("unknown KDF id \(id)"))
        }
        if let reason = kdf.outOfBoundsReason { return .failure(KDFDecodingFailure(reason)) }
        return .success(kdf)
    }

    struct KDFDecodingFailure: Error {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }

    // MARK: Derivation

    /// Counts every password derivation this process starts. Tests use it to prove that a
    /// wrong password costs exactly one derivation (no retry against `.prev`, no second
    /// KDF); it is a plain counter with no effect on behaviour.
    static let derivationCount = Atomic<Int>(0)

    /// The 32-byte key-wrapping key for `password` and `salt`, in locked memory.
    func deriveKey(password: SecureBytes, salt: [UInt8]) throws(VaultError) -> SecureBytes {
        if let reason = outOfBoundsReason { throw .invalidKDFParameters(reason) }
        Self.derivationCount.add(1, ordering: .relaxed)
        do {
            switch self {
            case .pbkdf2SHA256(let iterations):
                return try PBKDF2SHA256.deriveKey(password: password, salt: salt, iterations: iterations)
            case .scrypt(let n, let r, let p):
                // OpenSSL needs 128·r·(N+2) + 128·r·p bytes; the bounds above keep this ≤ ~1 GiB.
                let memory = 128 * UInt64(r) * (n + 2) + 128 * UInt64(r) * UInt64(p) + (1 << 20)
                let parameters = ScryptParameters(n: n, r: UInt64(r), p: UInt64(p), maxMemory: memory)
                return try PasswordKDF.deriveKey(password: password, salt: salt, parameters: parameters)
            }
        } catch {
            throw .crypto(error)
        }
    }
}
