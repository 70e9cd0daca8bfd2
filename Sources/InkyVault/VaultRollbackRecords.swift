#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import InkyCore

/// The newest manifest this user has seen of each vault, kept OUTSIDE the vault
/// (`$XDG_STATE_HOME/inkyfs/vaults/<record id>`), so that someone who can write the vault
/// folder cannot silently put an older copy back: the manifest's generation alone cannot
/// tell, since an old copy authenticates as well as a new one.
///
/// A record is two lines, `generation N` and `sha256 HEX` (of the whole `manifest.bin`).
/// Its file name is derived from the master key (`VaultKeys.rollbackRecordID`): the same
/// vault moved or copied elsewhere finds its record, and the name says nothing about the
/// vault to anyone without the key.
struct VaultRollbackRecord: Equatable, Sendable {
    var generation: UInt64
    var manifestSHA256: [UInt8]

    init(generation: UInt64, manifestSHA256: [UInt8]) {
        self.generation = generation
        self.manifestSHA256 = manifestSHA256
    }

    init(generation: UInt64, manifest image: [UInt8]) throws(VaultError) {
        self.generation = generation
        do { manifestSHA256 = try SHA256Hasher.hash(image) } catch { throw .crypto(error) }
    }

    var encoded: [UInt8] { Array("generation \(generation)\nsha256 \(HexEncoding.encode(manifestSHA256))\n".utf8) }

    static func parse(_ bytes: [UInt8]) -> VaultRollbackRecord? {
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
        guard lines.count == 2, lines[0].hasPrefix("generation "), lines[1].hasPrefix("sha256 "),
              let generation = UInt64(lines[0].dropFirst("generation ".count)),
              let digest = HexEncoding.decode(String(lines[1].dropFirst("sha256 ".count))),
              digest.count == SHA256Hasher.digestLength else { return nil }
        return VaultRollbackRecord(generation: generation, manifestSHA256: digest)
    }

    /// Why `loaded` is not acceptable after this record, nil when it is: an older
    /// generation, or the same generation with other bytes (a copy that went its own way).
    func refusal(of loaded: VaultRollbackRecord) -> String? {
        if loaded.generation < generation {
            return "the manifest is at generation \(loaded.generation), but this user last saw generation \(generation)"
        }
        if loaded.generation == generation, loaded.manifestSHA256 != manifestSHA256 {
            return "the manifest at generation \(generation) is not the one this user last saw"
        }
        return nil
    }
}

/// Where the records live; nil `directory` keeps none (the known-answer fixture's generator).
struct VaultRollbackRecords: Sendable {
    let directory: String?

    static var standard: VaultRollbackRecords { VaultRollbackRecords(directory: XDGDirectories.state + "/vaults") }

    /// The record, nil when there is none. One that does not parse counts as none: it can only
    /// have been damaged (an attacker able to write here could as well delete it).
    func load(id: String) -> VaultRollbackRecord? {
        guard let directory,
              let bytes = try? DurableFiles.read(DurableFiles.join(directory, id), limit: 4096) else { return nil }
        return VaultRollbackRecord.parse(bytes)
    }

    func store(_ record: VaultRollbackRecord, id: String) throws(VaultError) {
        guard let directory else { return }
        if !DurableFiles.isDirectory(directory) { try DurableFiles.makeDirectories(directory) }
        try DurableFiles.replace(DurableFiles.join(directory, id), with: record.encoded)
    }
}

extension Vault {
    /// The generation of the manifest now in `directory`, told without the password: known
    /// when it is byte for byte the manifest this user last saw (a rollback record, outside the
    /// vault, holds its digest and generation); nil when it is not (changed elsewhere since, or
    /// put back, or never unlocked here), which only an unlock can tell apart.
    public static func lastSeenGeneration(at directory: String) -> UInt64? {
        lastSeenGeneration(at: directory, records: VaultRollbackRecords.standard.directory ?? "")
    }

    static func lastSeenGeneration(at directory: String, records: String) -> UInt64? {
        guard let image = try? DurableFiles.read(VaultPaths(root: directory).manifest, limit: VaultManifestFile.readLimit),
              let digest = try? SHA256Hasher.hash(image),
              let names = try? DurableFiles.names(in: records) else { return nil }
        let store = VaultRollbackRecords(directory: records)
        return names.lazy.compactMap { store.load(id: $0) }.first { $0.manifestSHA256 == digest }?.generation
    }
}
