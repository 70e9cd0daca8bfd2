import Synchronization

/// Where the vault's random bytes come from: keys, salts, nonces, file ids, object names.
///
/// Production always uses `.system` (OpenSSL's CSPRNG). `.deterministic` exists for one
/// reason: the known-answer fixture in Fixtures/Vault must be reproducible byte for byte,
/// so that a change to the on-disk format cannot slip in unnoticed. It is internal, so
/// only the test target (via `@testable import`) can reach it.
struct RandomSource: Sendable {
    private let fillBuffer: @Sendable (UnsafeMutableRawBufferPointer) throws(CryptoError) -> Void

    func fill(_ buffer: UnsafeMutableRawBufferPointer) throws(CryptoError) { try fillBuffer(buffer) }

    func bytes(count: Int) throws(CryptoError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        try bytes.withMutableBytes { (buffer) throws(CryptoError) in try fill(buffer) }
        return bytes
    }

    /// Random key material straight into locked memory.
    func secureBytes(count: Int) throws(CryptoError) -> SecureBytes {
        try SecureBytes(count: count) { (buffer) throws(CryptoError) in try fill(buffer) }
    }

    static let system = RandomSource { (buffer) throws(CryptoError) in try RandomBytes.fill(buffer) }

    /// A reproducible stream: block i is SHA-256(label ‖ seed ‖ i as UInt64 BE), and each
    /// request consumes whole blocks. NEVER for real vaults: anyone with the seed has the keys.
    static func deterministic(seed: [UInt8]) -> RandomSource {
        let stream = DeterministicStream(seed: seed)
        return RandomSource { (buffer) throws(CryptoError) in try stream.fill(buffer) }
    }
}

private final class DeterministicStream: Sendable {
    private static let label = Array("inkyfs deterministic test randomness, never for real keys".utf8)
    private let seed: [UInt8]
    private let nextBlock = Atomic<UInt64>(0)

    init(seed: [UInt8]) { self.seed = seed }

    func fill(_ buffer: UnsafeMutableRawBufferPointer) throws(CryptoError) {
        var offset = 0
        while offset < buffer.count {
            let index = nextBlock.add(1, ordering: .relaxed).oldValue
            var input = Self.label + seed
            input.appendBigEndian(index)
            let block = try SHA256Hasher.hash(input)
            let take = min(block.count, buffer.count - offset)
            for i in 0..<take { buffer[offset + i] = block[i] }
            offset += take
        }
    }
}
