internal import CCrypto

/// OpenSSL's CSPRNG (`RAND_bytes`): the source for keys, salts and nonces.
public enum RandomBytes {
    /// `count` random bytes, for non-secret values such as salts and nonces.
    /// Use `SecureBytes(randomCount:)` for keys.
    public static func bytes(count: Int) throws(CryptoError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        try bytes.withMutableBytes { (buffer) throws(CryptoError) in try fill(buffer) }
        return bytes
    }

    /// Fills `buffer` entirely. `RAND_bytes` takes an `int` length, so large buffers are
    /// filled in slices rather than truncating the count.
    public static func fill(_ buffer: UnsafeMutableRawBufferPointer) throws(CryptoError) {
        guard let base = buffer.baseAddress else { return }
        var offset = 0
        while offset < buffer.count {
            let slice = min(buffer.count - offset, Int(Int32.max))
            OpenSSLErrorQueue.clear()
            guard RAND_bytes(base.advanced(by: offset).assumingMemoryBound(to: UInt8.self), Int32(slice)) == 1 else {
                _ = OpenSSLErrorQueue.drain()
                throw .randomUnavailable
            }
            offset += slice
        }
    }
}
