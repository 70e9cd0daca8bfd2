internal import CCrypto

/// AES-256-GCM decryption of many messages under one key, with one `EVP_CIPHER_CTX` for all
/// of them: the cipher is fetched and the key schedule expanded once, and each message only
/// loads its nonce. `AESGCM.open` builds and frees a context per call, which a reader that
/// opens every 64 KiB chunk of a comic paid thousands of times per page.
///
/// Same contract as `AESGCM.open`: the output is wiped when the tag does not verify. A
/// failed message leaves nothing behind for the next one, because loading a nonce restarts
/// GCM's state. Not thread-safe: one opener per reader.
final class AESGCMOpener {
    private let context: CipherContext

    init(key: SecureBytes) throws(CryptoError) {
        guard key.count == AESGCM.keyLength else { throw .invalidKeyLength }
        OpenSSLErrorQueue.clear()
        context = try CipherContext()
        try checkOpenSSL(EVP_DecryptInit_ex(context.handle, EVP_aes_256_gcm(), nil, nil, nil), "EVP_DecryptInit_ex")
        try checkOpenSSL(EVP_CIPHER_CTX_ctrl(context.handle, inky_evp_ctrl_gcm_set_ivlen(),
                                             Int32(AESGCM.nonceLength), nil),
                         "EVP_CIPHER_CTX_ctrl(SET_IVLEN)")
        try key.withUnsafeBytes { (key) throws(CryptoError) in
            try checkOpenSSL(EVP_DecryptInit_ex(context.handle, nil, nil, key.bytes, nil), "EVP_DecryptInit_ex")
        }
    }

    /// Decrypts into `plaintext` (same length as `ciphertext`) and verifies the tag; throws
    /// `.authenticationFailed` with `plaintext` wiped when it does not.
    func open(
        ciphertext: UnsafeRawBufferPointer,
        tag: UnsafeRawBufferPointer,
        into plaintext: UnsafeMutableRawBufferPointer,
        nonce: UnsafeRawBufferPointer,
        aad: UnsafeRawBufferPointer
    ) throws(CryptoError) {
        guard plaintext.count == ciphertext.count else { throw .invalidOutputLength }
        guard tag.count == AESGCM.tagLength else { throw .invalidTagLength }
        guard nonce.count == AESGCM.nonceLength else { throw .invalidNonceLength }
        OpenSSLErrorQueue.clear()
        do throws(CryptoError) {
            // A nil key keeps the expanded one; the nonce resets the GCM state.
            try checkOpenSSL(EVP_DecryptInit_ex(context.handle, nil, nil, nil, nonce.bytes), "EVP_DecryptInit_ex")
            try AESGCM.decrypt(ciphertext, tag: tag, into: plaintext, aad: aad, with: context)
        } catch {
            if let base = plaintext.baseAddress { OPENSSL_cleanse(base, plaintext.count) }
            throw error
        }
    }
}
