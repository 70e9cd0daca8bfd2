internal import CCrypto

/// Sole owner of one `EVP_CIPHER_CTX`. Holding it in a class means the context is freed on
/// every path out of a seal or open, thrown errors included; `EVP_CIPHER_CTX_free` also
/// wipes the expanded key schedule it holds.
final class CipherContext {
    let handle: OpaquePointer

    init() throws(CryptoError) {
        guard let handle = EVP_CIPHER_CTX_new() else {
            throw OpenSSLErrorQueue.error("EVP_CIPHER_CTX_new")
        }
        self.handle = handle
    }

    deinit { EVP_CIPHER_CTX_free(handle) }

    /// EVP's update calls take an `int` length; feeding larger inputs in slices keeps a
    /// multi-gigabyte buffer from being silently truncated.
    static let maximumSlice = 1 << 30
}

/// EVP functions return 1 for success; anything else becomes a typed error naming the call.
func checkOpenSSL(_ result: Int32, _ function: String) throws(CryptoError) {
    guard result == 1 else { throw OpenSSLErrorQueue.error(function) }
}

extension UnsafeRawBufferPointer {
    /// EVP wants `unsigned char *`; nil for an empty buffer, which callers skip.
    var bytes: UnsafePointer<UInt8>? { baseAddress?.assumingMemoryBound(to: UInt8.self) }
}

extension UnsafeMutableRawBufferPointer {
    var bytes: UnsafeMutablePointer<UInt8>? { baseAddress?.assumingMemoryBound(to: UInt8.self) }
}
