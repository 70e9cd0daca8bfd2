/// Every way a cryptographic primitive in this module can fail. Callers decide from the
/// case alone; `.openssl` keeps OpenSSL's own words for the log, since its failures
/// (out of memory, a provider missing) are not something a caller can repair.
public enum CryptoError: Error, Equatable, Sendable {
    /// Wrong key, or ciphertext, tag, nonce or associated data changed since sealing.
    /// GCM cannot tell these apart, and neither should we: both mean "do not trust this".
    case authenticationFailed
    /// An AES-256 key must be exactly 32 bytes.
    case invalidKeyLength
    /// A GCM nonce must be exactly 12 bytes here (the only length GCM handles natively).
    case invalidNonceLength
    /// A GCM tag must be exactly 16 bytes here; shorter tags weaken authentication.
    case invalidTagLength
    /// An output buffer does not have the exact size the operation produces.
    case invalidOutputLength
    /// KDF parameters refused: scrypt's that OpenSSL refuses (N not a power of two, memory above
    /// maxMemory, ...), PBKDF2's iteration count, HKDF's output length. The detail names the KDF.
    case invalidKDFParameters(String)
    /// The CSPRNG could not produce bytes (not seeded, or the entropy source failed).
    case randomUnavailable
    /// Any other OpenSSL failure: the function that failed and OpenSSL's error queue text.
    case openssl(function: String, detail: String)
}

extension CryptoError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .authenticationFailed: "authentication failed (wrong key or tampered data)"
        case .invalidKeyLength: "invalid key length (AES-256 needs 32 bytes)"
        case .invalidNonceLength: "invalid nonce length (AES-GCM needs 12 bytes)"
        case .invalidTagLength: "invalid tag length (AES-GCM needs 16 bytes)"
        case .invalidOutputLength: "output buffer has the wrong length"
        case .invalidKDFParameters(let detail): "invalid KDF parameters: \(detail)"
        case .randomUnavailable: "the random number generator is unavailable"
        case .openssl(let function, let detail): "\(function) failed: \(detail)"
        }
    }
}
