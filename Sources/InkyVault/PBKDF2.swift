internal import CCrypto

/// PBKDF2-HMAC-SHA256 (RFC 8018) through OpenSSL's `PKCS5_PBKDF2_HMAC`.
///
/// The vault's default password KDF: not memory-hard like scrypt, but it is what the
/// issue specifies, it is available everywhere (Python's standard library has it), and
/// its one cost knob is stored in the key file so it can be raised later.
public enum PBKDF2SHA256 {
    /// Derives `length` bytes straight into locked memory. `iterations` must be at least 1
    /// and fit OpenSSL's `int`; the vault applies its own, much tighter, bounds before this.
    public static func deriveKey(
        password: SecureBytes, salt: [UInt8], iterations: UInt32, length: Int = AESGCM.keyLength
    ) throws(CryptoError) -> SecureBytes {
        guard iterations >= 1, iterations <= UInt32(Int32.max) else {
            throw .invalidKDFParameters("PBKDF2 iterations must be between 1 and \(Int32.max)")
        }
        guard length > 0, length <= Int(Int32.max) else {
            throw .invalidKDFParameters("output length must be positive")
        }
        guard password.count <= Int(Int32.max), salt.count <= Int(Int32.max) else {
            throw .invalidKDFParameters("password or salt too long")
        }
        return try password.withUnsafeBytes { (password) throws(CryptoError) in
            try salt.withBytes { (salt) throws(CryptoError) in
                try SecureBytes(count: length) { (key) throws(CryptoError) in
                    OpenSSLErrorQueue.clear()
                    // A nil password pointer with length 0 is how OpenSSL spells the empty password.
                    let passwordChars = password.baseAddress?.assumingMemoryBound(to: CChar.self)
                    try checkOpenSSL(
                        PKCS5_PBKDF2_HMAC(passwordChars, Int32(password.count),
                                          salt.bytes, Int32(salt.count), Int32(iterations),
                                          EVP_sha256(), Int32(key.count), key.bytes),
                        "PKCS5_PBKDF2_HMAC")
                }
            }
        }
    }
}
