/// `vault.key`: the master key, wrapped (AES-256-GCM) under a key derived from the password.
///
///     offset size field
///          0    8 magic "INKYVKEY"
///          8    2 format version, UInt16 BE = 1
///         10    2 KDF id, UInt16 BE (1 PBKDF2-HMAC-SHA256, 2 scrypt, 3 reserved: Argon2id)
///         12   24 KDF parameters, 3 × UInt64 BE (PBKDF2: iterations,0,0; scrypt: N,r,p)
///         36    2 wrapping cipher id, UInt16 BE (1 = AES-256-GCM)
///         38   32 salt
///         70   12 GCM nonce
///         82   32 wrapped master key          ← bytes 0..<82 are the header, all of it AAD
///        114   16 GCM tag
///        130   32 SHA-256 of bytes 0..<130    ← damage detector, not authentication
///        162      end
///
/// Why the trailing SHA-256: a GCM failure cannot tell "wrong password" from "flipped
/// bit"; the unkeyed checksum can, before any KDF runs. So a damaged file is reported as
/// damaged (and `.prev` tried) instead of telling the user their password is wrong, and a
/// wrong password costs exactly one derivation. It proves nothing against an attacker, who
/// can recompute it; the GCM tag over the header and key is what stops tampering.
struct VaultKeyFile: Equatable {
    static let magic = Array("INKYVKEY".utf8)
    static let formatVersion: UInt16 = 1
    static let aesGCMWrapping: UInt16 = 1
    static let headerLength = 82
    static let fileLength = 162
    static let checksumLength = 32
    /// Anything bigger is not one of ours; refuse before reading it into memory.
    static let readLimit = 4096

    var kdf: VaultKDF
    var salt: [UInt8]
    var nonce: [UInt8]
    var wrappedKey: [UInt8]
    var tag: [UInt8]

    var header: [UInt8] {
        var bytes = Self.magic
        bytes.appendBigEndian(Self.formatVersion)
        let (id, parameters) = kdf.wireFields
        bytes.appendBigEndian(id)
        bytes.appendBigEndian(parameters.0)
        bytes.appendBigEndian(parameters.1)
        bytes.appendBigEndian(parameters.2)
        bytes.appendBigEndian(Self.aesGCMWrapping)
        bytes += salt
        bytes += nonce
        return bytes
    }

    /// The complete file, checksum included.
    func encoded() throws(VaultError) -> [UInt8] {
        let body = header + wrappedKey + tag
        do { return body + (try SHA256Hasher.hash(body)) } catch { throw .crypto(error) }
    }

    /// Wraps `masterKey` under `password` with a fresh salt and nonce (one derivation).
    static func wrap(
        masterKey: SecureBytes, password: SecureBytes, kdf: VaultKDF, randomness: RandomSource
    ) throws(VaultError) -> VaultKeyFile {
        if let reason = kdf.outOfBoundsReason { throw .invalidKDFParameters(reason) }
        let salt: [UInt8], nonce: [UInt8]
        do {
            salt = try randomness.bytes(count: VaultKDF.saltLength)
            nonce = try randomness.bytes(count: AESGCM.nonceLength)
        } catch {
            throw .crypto(error)
        }
        let wrappingKey = try kdf.deriveKey(password: password, salt: salt)
        var file = VaultKeyFile(kdf: kdf, salt: salt, nonce: nonce,
                                wrappedKey: [UInt8](repeating: 0, count: AESGCM.keyLength),
                                tag: [UInt8](repeating: 0, count: AESGCM.tagLength))
        let aad = file.header
        do {
            // Sealed straight from locked memory: the master key never visits an array.
            try masterKey.withUnsafeBytes { (plaintext) throws(CryptoError) in
                try nonce.withBytes { (nonce) throws(CryptoError) in
                    try aad.withBytes { (aad) throws(CryptoError) in
                        try file.wrappedKey.withMutableBytes { (ciphertext) throws(CryptoError) in
                            try file.tag.withMutableBytes { (tag) throws(CryptoError) in
                                try AESGCM.seal(plaintext: plaintext, into: ciphertext, tag: tag,
                                                key: wrappingKey, nonce: nonce, aad: aad)
                            }
                        }
                    }
                }
            }
        } catch {
            throw .crypto(error)
        }
        return file
    }

