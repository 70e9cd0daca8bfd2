/// `Array.withUnsafeBytes` is `rethrows`, which erases a closure's typed error to
/// `any Error`. These wrappers carry the closure's error type (`CryptoError`, `VaultError`)
/// through so the public API can keep typed throws without casts at every call site.
extension Array where Element == UInt8 {
    func withBytes<R, E: Error>(
        _ body: (UnsafeRawBufferPointer) throws(E) -> R
    ) throws(E) -> R {
        try withUnsafeBytes { bytes in Result { () throws(E) in try body(bytes) } }.get()
    }

    mutating func withMutableBytes<R, E: Error>(
        _ body: (UnsafeMutableRawBufferPointer) throws(E) -> R
    ) throws(E) -> R {
        try withUnsafeMutableBytes { bytes in Result { () throws(E) in try body(bytes) } }.get()
    }
}
