internal import CSSL
import Foundation

/// What every HTTPS connection of the server shares: libssl's `SSL_CTX` with the certificate
/// chain and key loaded from PEM files, TLS 1.2 at least, OpenSSL's default (secure) ciphers,
/// ALPN "http/1.1". Its sole owner: the context is freed with it.
///
/// `@unchecked Sendable`: the context is configured in `init` alone and never changed after,
/// and OpenSSL documents a configured `SSL_CTX` as safe to share between threads making
/// connections from it (`SSL_new` takes its own references; the session cache locks itself).
public final class TLSServerContext: @unchecked Sendable {
    let handle: OpaquePointer
    /// What the user should fix but need not fix to serve: a key others can read, a certificate
    /// out of its validity. Said once, at start.
    public let warnings: [String]

    /// Loads `certificateChainFile` (the server's certificate first, then the intermediates, as
    /// a CA delivers them) and `privateKeyFile` (unencrypted), both PEM, and checks that the key
    /// is the certificate's. Throws `TLSError` naming the file and what is wrong with it.
    public init(certificateChainFile: String, privateKeyFile: String) throws(TLSError) {
        let certificate = try PEMFile(certificateChainFile, role: .certificate)
        let key = try PEMFile(privateKeyFile, role: .key)
        try certificate.checkKind()
        try key.checkKind()
        OpenSSLErrors.clear()
        guard let handle = SSL_CTX_new(TLS_server_method()) else {
            throw .openssl(function: "SSL_CTX_new", detail: OpenSSLErrors.text())
        }
        do throws(TLSError) {
            let validity = try Self.configure(handle, certificate: certificateChainFile, key: privateKeyFile)
            warnings = [key.warning, validity].compactMap { $0 }
        } catch {
            SSL_CTX_free(handle)
            throw error
        }
        self.handle = handle
    }

    /// Everything but the files' own checks; the validity warning, if any.
    private static func configure(_ handle: OpaquePointer, certificate: String, key: String) throws(TLSError) -> String? {
        guard inky_ssl_ctx_harden(handle) == 1 else {
            throw .openssl(function: "SSL_CTX_set_min_proto_version", detail: OpenSSLErrors.text())
        }
        // Never prompt on the terminal for a passphrase: a key that needs one fails to load
        // (PEMFile names it first; this covers a form it does not recognise).
        SSL_CTX_set_default_passwd_cb(handle) { _, _, _, _ in 0 }
        guard SSL_CTX_use_certificate_chain_file(handle, certificate) == 1 else {
            throw .rejected(.certificate, path: certificate, detail: OpenSSLErrors.text())
        }
        guard SSL_CTX_use_PrivateKey_file(handle, key, SSL_FILETYPE_PEM) == 1 else {
            let entries = OpenSSLErrors.drain()
            if entries.contains(where: \.isKeyMismatch) {
                throw .keyMismatch(certificate: certificate, key: key)
            }
            throw .rejected(.key, path: key, detail: entries.map(\.reason).joined(separator: "; "))
        }
        // A key of another type than the certificate's (EC beside RSA) loads, and fails here.
        guard SSL_CTX_check_private_key(handle) == 1 else {
            OpenSSLErrors.clear()
            throw .keyMismatch(certificate: certificate, key: key)
        }
        SSL_CTX_set_alpn_select_cb(handle, { _, selected, selectedLength, offered, offeredLength, _ in
            TLSServerContext.selectHTTP1(selected, selectedLength, offered, offeredLength)
        }, nil)
        return validityWarning(handle, certificate)
    }

    deinit { SSL_CTX_free(handle) }

    /// ALPN: HTTP/1.1 is all the server speaks. A client that offers it gets it; one that offers
    /// only others (h2 alone) is not answered, and falls back to HTTP/1.1 as ALPN provides.
    /// `selected` must point into memory that outlives the call: it points into `offered`.
    private static func selectHTTP1(_ selected: UnsafeMutablePointer<UnsafePointer<UInt8>?>?, _ selectedLength: UnsafeMutablePointer<UInt8>?,
                                    _ offered: UnsafePointer<UInt8>?, _ offeredLength: UInt32) -> Int32 {
        let http1 = Array("http/1.1".utf8)
        guard let selected, let selectedLength, let offered else { return SSL_TLSEXT_ERR_NOACK }
        // The offer is a list of length-prefixed names.
        var at = 0
        while at < Int(offeredLength) {
            let length = Int(offered[at])
            let start = at + 1
            guard start + length <= Int(offeredLength) else { break }
            if length == http1.count, (0..<length).allSatisfy({ offered[start + $0] == http1[$0] }) {
                selected.pointee = offered + start
                selectedLength.pointee = UInt8(length)
                return SSL_TLSEXT_ERR_OK
            }
            at = start + length
        }
        return SSL_TLSEXT_ERR_NOACK
    }

    /// Clients refuse a certificate past its end or before its start: served anyway (the clock
    /// may be what is wrong), and said.
    private static func validityWarning(_ handle: OpaquePointer, _ path: String) -> String? {
        guard let certificate = SSL_CTX_get0_certificate(handle) else { return nil }
        if X509_cmp_current_time(X509_get0_notAfter(certificate)) < 0 {
            return "certificate \(path) has expired: clients will refuse it"
        }
        if X509_cmp_current_time(X509_get0_notBefore(certificate)) > 0 {
            return "certificate \(path) is not valid yet (or this machine's clock is behind): clients will refuse it"
        }
        return nil
    }
}