    /// Unwraps the master key: exactly one derivation; `.wrongPassword` if GCM refuses.
    func unwrap(password: SecureBytes) throws(VaultError) -> SecureBytes {
        let wrappingKey = try kdf.deriveKey(password: password, salt: salt)
        let aad = header
        do {
            return try wrappedKey.withBytes { (ciphertext) throws(CryptoError) in
                try tag.withBytes { (tag) throws(CryptoError) in
                    try nonce.withBytes { (nonce) throws(CryptoError) in
                        try aad.withBytes { (aad) throws(CryptoError) in
                            try SecureBytes(count: AESGCM.keyLength) { (masterKey) throws(CryptoError) in
                                try AESGCM.open(ciphertext: ciphertext, tag: tag, into: masterKey,
                                                key: wrappingKey, nonce: nonce, aad: aad)
                            }
                        }
                    }
                }
            }
        } catch .authenticationFailed {
            // The checksum already matched, so the bytes are as written: the password is wrong
            // (or someone forged the file, which is indistinguishable and equally fatal).
            throw .wrongPassword
        } catch {
            throw .crypto(error)
        }
    }

    enum ParseFailure: Error {
        case damaged(String)
        case unsupportedVersion(UInt16)
    }

    /// Checks everything that can be checked without the password. Order matters: the
    /// checksum comes first (a flipped bit anywhere, version field included, is "damaged",
    /// never "unsupported version" or "wrong password"); the version is checked before the
    /// length, since a newer format may be longer. Every format version ends with the
    /// SHA-256 of all preceding bytes.
    static func parse(_ bytes: [UInt8]) -> Result<VaultKeyFile, ParseFailure> {
        guard bytes.count > checksumLength + magic.count + 2, bytes.count <= readLimit else {
            return .failure(.damaged("\(bytes.count) bytes, expected \(fileLength)"))
        }
        let body = Array(bytes.dropLast(checksumLength))
        guard let digest = try? SHA256Hasher.hash(body) else { return .failure(.damaged("cannot hash")) }
        guard digest == Array(bytes.suffix(checksumLength)) else {
            return .failure(.damaged("checksum mismatch (the file was changed or damaged on disk)"))
        }
        var reader = ByteReader(body)
        guard reader.read(magic.count) == magic else { return .failure(.damaged("not an inkyfs vault key file")) }
        guard let version = reader.readBigEndian(UInt16.self) else { return .failure(.damaged("truncated")) }
        guard version == formatVersion else { return .failure(.unsupportedVersion(version)) }
        guard bytes.count == fileLength else {
            return .failure(.damaged("\(bytes.count) bytes, expected \(fileLength)"))
        }
        guard let kdfID = reader.readBigEndian(UInt16.self),
              let p0 = reader.readBigEndian(UInt64.self),
              let p1 = reader.readBigEndian(UInt64.self),
              let p2 = reader.readBigEndian(UInt64.self),
              let wrapping = reader.readBigEndian(UInt16.self),
              let salt = reader.read(VaultKDF.saltLength),
              let nonce = reader.read(AESGCM.nonceLength),
              let wrappedKey = reader.read(AESGCM.keyLength),
              let tag = reader.read(AESGCM.tagLength),
              reader.remaining == 0
        else { return .failure(.damaged("malformed fields")) }
        guard wrapping == aesGCMWrapping else { return .failure(.damaged("unknown wrapping cipher \(wrapping)")) }
        switch VaultKDF.decode(id: kdfID, parameters: (p0, p1, p2)) {
        case .success(let kdf):
            return .success(VaultKeyFile(kdf: kdf, salt: salt, nonce: nonce, wrappedKey: wrappedKey, tag: tag))
        case .failure(let failure):
            return .failure(.damaged(failure.reason))
        }
    }
}
