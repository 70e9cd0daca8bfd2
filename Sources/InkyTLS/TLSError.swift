import InkyCore

/// Why a certificate and key cannot serve HTTPS, said so the user knows what to fix. Raised at
/// start, before the server listens: a server never comes up half configured.
public enum TLSError: Error, Equatable, CustomStringConvertible {
    /// The certificate (chain) file or the private key file.
    public enum Role: String, Sendable {
        case certificate = "certificate"
        case key = "private key"
    }

    case missingFile(Role, path: String)
    case unreadable(Role, path: String, Errno)
    case notAFile(Role, path: String)
    /// No PEM block of the expected kind; `found` names what the file holds instead, if known.
    case notPEM(Role, path: String, found: String?)
    /// A key under a passphrase: a server started by systemd has no one to type it.
    case encryptedKey(path: String)
    /// OpenSSL would not load it (a damaged block, a key type it does not take).
    case rejected(Role, path: String, detail: String)
    /// The key is not the one the certificate was issued for.
    case keyMismatch(certificate: String, key: String)
    /// A libssl call that fails only when memory or the library itself does.
    case openssl(function: String, detail: String)

    public var description: String {
        switch self {
        case .missingFile(let role, let path):
            "\(role.rawValue) \(path): no such file"
        case .unreadable(let role, let path, let errno):
            "\(role.rawValue) \(path): cannot read it: \(errno)"
        case .notAFile(let role, let path):
            "\(role.rawValue) \(path): not a file"
        case .notPEM(let role, let path, let found):
            switch (role, found) {
            case (.certificate, nil):
                "certificate \(path): no PEM certificate in it (a block starting -----BEGIN CERTIFICATE-----)"
            case (.key, nil):
                "private key \(path): no PEM private key in it (a block starting -----BEGIN PRIVATE KEY-----)"
            case (_, let found?):
                "\(role.rawValue) \(path): holds \(found), not a \(role.rawValue): are the certificate and the key given the other way round?"
            }
        case .encryptedKey(let path):
            "private key \(path): it is encrypted with a passphrase, which a server cannot ask for; "
                + "write it out without one: openssl pkey -in \(path) -out KEY.pem (then chmod 600 KEY.pem)"
        case .rejected(let role, let path, let detail):
            "\(role.rawValue) \(path): OpenSSL cannot use it: \(detail)"
        case .keyMismatch(let certificate, let key):
            "private key \(key) is not the key of certificate \(certificate): give the key the certificate was made for"
        case .openssl(let function, let detail):
            "\(function) failed: \(detail)"
        }
    }
}
