import Foundation

/// `manifest.bin`: the manifest payload, encrypted under the manifest key.
///
/// Version 2 (written):
///
///     offset size field
///          0    8 magic "INKYVMAN"
///          8    2 format version, UInt16 BE = 2
///         10    2 algorithm id, UInt16 BE (1 = AES-256-GCM)
///         12   12 GCM nonce (random per save)
///         24    n ciphertext of: generation (UInt64 BE) ‖ JSON payload ‖ spaces  ← 0..<24 is the AAD
///       24+n   16 GCM tag
///
/// n is `VaultPadding.manifestPlaintextSize` (at least 4 KiB, then Padmé buckets), so the file
/// size tells neither the names' lengths nor, with the generation inside, how many saves there
/// were. Version 1 (still read) had the generation in the clear header at 12..<20 and the nonce
/// at 20..<32, and no padding. The generation lets saving refuse to go backwards; its record
/// outside the vault (`VaultRollbackRecords`) lets unlock refuse an older copy put back.
enum VaultManifestFile {
    static let magic = Array("INKYVMAN".utf8)
    static let formatVersion: UInt16 = 2
    static let aesGCM: UInt16 = 1
    static let headerLength = 24
    static let versionOneHeaderLength = 32
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
        // The JSON holds every name in the vault; the plaintext lives in locked memory, and the
        // encoder's Data is wiped once copied there.
        defer { Wipe.data(&json) }
        let length = Int(VaultPadding.manifestPlaintextSize(UInt64(8 + json.count)))
        let plaintext = SecureBytes(count: length) { buffer in
            var prefix: [UInt8] = []
            prefix.appendBigEndian(generation)
            buffer.copyBytes(from: prefix)
            json.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: buffer[8..<8 + json.count]).copyMemory(from: $0) }
            // JSON allows trailing whitespace: the padding is spaces, so the payload still parses as it is.
            UnsafeMutableRawBufferPointer(rebasing: buffer[(8 + json.count)...]).initializeMemory(as: UInt8.self, repeating: 0x20)
        }
        do throws(CryptoError) {
            var file = magic
            file.appendBigEndian(formatVersion)
            file.appendBigEndian(aesGCM)
            file += try randomness.bytes(count: AESGCM.nonceLength)
            let header = file
            file += [UInt8](repeating: 0, count: length + AESGCM.tagLength)
            try header.withBytes { (header) throws(CryptoError) in
                try file.withMutableBytes { (output) throws(CryptoError) in
                    try plaintext.withUnsafeBytes { (plaintext) throws(CryptoError) in
                        try AESGCM.seal(
                            plaintext: plaintext,
                            into: UnsafeMutableRawBufferPointer(rebasing: output[headerLength..<headerLength + length]),
                            tag: UnsafeMutableRawBufferPointer(rebasing: output[(headerLength + length)...]),
                            key: key,
                            nonce: UnsafeRawBufferPointer(rebasing: header[12..<headerLength]),
                            aad: header)
                    }
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
        guard bytes.count >= versionOneHeaderLength + AESGCM.tagLength else {
            throw .damagedManifest(path: path, detail: "\(bytes.count) bytes is too short")
        }
        var reader = ByteReader(bytes)
        guard reader.read(magic.count) == magic else {
            throw .damagedManifest(path: path, detail: "not an inkyfs vault manifest")
        }
        let version = reader.readBigEndian(UInt16.self)!
        guard version == 1 || version == formatVersion else { throw .unsupportedFormatVersion(path: path, version: version) }
        let algorithm = reader.readBigEndian(UInt16.self)!
        guard algorithm == aesGCM else { throw .damagedManifest(path: path, detail: "unknown algorithm \(algorithm)") }
        // Version 1: the generation in the clear header; version 2: the first 8 plaintext bytes.
        let clearGeneration = version == 1 ? reader.readBigEndian(UInt64.self)! : nil
        let headerLength = version == 1 ? versionOneHeaderLength : Self.headerLength
        let nonceStart = headerLength - AESGCM.nonceLength
        let plaintextLength = bytes.count - headerLength - AESGCM.tagLength
        guard version == 1 || plaintextLength >= 8 else {
            throw .damagedManifest(path: path, detail: "\(bytes.count) bytes is too short")
        }
        let plaintext: SecureBytes
        do {
            plaintext = try bytes.withBytes { (file) throws(CryptoError) in
                try SecureBytes(count: plaintextLength) { (output) throws(CryptoError) in
                    try AESGCM.open(
                        ciphertext: UnsafeRawBufferPointer(rebasing: file[headerLength..<headerLength + plaintextLength]),
                        tag: UnsafeRawBufferPointer(rebasing: file[(headerLength + plaintextLength)...]),
                        into: output, key: key,
                        nonce: UnsafeRawBufferPointer(rebasing: file[nonceStart..<headerLength]),
                        aad: UnsafeRawBufferPointer(rebasing: file[0..<headerLength]))
                }
            }
        } catch .authenticationFailed {
            throw .damagedManifest(path: path, detail: "authentication failed (damaged or tampered)")
        } catch {
            throw .crypto(error)
        }
        let generation = clearGeneration ?? plaintext.withUnsafeBytes { $0.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) } }
        let jsonStart = clearGeneration == nil ? 8 : 0
        let manifest: VaultManifest
        do {
            manifest = try plaintext.withUnsafeBytes { plaintext in
                // No copy: the decoder reads the locked buffer itself, which is wiped when
                // `plaintext` is released at the end of this function.
                let json = UnsafeRawBufferPointer(rebasing: plaintext[jsonStart...])
                let data = Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: json.baseAddress ?? plaintext.baseAddress!),
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
