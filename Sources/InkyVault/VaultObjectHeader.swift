#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The fixed 56-byte header at the start of every object file.
///
///     offset size field
///          0    8 magic "INKYVOBJ"
///          8    2 format version, UInt16 BE = 2 (1 is still read)
///         10    2 algorithm id, UInt16 BE (1 = AES-256-GCM, 12-byte random nonce per
///               chunk, 16-byte tag, per-object key from HKDF-SHA256)
///         12    4 chunk size, UInt32 BE: plaintext bytes per chunk (65,536)
///         16   32 file id
///         48    8 stream size, UInt64 BE: the bytes the chunks decrypt to
///         56      end; chunks follow
///
/// Version 2 pads: the stream is the comic ‖ zeros ‖ the comic's size (UInt64 BE), its length
/// `VaultPadding.objectStreamSize`, so the file size tells only a Padmé bucket. In version 1
/// the stream is the comic itself.
///
/// The whole header is part of every chunk's AAD, so none of it can be altered (size
/// shortened, id swapped, header moved onto another object's body) without every chunk
/// failing authentication.
public struct VaultObjectHeader: Sendable, Equatable {
    public static let length = 56
    static let magic = Array("INKYVOBJ".utf8)
    static let formatVersion: UInt16 = 2
    static let readableVersions: ClosedRange<UInt16> = 1...2
    static let aesGCMChunks: UInt16 = 1
    /// 64 KiB: large enough that the 28 bytes of nonce and tag cost 0.04 % and one AES-GCM
    /// call amortises its setup, small enough that a random 4 KiB read decrypts little.
    public static let defaultChunkSize = 65_536
    /// What a reader accepts, so a hostile header cannot make it allocate a huge buffer.
    static let chunkSizeRange = 4096...(1 << 20)

    public let version: UInt16
    public let chunkSize: Int
    public let fileID: VaultFileID
    /// What the chunks decrypt to: the comic itself in version 1, padded in version 2.
    public let plaintextSize: UInt64
    /// Whether the stream ends with padding and the comic's size (version 2).
    var isPadded: Bool { version >= 2 }

    init(version: UInt16 = formatVersion, chunkSize: Int, fileID: VaultFileID, plaintextSize: UInt64) {
        self.version = version
        self.chunkSize = chunkSize
        self.fileID = fileID
        self.plaintextSize = plaintextSize
    }

    public var bytes: [UInt8] {
        var bytes = Self.magic
        bytes.appendBigEndian(version)
        bytes.appendBigEndian(Self.aesGCMChunks)
        bytes.appendBigEndian(UInt32(chunkSize))
        bytes += fileID.bytes
        bytes.appendBigEndian(plaintextSize)
        return bytes
    }

    /// Reads and parses the header of the object at `path`, WITHOUT authenticating it (that
    /// needs the key). This is how the daemon learns which file id, hence which key, an
    /// object wants; it should cross-check against the manifest entry, and
    /// `VaultObjectReader` authenticates the header when it opens the object.
    public static func read(path: String) throws(VaultError) -> VaultObjectHeader {
        let file = try FileDescriptor.regularFile(path)
        var bytes = [UInt8](repeating: 0, count: length)
        let count = try bytes.withMutableBytes { (buffer) throws(VaultError) in try file.read(into: buffer, at: 0) }
        return try parse(Array(bytes.prefix(count)), path: path)
    }

    static func parse(_ bytes: [UInt8], path: String) throws(VaultError) -> VaultObjectHeader {
        guard bytes.count >= length else {
            throw .damagedObject(path: path, detail: "shorter than its \(length)-byte header")
        }
        var reader = ByteReader(bytes)
        guard reader.read(magic.count) == magic else {
            throw .damagedObject(path: path, detail: "not an inkyfs vault object")
        }
        let version = reader.readBigEndian(UInt16.self)!
        guard readableVersions.contains(version) else { throw .unsupportedFormatVersion(path: path, version: version) }
        let algorithm = reader.readBigEndian(UInt16.self)!
        guard algorithm == aesGCMChunks else {
            throw .damagedObject(path: path, detail: "unknown algorithm id \(algorithm)")
        }
        let chunkSize = Int(reader.readBigEndian(UInt32.self)!)
        guard chunkSizeRange.contains(chunkSize) else {
            throw .damagedObject(path: path, detail: "chunk size \(chunkSize) outside \(chunkSizeRange)")
        }
        let fileID = VaultFileID(bytes: reader.read(VaultFileID.length)!)!
        let plaintextSize = reader.readBigEndian(UInt64.self)!
        return VaultObjectHeader(version: version, chunkSize: chunkSize, fileID: fileID, plaintextSize: plaintextSize)
    }
}
