internal import CCrypto

/// Streaming SHA-256 (`EVP_Digest*`). The vault records each comic's plaintext hash in
/// the manifest and checks it after every write and before every extraction, so a bug
/// anywhere between the source file and the disk cannot go unnoticed. Public for the same use
/// outside the vault: `inkyfs duplicates` hashes pages and checks the copies it moves.
public final class SHA256Hasher {
    public static let digestLength = 32
    private let context: OpaquePointer

    public init() throws(CryptoError) {
        OpenSSLErrorQueue.clear()
        guard let context = EVP_MD_CTX_new() else { throw OpenSSLErrorQueue.error("EVP_MD_CTX_new") }
        self.context = context
        guard EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1 else {
            EVP_MD_CTX_free(context)
            throw OpenSSLErrorQueue.error("EVP_DigestInit_ex")
        }
    }

    deinit { EVP_MD_CTX_free(context) }

    public func update(_ bytes: UnsafeRawBufferPointer) throws(CryptoError) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        try checkOpenSSL(EVP_DigestUpdate(context, base, bytes.count), "EVP_DigestUpdate")
    }

    public func update(_ bytes: [UInt8]) throws(CryptoError) {
        try bytes.withBytes { (bytes) throws(CryptoError) in try update(bytes) }
    }

    /// The 32-byte digest. The hasher must not be used afterwards.
    public func finish() throws(CryptoError) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Self.digestLength)
        var length: UInt32 = 0
        try digest.withMutableBytes { (digest) throws(CryptoError) in
            try checkOpenSSL(EVP_DigestFinal_ex(context, digest.bytes, &length), "EVP_DigestFinal_ex")
        }
        guard Int(length) == Self.digestLength else {
            throw .openssl(function: "EVP_DigestFinal_ex", detail: "digest of \(length) bytes")
        }
        return digest
    }

    public static func hash(_ bytes: [UInt8]) throws(CryptoError) -> [UInt8] {
        let hasher = try SHA256Hasher()
        try hasher.update(bytes)
        return try hasher.finish()
    }
}
