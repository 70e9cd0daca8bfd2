import Foundation

/// The decrypted manifest payload: JSON (via Codable) so that it is easy to inspect with
/// the key in hand, extend with optional fields, and read from another language (the
/// known-answer test does, from Python).
struct VaultManifest: Codable, Equatable {
    /// Version of the payload schema, independent of the file format version.
    var version: Int = 1
    var entries: [VaultEntry] = []

    /// Sorted keys, no escaped slashes, ISO 8601 dates: one deterministic encoding, so the
    /// known-answer fixture is reproducible byte for byte.
    static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }

    static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }

    /// Checks that a decoded manifest is one we could have written: valid object names,
    /// display paths and file names, nothing listed twice. The manifest is authenticated,
    /// so this guards against our own bugs and keeps hostile-looking names (".." and the
    /// like) from ever reaching the filesystem layer.
    func validationFailure() -> String? {
        guard version == 1 else { return "payload version \(version)" }
        var names = Set<String>(), paths = Set<String>(), ids = Set<VaultFileID>()
        for entry in entries {
            guard VaultEntry.isValidName(entry.name) else { return "bad object name \(entry.name)" }
            guard HexEncoding.decode(entry.sha256)?.count == SHA256Hasher.digestLength else {
                return "bad sha256 for \(entry.name)"
            }
            guard (try? DisplayPath.validate(entry.displayPath)) == entry.displayPath else {
                return "bad display path for \(entry.name)"
            }
            guard DisplayPath.isValidFileName(entry.originalFileName) else {
                return "bad original file name for \(entry.name)"
            }
            if let origin = entry.originFolder, !VaultEntry.isValidOrigin(origin) { return "bad origin folder for \(entry.name)" }
            guard names.insert(entry.name).inserted, paths.insert(entry.displayPath).inserted,
                  ids.insert(entry.fileID).inserted else {
                return "duplicate entry \(entry.name)"
            }
        }
        return nil
    }
}
