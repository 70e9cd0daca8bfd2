import Foundation

/// One comic in the vault, as the manifest records it. The manifest is the only place
/// names live: on disk an object is a random hex name, its header a random file id.
public struct VaultEntry: Codable, Sendable, Hashable {
    /// The object's file name in `objects/`: 32 lowercase hex digits (16 random bytes).
    /// Random, not derived from the content or the name, so it reveals nothing.
    public let name: String
    public let fileID: VaultFileID
    /// Plaintext size in bytes.
    public let size: UInt64
    /// SHA-256 of the plaintext, lowercase hex: checked after every write and before
    /// every extraction.
    public let sha256: String
    /// Where the comic appears inside the mounted `Vault/`, e.g. "Series/Issue 1.cbz".
    public let displayPath: String
    /// The file name it had when added; extraction restores it.
    public let originalFileName: String
    /// Whole seconds (the manifest stores ISO 8601 without fractions).
    public let dateAdded: Date
    /// The absolute folder the comic was added from: where `vault remove` puts it back. Absent
    /// (nil, and not in the JSON) in entries added before the vault kept it.
    public let originFolder: String?

    public init(name: String, fileID: VaultFileID, size: UInt64, sha256: String,
                displayPath: String, originalFileName: String, dateAdded: Date, originFolder: String? = nil) {
        self.name = name
        self.fileID = fileID
        self.size = size
        self.sha256 = sha256
        self.displayPath = displayPath
        self.originalFileName = originalFileName
        self.dateAdded = dateAdded
        self.originFolder = originFolder
    }

    /// An origin the manifest may hold: an absolute path without NUL, at most 4,096 bytes.
    static func isValidOrigin(_ folder: String) -> Bool {
        folder.hasPrefix("/") && !folder.utf8.contains(0) && folder.utf8.count <= 4096
    }

    static let nameLength = 16

    static func isValidName(_ name: String) -> Bool {
        name.utf8.count == nameLength * 2 && HexEncoding.decode(name) != nil
    }
}
