internal import CCrypto

/// HKDF-SHA256 (RFC 5869, extract then expand) through OpenSSL's `EVP_KDF` "HKDF".
///
/// The vault uses it to turn one random master key into independent keys for independent
/// jobs (manifest, content, each object), so a key used for one purpose is never reused
/// for another, and the daemon can hand a worker a key that opens exactly one object.
public enum HKDFSHA256 {
    /// Derives `length` bytes from `inputKey` into locked memory. `info` names the purpose;
    /// different `info` values give unrelated keys. An empty `salt` is the RFC's default.
    public static func deriveKey(
        inputKey: SecureBytes, salt: [UInt8] = [], info: [UInt8], length: Int = AESGCM.keyLength
    ) throws(CryptoError) -> SecureBytes {
        guard length > 0, length <= 255 * 32 else {
            throw .invalidKDFParameters("HKDF-SHA256 output must be 1...8160 bytes")
        }
        let context = try KDFContext(algorithm: "HKDF")
        return try inputKey.withUnsafeBytes { (inputKey) throws(CryptoError) in
            try salt.withBytes { (salt) throws(CryptoError) in
                try info.withBytes { (info) throws(CryptoError) in
                    try SecureBytes(count: length) { (output) throws(CryptoError) in
                        OpenSSLErrorQueue.clear()
                        try checkOpenSSL(
                            inky_hkdf_sha256_derive(context.handle, inputKey.bytes, inputKey.count,
                                                    salt.bytes, salt.count, info.bytes, info.count,
                                                    output.bytes, output.count),
                            "EVP_KDF_derive(HKDF)")
                    }
                }
            }
        }
    }
}

/// Sole owner of one `EVP_KDF_CTX`; freeing it also wipes the key material OpenSSL copied in.
final class KDFContext {
    let handle: OpaquePointer

    init(algorithm: String) throws(CryptoError) {
        OpenSSLErrorQueue.clear()
        guard let kdf = EVP_KDF_fetch(nil, algorithm, nil) else {
            throw OpenSSLErrorQueue.error("EVP_KDF_fetch(\(algorithm))")
        }
        // The context holds its own reference to the algorithm, so ours can go now.
        defer { EVP_KDF_free(kdf) }
        guard let handle = EVP_KDF_CTX_new(kdf) else {
            throw OpenSSLErrorQueue.error("EVP_KDF_CTX_new")
        }
        self.handle = handle
    }

    deinit { EVP_KDF_CTX_free(handle) }
}
