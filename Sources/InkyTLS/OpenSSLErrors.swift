internal import CSSL

/// libssl reports failures on a per-thread queue, not through return values. It is cleared
/// before each call whose failure is read (SSL_get_error needs an empty queue to tell a
/// failure from "wants more bytes") and drained after, so a reason belongs to its failure.
/// Event loop threads serve many connections: a stale entry would blame the wrong one.
enum OpenSSLErrors {
    static func clear() { ERR_clear_error() }

    /// One entry: its packed code and its reason text ("wrong version number").
    struct Entry {
        let code: UInt
        let reason: String

        /// libssl's own diagnosis that a plain HTTP request (or a proxy's CONNECT) came
        /// where a TLS ClientHello should have.
        var isPlainHTTP: Bool {
            inky_err_is_ssl(code) == 1 && [SSL_R_HTTP_REQUEST, SSL_R_HTTPS_PROXY_REQUEST].contains(inky_err_reason(code))
        }

        /// X.509's finding that a key is not the certificate's.
        var isKeyMismatch: Bool { inky_err_is_x509(code) == 1 && inky_err_reason(code) == X509_R_KEY_VALUES_MISMATCH }
    }

    /// Drains the queue, oldest first (the oldest is the root cause).
    static func drain() -> [Entry] {
        var entries: [Entry] = []
        var code = ERR_get_error()
        while code != 0 {
            let reason = ERR_reason_error_string(code).map { String(cString: $0) } ?? "error \(code)"
            entries.append(Entry(code: code, reason: reason))
            code = ERR_get_error()
        }
        return entries
    }

    /// The drained queue as one line.
    static func text() -> String {
        let entries = drain()
        return entries.isEmpty ? "no detail from OpenSSL" : entries.map(\.reason).joined(separator: "; ")
    }
}
