internal import CCrypto

/// AES-256-GCM, one message at a time: a 32-byte key, a 12-byte nonce that must never
/// repeat under the same key, a 16-byte tag, and optional associated data that is
/// authenticated but not encrypted (e.g. a chunk's index, so chunks cannot be reordered).
///
/// The buffer-pointer variants exist so a future per-chunk vault stream can seal in place
/// (input and output may be the same buffer, but must not partially overlap) without
/// allocating per chunk; the array variants are conveniences over them.
public enum AESGCM {
    public static let keyLength = 32
    public static let nonceLength = 12
    public static let tagLength = 16

    public static func seal(
        plaintext: [UInt8], key: SecureBytes, nonce: [UInt8], aad: [UInt8] = []
    ) throws(CryptoError) -> (ciphertext: [UInt8], tag: [UInt8]) {
        var ciphertext = [UInt8](repeating: 0, count: plaintext.count)
        var tag = [UInt8](repeating: 0, count: tagLength)
        try plaintext.withBytes { (plaintext) throws(CryptoError) in
            try nonce.withBytes { (nonce) throws(CryptoError) in
                try aad.withBytes { (aad) throws(CryptoError) in
                    try ciphertext.withMutableBytes { (ciphertext) throws(CryptoError) in
                        try tag.withMutableBytes { (tag) throws(CryptoError) in
                            try seal(plaintext: plaintext, into: ciphertext, tag: tag,
                                     key: key, nonce: nonce, aad: aad)
                        }
                    }
                }
            }
        }
        return (ciphertext, tag)
    }

    /// Returns the plaintext only if the tag verifies; otherwise throws
    /// `.authenticationFailed` and no byte of unauthenticated plaintext escapes.
    public static func open(
        ciphertext: [UInt8], tag: [UInt8], key: SecureBytes, nonce: [UInt8], aad: [UInt8] = []
    ) throws(CryptoError) -> [UInt8] {
        var plaintext = [UInt8](repeating: 0, count: ciphertext.count)
        try ciphertext.withBytes { (ciphertext) throws(CryptoError) in
            try tag.withBytes { (tag) throws(CryptoError) in
                try nonce.withBytes { (nonce) throws(CryptoError) in
                    try aad.withBytes { (aad) throws(CryptoError) in
                        try plaintext.withMutableBytes { (plaintext) throws(CryptoError) in
                            try open(ciphertext: ciphertext, tag: tag, into: plaintext,
                                     key: key, nonce: nonce, aad: aad)
                        }
                    }
                }
            }
        }
        return plaintext
    }

