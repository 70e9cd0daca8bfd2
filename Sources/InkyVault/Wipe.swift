internal import CCrypto
import Foundation

/// Overwrites memory with OPENSSL_cleanse, which the optimiser may not remove the way it
/// may remove a memset into a buffer that is about to be freed. For plaintext that passed
/// through ordinary buffers (decrypted manifest JSON, comic bytes in a chunk cache, vault pages
/// in the daemon's window cache).
public enum Wipe {
    public static func memory(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        OPENSSL_cleanse(base, buffer.count)
    }

    /// In place when `bytes` is the only reference to its storage; otherwise mutation copies
    /// first and only the copy is wiped (as for `data`).
    public static func array(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { memory($0) }
    }

    /// Best effort: wipes this `Data`'s storage in place if it is the only reference;
    /// otherwise mutation copies first and only the copy is wiped.
    static func data(_ data: inout Data) {
        data.withUnsafeMutableBytes { memory($0) }
    }
}
