import Foundation

/// Damage to a vault object on disk, as someone who can write the vault folder could do it.
/// The layout (docs/vault-format.md): a 56-byte header, then chunks of a 12-byte nonce, up to
/// 64 KiB of ciphertext and a 16-byte tag.
public enum VaultObjectTamper {
    public static let headerBytes = 56
    public static let chunkBytes = 65_536 + 28

    /// Flips one bit of chunk `chunk`'s ciphertext, `offset` bytes into it.
    public static func flipCiphertextByte(ofObject path: String, chunk: Int, offset: Int = 30_000) throws {
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        let position = UInt64(headerBytes + chunk * chunkBytes + 12 + offset)
        try handle.seek(toOffset: position)
        guard let byte = try handle.read(upToCount: 1)?.first else { throw CocoaError(.fileReadTooLarge) }
        try handle.seek(toOffset: position)
        try handle.write(contentsOf: Data([byte ^ 0x20]))
    }
}