    /// Encrypts `plaintext` into `ciphertext` (same length) and writes the 16-byte `tag`.
    public static func seal(
        plaintext: UnsafeRawBufferPointer,
        into ciphertext: UnsafeMutableRawBufferPointer,
        tag: UnsafeMutableRawBufferPointer,
        key: SecureBytes,
        nonce: UnsafeRawBufferPointer,
        aad: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0)
    ) throws(CryptoError) {
        guard ciphertext.count == plaintext.count else { throw .invalidOutputLength }
        guard tag.count == tagLength else { throw .invalidTagLength }
        OpenSSLErrorQueue.clear()
        let context = try start(encrypting: true, key: key, nonce: nonce)
        try feedAAD(aad, to: context, encrypting: true)
        try transform(plaintext, into: ciphertext, with: context, encrypting: true)
        var scratch = [UInt8](repeating: 0, count: 16)
        var written: Int32 = 0
        try checkOpenSSL(EVP_EncryptFinal_ex(context.handle, &scratch, &written), "EVP_EncryptFinal_ex")
        try checkOpenSSL(EVP_CIPHER_CTX_ctrl(context.handle, inky_evp_ctrl_gcm_get_tag(),
                                             Int32(tagLength), tag.baseAddress),
                         "EVP_CIPHER_CTX_ctrl(GET_TAG)")
    }

    /// Decrypts into `plaintext` (same length as `ciphertext`) and verifies the tag.
    /// On `.authenticationFailed` the output buffer has been wiped: GCM decrypts before it
    /// can verify, so without this the caller would hold unauthenticated plaintext.
    public static func open(
        ciphertext: UnsafeRawBufferPointer,
        tag: UnsafeRawBufferPointer,
        into plaintext: UnsafeMutableRawBufferPointer,
        key: SecureBytes,
        nonce: UnsafeRawBufferPointer,
        aad: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0)
    ) throws(CryptoError) {
        guard plaintext.count == ciphertext.count else { throw .invalidOutputLength }
        guard tag.count == tagLength else { throw .invalidTagLength }
        OpenSSLErrorQueue.clear()
        do throws(CryptoError) {
            let context = try start(encrypting: false, key: key, nonce: nonce)
            try decrypt(ciphertext, tag: tag, into: plaintext, aad: aad, with: context)
        } catch {
            if let base = plaintext.baseAddress { OPENSSL_cleanse(base, plaintext.count) }
            throw error
        }
    }

    /// The rest of an open once `context` holds the key and nonce: tag, AAD, decryption, and
    /// the tag check. The caller wipes `plaintext` when this throws.
    static func decrypt(
        _ ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer, into plaintext: UnsafeMutableRawBufferPointer,
        aad: UnsafeRawBufferPointer, with context: CipherContext
    ) throws(CryptoError) {
        try checkOpenSSL(EVP_CIPHER_CTX_ctrl(context.handle, inky_evp_ctrl_gcm_set_tag(),
                                             Int32(tagLength), UnsafeMutableRawPointer(mutating: tag.baseAddress)),
                         "EVP_CIPHER_CTX_ctrl(SET_TAG)")
        try feedAAD(aad, to: context, encrypting: false)
        try transform(ciphertext, into: plaintext, with: context, encrypting: false)
        var scratch = [UInt8](repeating: 0, count: 16)
        var written: Int32 = 0
        // Final is where GCM compares tags; failure here means "not authentic", and
        // OpenSSL queues no error for it, so there is nothing more to report.
        guard EVP_DecryptFinal_ex(context.handle, &scratch, &written) > 0 else {
            _ = OpenSSLErrorQueue.drain()
            throw .authenticationFailed
        }
    }

    private static func start(
        encrypting: Bool, key: SecureBytes, nonce: UnsafeRawBufferPointer
    ) throws(CryptoError) -> CipherContext {
        guard key.count == keyLength else { throw .invalidKeyLength }
        guard nonce.count == nonceLength else { throw .invalidNonceLength }
        let context = try CipherContext()
        let initialise = encrypting ? EVP_EncryptInit_ex : EVP_DecryptInit_ex
        let name = encrypting ? "EVP_EncryptInit_ex" : "EVP_DecryptInit_ex"
        // Two steps, as EVP requires: choose the cipher and IV length, then load key and IV.
        try checkOpenSSL(initialise(context.handle, EVP_aes_256_gcm(), nil, nil, nil), name)
        try checkOpenSSL(EVP_CIPHER_CTX_ctrl(context.handle, inky_evp_ctrl_gcm_set_ivlen(),
                                             Int32(nonceLength), nil),
                         "EVP_CIPHER_CTX_ctrl(SET_IVLEN)")
        try key.withUnsafeBytes { (key) throws(CryptoError) in
            try checkOpenSSL(initialise(context.handle, nil, nil, key.bytes, nonce.bytes), name)
        }
        return context
    }

    static func feedAAD(
        _ aad: UnsafeRawBufferPointer, to context: CipherContext, encrypting: Bool
    ) throws(CryptoError) {
        var offset = 0
        while offset < aad.count {
            let slice = min(aad.count - offset, CipherContext.maximumSlice)
            var written: Int32 = 0
            let input = aad.bytes!.advanced(by: offset)
            // A nil output pointer is how EVP is told "this is associated data".
            let result = encrypting
                ? EVP_EncryptUpdate(context.handle, nil, &written, input, Int32(slice))
                : EVP_DecryptUpdate(context.handle, nil, &written, input, Int32(slice))
            try checkOpenSSL(result, encrypting ? "EVP_EncryptUpdate(AAD)" : "EVP_DecryptUpdate(AAD)")
            offset += slice
        }
    }

    static func transform(
        _ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer,
        with context: CipherContext, encrypting: Bool
    ) throws(CryptoError) {
        var offset = 0
        while offset < input.count {
            let slice = min(input.count - offset, CipherContext.maximumSlice)
            var written: Int32 = 0
            let source = input.bytes!.advanced(by: offset)
            let destination = output.bytes!.advanced(by: offset)
            let result = encrypting
                ? EVP_EncryptUpdate(context.handle, destination, &written, source, Int32(slice))
                : EVP_DecryptUpdate(context.handle, destination, &written, source, Int32(slice))
            try checkOpenSSL(result, encrypting ? "EVP_EncryptUpdate" : "EVP_DecryptUpdate")
            // GCM is a stream mode: every input byte yields one output byte immediately.
            guard Int(written) == slice else {
                throw CryptoError.openssl(function: encrypting ? "EVP_EncryptUpdate" : "EVP_DecryptUpdate",
                                          detail: "wrote \(written) of \(slice) bytes")
            }
            offset += slice
        }
    }
}
