internal import CCrypto

/// The OpenSSL actually loaded at run time (not the headers we compiled against), which is
/// what matters when `inkyfs doctor` reports why a primitive misbehaves on some machine.
public enum OpenSSLVersion {
    /// For example "OpenSSL 3.0.15 3 Sep 2024".
    public static var version: String { String(cString: inky_openssl_version()) }
}
