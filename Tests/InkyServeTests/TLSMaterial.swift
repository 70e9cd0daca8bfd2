import Foundation
import InkyTestSupport

/// A throwaway certificate authority and a server certificate it signed for 127.0.0.1 and
/// localhost, made by the `openssl` CLI as a user would; beside them, keys that are not the
/// certificate's and a key under a passphrase, for what `serve` must refuse.
struct TLSMaterial {
    let folder: URL
    /// The CA's certificate: what a client trusts (`curl --cacert`).
    var authority: String { path("ca.pem") }
    /// The server's certificate, then the CA's: a chain as a CA delivers it (fullchain.pem).
    var chain: String { path("fullchain.pem") }
    var key: String { path("server.key") }
    /// An EC key, and an RSA key, neither the certificate's.
    var otherKey: String { path("other.key") }
    var otherTypeKey: String { path("other-rsa.key") }
    var encryptedKey: String { path("encrypted.key") }

    init() throws {
        folder = ArchiveMaker.temporaryDirectory("tls", removedAtExit: true)
        let openssl = "/usr/bin/openssl"
        let extensions = path("server.ext")
        try "subjectAltName = IP:127.0.0.1, DNS:localhost\nextendedKeyUsage = serverAuth\nbasicConstraints = CA:FALSE\n"
            .write(toFile: extensions, atomically: true, encoding: .utf8)
        try ArchiveMaker.run(openssl, ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                                        "-keyout", path("ca.key"), "-out", authority, "-days", "2", "-subj", "/CN=inkyfs test CA"])
        try ArchiveMaker.run(openssl, ["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                                        "-keyout", key, "-out", path("server.csr"), "-subj", "/CN=localhost"])
        try ArchiveMaker.run(openssl, ["x509", "-req", "-in", path("server.csr"), "-CA", authority, "-CAkey", path("ca.key"),
                                        "-CAcreateserial", "-days", "2", "-extfile", extensions, "-out", path("server.pem")])
        let chainText = try String(contentsOfFile: path("server.pem"), encoding: .utf8) + String(contentsOfFile: authority, encoding: .utf8)
        try chainText.write(toFile: chain, atomically: true, encoding: .utf8)
        try ArchiveMaker.run(openssl, ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", otherKey])
        try ArchiveMaker.run(openssl, ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", otherTypeKey])
        try ArchiveMaker.run(openssl, ["pkey", "-in", key, "-aes256", "-passout", "pass:secret words", "-out", encryptedKey])
        for file in [key, otherKey, otherTypeKey, encryptedKey] { chmod(file, 0o600) }
    }

    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// A self-signed certificate valid for one day in 2020, and its key (`openssl ca` alone
    /// sets dates in the past).
    func expired() throws -> (certificate: String, key: String) {
        let database = path("expired-ca")
        try FileManager.default.createDirectory(atPath: database, withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: database + "/index.txt", contents: nil)
        try "01\n".write(toFile: database + "/serial", atomically: true, encoding: .utf8)
        try """
            [ca]
            default_ca = expired
            [expired]
            database = \(database)/index.txt
            new_certs_dir = \(database)
            serial = \(database)/serial
            default_md = sha256
            policy = any
            [any]
            commonName = supplied

            """.write(toFile: database + "/ca.cnf", atomically: true, encoding: .utf8)
        let (certificate, key) = (path("expired.pem"), path("expired.key"))
        try ArchiveMaker.run("/usr/bin/openssl", ["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                                                   "-keyout", key, "-out", path("expired.csr"), "-subj", "/CN=localhost"])
        try ArchiveMaker.run("/usr/bin/openssl", ["ca", "-batch", "-config", database + "/ca.cnf", "-selfsign", "-keyfile", key,
                                                   "-in", path("expired.csr"), "-out", certificate,
                                                   "-startdate", "20200101000000Z", "-enddate", "20200102000000Z"])
        chmod(key, 0o600)
        return (certificate, key)
    }
}
