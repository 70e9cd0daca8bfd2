/// The 32 random bytes that identify one object for its whole life. They are written in
/// the object's header (bound into every chunk's AAD, so chunks cannot move between
/// objects) and in its manifest entry, and they select the object's key. Not secret.
public struct VaultFileID: Hashable, Sendable, Codable, CustomStringConvertible {
    public static let length = 32
    public let bytes: [UInt8]

    /// Nil unless exactly 32 bytes.
    public init?(bytes: [UInt8]) {
        guard bytes.count == Self.length else { return nil }
        self.bytes = bytes
    }

    /// Nil unless 64 lowercase hex digits.
    public init?(hex: String) {
        guard let bytes = HexEncoding.decode(hex) else { return nil }
        self.init(bytes: bytes)
    }

    public var hex: String { HexEncoding.encode(bytes) }
    public var description: String { hex }

    static func random(_ randomness: RandomSource) throws(CryptoError) -> VaultFileID {
        VaultFileID(bytes: try randomness.bytes(count: length))!
    }

    // In the manifest a file id is its hex string.
    public init(from decoder: any Decoder) throws {
        let hex = try decoder.singleValueContainer().decode(String.self)
        guard let id = VaultFileID(hex: hex) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                    debugDescription: "file id must be 64 lowercase hex digits"))
        }
        self = id
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(hex)
    }
}
