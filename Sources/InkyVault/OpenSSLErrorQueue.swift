internal import CCrypto

/// OpenSSL reports failures on a per-thread queue rather than through return values.
/// We clear it before each call and drain it after a failure, so the text attached to an
/// error belongs to that failure and stale entries never leak into a later one.
enum OpenSSLErrorQueue {
    static func clear() { ERR_clear_error() }

    /// Drains the queue into one line, oldest first (the oldest entry is the root cause).
    static func drain() -> String {
        var messages: [String] = []
        var buffer = [CChar](repeating: 0, count: 256)
        var code = ERR_get_error()
        while code != 0 {
            buffer.withUnsafeMutableBufferPointer { ERR_error_string_n(code, $0.baseAddress, $0.count) }
            messages.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
            code = ERR_get_error()
        }
        return messages.isEmpty ? "no OpenSSL error detail" : messages.joined(separator: "; ")
    }

    static func error(_ function: String) -> CryptoError {
        .openssl(function: function, detail: drain())
    }
}
