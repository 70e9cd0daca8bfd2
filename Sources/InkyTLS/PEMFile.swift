import Foundation
import InkyCore

/// A certificate or key file as the user gave it, read once before OpenSSL loads it, so a
/// mistake is named plainly (no such file, permission denied, the two files swapped, a key
/// under a passphrase) instead of as OpenSSL's reason codes.
struct PEMFile {
    let role: TLSError.Role
    let path: String
    let text: String
    /// Permission bits, to warn of a key others can read.
    let mode: mode_t

    /// A certificate chain of many intermediates is a few tens of kB; anything past this is
    /// not one.
    static let largest = 1 << 20

    init(_ path: String, role: TLSError.Role) throws(TLSError) {
        self.role = role
        self.path = path
        let descriptor = Syscall.retrying { open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK) }
        guard descriptor >= 0 else {
            let error = Errno.current
            throw error == .ENOENT ? .missingFile(role, path: path) : .unreadable(role, path: path, error)
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw .unreadable(role, path: path, .current) }
        // A FIFO or a device would block OpenSSL's own read or never end.
        guard status.st_mode & S_IFMT == S_IFREG else { throw .notAFile(role, path: path) }
        mode = status.st_mode & 0o7777
        var bytes = [UInt8](repeating: 0, count: Self.largest)
        let read = bytes.withUnsafeMutableBytes { Syscall.readFully(descriptor, $0.baseAddress!, count: $0.count) }
        switch read {
        case .failure(let error): throw .unreadable(role, path: path, error)
        case .success(let count): text = String(decoding: bytes.prefix(count), as: UTF8.self)
        }
    }

    /// What PEM blocks the file holds, checked against its role; OpenSSL then parses them.
    func checkKind() throws(TLSError) {
        let certificate = text.contains("-----BEGIN CERTIFICATE-----") || text.contains("-----BEGIN TRUSTED CERTIFICATE-----")
        // PRIVATE KEY, RSA PRIVATE KEY, EC PRIVATE KEY, ENCRYPTED PRIVATE KEY, …
        let key = text.range(of: #"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----"#, options: .regularExpression) != nil
        switch role {
        case .certificate where !certificate:
            throw .notPEM(role, path: path, found: key ? "a private key" : nil)
        case .key where !key:
            throw .notPEM(role, path: path, found: certificate ? "a certificate" : nil)
        case .key where text.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----") || text.contains("Proc-Type: 4,ENCRYPTED"):
            throw .encryptedKey(path: path)
        default:
            break
        }
    }

    /// A key every user of the machine can read is a key anyone on it can serve as this server.
    var warning: String? {
        guard role == .key, mode & S_IROTH != 0 else { return nil }
        return "private key \(path) can be read by every user of this machine (mode \(String(mode, radix: 8))): chmod 600 \(path)"
    }
}
