internal import CSSL

/// One server-side TLS connection, bytes in and bytes out: libssl's `SSL` over two memory
/// BIOs, so it never touches a socket. Ciphertext from the client goes in with `receive`;
/// what libssl has to send (handshake, records, alerts, close_notify) comes out with
/// `takeOutput`. Sole owner of the `SSL` (which owns both BIOs); used by one thread at a time.
final class TLSSession {
    private let ssl: OpaquePointer
    /// Where the client's ciphertext is put for libssl to read.
    private let incoming: OpaquePointer
    /// Where libssl writes what goes to the client.
    private let outgoing: OpaquePointer

    /// What a failed call leaves: libssl's reasons, and whether it was plain HTTP that came.
    struct Failure: Error {
        let reason: String
        let isPlainHTTP: Bool

        static func drained(_ call: String) -> Failure {
            let entries = OpenSSLErrors.drain()
            return Failure(reason: entries.isEmpty ? "\(call) failed" : entries.map(\.reason).joined(separator: "; "),
                           isPlainHTTP: entries.contains(where: \.isPlainHTTP))
        }
    }

    init(context: TLSServerContext) throws(Failure) {
        OpenSSLErrors.clear()
        guard let ssl = SSL_new(context.handle) else { throw .drained("SSL_new") }
        guard let incoming = BIO_new(BIO_s_mem()), let outgoing = BIO_new(BIO_s_mem()) else {
            SSL_free(ssl)
            throw .drained("BIO_new")
        }
        inky_bio_set_mem_retry_when_empty(incoming)
        SSL_set_bio(ssl, incoming, outgoing)
        SSL_set_accept_state(ssl)
        self.ssl = ssl
        self.incoming = incoming
        self.outgoing = outgoing
    }

    deinit { SSL_free(ssl) }

    /// The client's ciphertext, kept for libssl to read (a memory BIO grows as needed).
    func receive(_ bytes: UnsafeRawBufferPointer) throws(Failure) {
        var at = 0
        while at < bytes.count {
            let slice = min(bytes.count - at, Int(Int32.max))
            var written = 0
            OpenSSLErrors.clear()
            guard BIO_write_ex(incoming, bytes.baseAddress! + at, slice, &written) == 1, written > 0 else { throw .drained("BIO_write") }
            at += written
        }
    }

    /// Runs the handshake as far as the bytes received allow: true once it is complete.
    func handshake() throws(Failure) -> Bool {
        OpenSSLErrors.clear()
        let result = SSL_do_handshake(ssl)
        if result == 1 { return true }
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: return false
        default: throw .drained("SSL_do_handshake")
        }
    }

    enum Read {
        /// This many bytes of plaintext.
        case bytes(Int)
        /// Nothing until more ciphertext comes.
        case needsMore
        /// The client sent close_notify: it sends nothing more.
        case closed
    }

    /// Decrypts into `buffer` what the ciphertext received holds, one record at most.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(Failure) -> Read {
        var count = 0
        OpenSSLErrors.clear()
        if SSL_read_ex(ssl, buffer.baseAddress, buffer.count, &count) == 1 { return .bytes(count) }
        switch SSL_get_error(ssl, 0) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: return .needsMore
        case SSL_ERROR_ZERO_RETURN: return .closed
        default: throw .drained("SSL_read")
        }
    }

    /// Encrypts all of `plaintext` into records, ready in `takeOutput` (a memory BIO never
    /// makes a write wait).
    func write(_ plaintext: UnsafeRawBufferPointer) throws(Failure) {
        var at = 0
        while at < plaintext.count {
            var written = 0
            OpenSSLErrors.clear()
            let result = SSL_write_ex(ssl, plaintext.baseAddress! + at, min(plaintext.count - at, Int(Int32.max)), &written)
            guard result == 1 else { throw .drained("SSL_write") }
            at += written
        }
    }

    /// Queues close_notify (once the handshake is done; before, there is nothing to close).
    func shutdown() {
        guard SSL_is_init_finished(ssl) == 1 else { return }
        OpenSSLErrors.clear()
        _ = SSL_shutdown(ssl)
        OpenSSLErrors.clear()
    }

    /// Bytes waiting to go to the client.
    var pendingOutput: Int { Int(BIO_ctrl_pending(outgoing)) }

    /// Moves up to `buffer.count` waiting bytes into it; how many.
    func takeOutput(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        var count = 0
        guard buffer.count > 0, BIO_read_ex(outgoing, buffer.baseAddress, buffer.count, &count) == 1 else { return 0 }
        return count
    }

    /// "TLSv1.3 TLS_AES_256_GCM_SHA384", for the log.
    var negotiated: String {
        let version = String(cString: SSL_get_version(ssl))
        let cipher = SSL_get_current_cipher(ssl).flatMap { SSL_CIPHER_get_name($0) }.map { String(cString: $0) } ?? "no cipher"
        return "\(version) \(cipher)"
    }
}
