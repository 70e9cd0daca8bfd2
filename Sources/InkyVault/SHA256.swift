internal import CCrypto

/// Streaming SHA-256 (`EVP_Digest*`). The vault records each comic's plaintext hash in
/// the manifest and checks it after every write and before every extraction, so a bug
/// anywhere between the source file and the disk cannot go unnoticed. Public for the same use
/// outside the vault: `inkyfs duplicates` hashes pages and checks the copies it moves.
public final class SHA256Hasher {
    public static let digestLength = 32
    private let digest: EVPDigest

    public init() throws(CryptoError) { digest = try EVPDigest(EVP_sha256(), length: Self.digestLength) }

    public func update(_ bytes: UnsafeRawBufferPointer) throws(CryptoError) { try digest.update(bytes) }

    public func update(_ bytes: [UInt8]) throws(CryptoError) {
        try bytes.withBytes { (bytes) throws(CryptoError) in try update(bytes) }
    }

    /// The 32-byte digest. The hasher must not be used afterwards.
    public func finish() throws(CryptoError) -> [UInt8] { try digest.finish() }

    public static func hash(_ bytes: [UInt8]) throws(CryptoError) -> [UInt8] {
        let hasher = try SHA256Hasher()
        try hasher.update(bytes)
        return try hasher.finish()
    }
}

/// MD5, for what others named with it and inkyfs must match byte for byte: KOReader's sync
/// protocol sends md5(password) as its key and names a document by a partial MD5 of its file.
/// Never a protection of inkyfs's own: those use SHA-256 and a slow KDF.
public enum MD5 {
    public static let digestLength = 16

    /// The MD5 of the concatenation of `parts`.
    public static func hash(_ parts: [[UInt8]]) throws(CryptoError) -> [UInt8] {
        let digest = try EVPDigest(EVP_md5(), length: digestLength)
        for part in parts {
            try part.withBytes { (bytes) throws(CryptoError) in try digest.update(bytes) }
        }
        return try digest.finish()
    }

    /// Lowercase hex, as KOReader's `md5()` returns it.
    public static func hex(_ parts: [[UInt8]]) throws(CryptoError) -> String {
        HexEncoding.encode(try hash(parts))
    }
}

/// One `EVP_MD_CTX` for one digest: every hash inkyfs computes goes through here.
final class EVPDigest {
    private let context: OpaquePointer
    private let length: Int

    init(_ algorithm: OpaquePointer?, length: Int) throws(CryptoError) {
        OpenSSLErrorQueue.clear()
        guard let context = EVP_MD_CTX_new() else { throw OpenSSLErrorQueue.error("EVP_MD_CTX_new") }
        self.context = context
        self.length = length
        guard EVP_DigestInit_ex(context, algorithm, nil) == 1 else {
            EVP_MD_CTX_free(context)
            throw OpenSSLErrorQueue.error("EVP_DigestInit_ex")
        }
    }

    deinit { EVP_MD_CTX_free(context) }

    func update(_ bytes: UnsafeRawBufferPointer) throws(CryptoError) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        try checkOpenSSL(EVP_DigestUpdate(context, base, bytes.count), "EVP_DigestUpdate")
    }

    func finish() throws(CryptoError) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: length)
        var written: UInt32 = 0
        try digest.withMutableBytes { (digest) throws(CryptoError) in
            try checkOpenSSL(EVP_DigestFinal_ex(context, digest.bytes, &written), "EVP_DigestFinal_ex")
        }
        guard Int(written) == length else {
            throw .openssl(function: "EVP_DigestFinal_ex", detail: "digest of \(written) bytes")
        }
        return digest
    }
}
