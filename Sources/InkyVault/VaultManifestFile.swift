import Foundation

/// `manifest.bin`: the manifest payload, encrypted under the manifest key.
///
///     offset size field
///          0    8 magic "INKYVMAN"
///          8    2 format version, UInt16 BE = 1
///         10    2 algorithm id, UInt16 BE (1 = AES-256-GCM)
///         12    8 generation, UInt64 BE (1 at creation, +1 on every save)
///         20   12 GCM nonce (random per save)
///         32    n ciphertext of the JSON payload   ← bytes 0..<32 are the header, all AAD
///       32+n   16 GCM tag
///
/// The generation is authenticated, so it cannot be edited; it lets a loader prefer the
/// newer of two good copies and lets saving refuse to go backwards.
enum VaultManifestFile {
    static let magic = Array("INKYVMAN".utf8)
    static let formatVersion: UInt16 = 1
    static let aesGCM: UInt16 = 1
    static let headerLength = 32
    /// Ten thousand comics are well under 5 MiB of JSON; refuse absurd files unread.
    static let readLimit = 64 << 20

    /// Encrypts `manifest` as generation `generation`.
    static func seal(
        _ manifest: VaultManifest, generation: UInt64, key: SecureBytes, randomness: RandomSource
    ) throws(VaultError) -> [UInt8] {
        var json: Data
        do { json = try VaultManifest.encoder().encode(manifest) } catch {
            throw .damagedManifest(path: "(new manifest)", detail: "cannot encode: \(error)")
        }
        // The JSON holds every name in the vault; wipe it once it has been encrypted.
        defer { Wipe.data(&json) }
        do throws(CryptoError) {
            var file = magic
            file.appendBigEndian(formatVersion)
            file.appendBigEndian(aesGCM)
            file.appendBigEndian(generation)
            file += try randomness.bytes(count: AESGCM.nonceLength)
            let header = file
            file += [UInt8](repeating: 0, count: json.count + AESGCM.tagLength)
            try header.withBytes { (header) throws(CryptoError) in
                try file.withMutableBytes { (output) throws(CryptoError) in
                    let ciphertextEnd = headerLength + json.count
                    // Data.withUnsafeBytes is rethrows; Result carries the typed error across.
                    try json.withUnsafeBytes { plaintext in
                        Result { () throws(CryptoError) in
                            try AESGCM.seal(
                                plaintext: plaintext,
                                into: UnsafeMutableRawBufferPointer(rebasing: output[headerLength..<ciphertextEnd]),
                                tag: UnsafeMutableRawBufferPointer(rebasing: output[ciphertextEnd...]),
                                key: key,
                                nonce: UnsafeRawBufferPointer(rebasing: header[20..<headerLength]),
                                aad: header)
                        }
                    }.get()
                }
            }
            return file
        } catch {
            throw .crypto(error)
        }
    }

    /// Authenticates and decodes a manifest file. The plaintext JSON is decrypted into
    /// locked memory, decoded straight from there, and wiped by SecureBytes afterwards.
    static func open(
        _ bytes: [UInt8], key: SecureBytes, path: String
    ) throws(VaultError) -> (manifest: VaultManifest, generation: UInt64) {
        guard bytes.count >= headerLength + AESGCM.tagLength else {
            throw .damagedManifest(path: path, detail: "\(bytes.count) bytes is too short")
        }
        var reader = ByteReader(bytes)
        guard reader.read(magic.count) == magic else {
            throw .damagedManifest(path: path, detail: "not an inkyfs vault manifest")
        }
        let version = reader.readBigEndian(UInt16.self)!
        guard version == formatVersion else { throw .unsupportedFormatVersion(path: path, version: version) }
        let algorithm = reader.readBigEndian(UInt16.self)!
        guard algorithm == aesGCM else { throw .damagedManifest(path: path, detail: "unknown algorithm \(algorithm)") }
        let generation = reader.readBigEndian(UInt64.self)!
        let plaintextLength = bytes.count - headerLength - AESGCM.tagLength
        let plaintext: SecureBytes
        do {
            plaintext = try bytes.withBytes { (file) throws(CryptoError) in
                try SecureBytes(count: plaintextLength) { (output) throws(CryptoError) in
                    try AESGCM.open(
                        ciphertext: UnsafeRawBufferPointer(rebasing: file[headerLength..<headerLength + plaintextLength]),
                        tag: UnsafeRawBufferPointer(rebasing: file[(headerLength + plaintextLength)...]),
                        into: output, key: key,
                        nonce: UnsafeRawBufferPointer(rebasing: file[20..<headerLength]),
                        aad: UnsafeRawBufferPointer(rebasing: file[0..<headerLength]))
                }
            }
        } catch .authenticationFailed {
            throw .damagedManifest(path: path, detail: "authentication failed (damaged or tampered)")
        } catch {
            throw .crypto(error)
        }
        let manifest: VaultManifest
        do {
            manifest = try plaintext.withUnsafeBytes { json in
                // No copy: the decoder reads the locked buffer itself, which is wiped when
                // `plaintext` is released at the end of this function.
                let data = Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: json.baseAddress!),
                                count: json.count, deallocator: .none)
                return try VaultManifest.decoder().decode(VaultManifest.self, from: data)
            }
        } catch {
            throw .damagedManifest(path: path, detail: "authentic but undecodable payload: \(error)")
        }
        if let failure = manifest.validationFailure() {
            throw .damagedManifest(path: path, detail: "authentic but invalid payload: \(failure)")
        }
        return (manifest, generation)
    }
}
