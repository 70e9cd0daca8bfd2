/// `Array.withUnsafeBytes` is `rethrows`, which erases a closure's typed error to
/// `any Error`. These wrappers carry `CryptoError` through so the public API can keep
/// `throws(CryptoError)` without casts at every call site.
extension Array where Element == UInt8 {
    func withBytes<R>(
        _ body: (UnsafeRawBufferPointer) throws(CryptoError) -> R
    ) throws(CryptoError) -> R {
        try withUnsafeBytes { bytes in Result { () throws(CryptoError) in try body(bytes) } }.get()
    }

    mutating func withMutableBytes<R>(
        _ body: (UnsafeMutableRawBufferPointer) throws(CryptoError) -> R
    ) throws(CryptoError) -> R {
        try withUnsafeMutableBytes { bytes in Result { () throws(CryptoError) in try body(bytes) } }.get()
    }
}
