#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Synchronization

/// An open vault: its keys (in locked memory), its manifest, and an exclusive lock on its
/// directory. `lock()` forgets all of it.
///
/// Thread-safe. Changes (`add`, `remove`, `changePassword`) run one at a time; `entries`,
/// `reader(for:)` and `lock()` do not wait for a running `add` to finish encrypting,
/// only for its final manifest save. A `lock()` during an `add` makes that add fail with
/// `.locked`; its finished object is then swept into `orphans/` at the next unlock.
///
/// While unlocked, the names of the comics (display paths, file names) exist as ordinary
/// Swift strings in this process: accepted, since they are names only, and they are
/// dropped on `lock()`. Keys never leave `SecureBytes`.
public final class UnlockedVault: Sendable {
    public let directory: String
    /// What unlocking found and repaired.
    public let unlockReport: VaultUnlockReport

    struct State: Sendable {
        var keys: VaultKeys?
        var entries: [VaultEntry]
        var generation: UInt64
        var manifestImage: [UInt8]
        var keyFileImage: [UInt8]
        var directoryLock: VaultDirectoryLock?
    }

    let paths: VaultPaths
    let environment: VaultEnvironment
    let state: Mutex<State>
    private let changes = SerialSection()

    /// The name of this vault's record of the newest manifest (the rollback check).
    private let rollbackRecordID: String

    init(paths: VaultPaths, keys: VaultKeys, keyFileImage: [UInt8], loaded: VaultManifestStore.Loaded,
         report: VaultUnlockReport, lock: VaultDirectoryLock, environment: VaultEnvironment, rollbackRecordID: String) {
        self.paths = paths
        self.rollbackRecordID = rollbackRecordID
        directory = paths.root
        unlockReport = report
        self.environment = environment
        state = Mutex(State(keys: keys, entries: loaded.manifest.entries, generation: loaded.generation,
                            manifestImage: loaded.image, keyFileImage: keyFileImage, directoryLock: lock))
    }

    // MARK: Reading

    /// Every comic in the vault, in the order they were added.
    public var entries: [VaultEntry] {
        get throws(VaultError) {
            try state.withLock { (state) throws(VaultError) -> [VaultEntry] in
                guard state.keys != nil else { throw .locked }
                return state.entries
            }
        }
    }

    public var isLocked: Bool { state.withLock { $0.keys == nil } }

    /// The keys, for a daemon that derives per-object keys itself
    /// (`keys().objectKey(fileID:)`). Holding the result keeps the keys alive after `lock()`.
    public func keys() throws(VaultError) -> VaultKeys {
        try state.withLock { (state) throws(VaultError) -> VaultKeys in
            guard let keys = state.keys else { throw .locked }
            return keys
        }
    }

    /// Where the object of `entry` is stored (for handing to a worker with its key).
    public func objectPath(for entry: VaultEntry) -> String { paths.object(named: entry.name) }

    /// A random-access reader of `entry`'s plaintext, holding only that object's key.
    /// The manifest's own record of the entry is used (found by name), not the caller's copy.
    public func reader(for entry: VaultEntry) throws(VaultError) -> VaultObjectReader {
        let (keys, stored) = try state.withLock { (state) throws(VaultError) -> (VaultKeys, VaultEntry) in
            guard let keys = state.keys else { throw .locked }
            guard let stored = state.entries.first(where: { $0.name == entry.name }) else {
                throw .noSuchEntry(name: entry.name)
            }
            return (keys, stored)
        }
        return try Self.openReader(for: stored, keys: keys, path: paths.object(named: stored.name))
    }

    // MARK: Adding

    /// Encrypts the file at `path` into the vault, shown at `displayPath` (e.g.
    /// "Series/Issue 1.cbz"; if taken, "Series/Issue 1 (1).cbz" and so on).
    ///
    /// Order, each step durable before the next (see docs/vault-format.md):
    /// 1. object written to a temp file in objects/, fsync, renamed to its random name,
    ///    directory fsync;
    /// 2. the object is decrypted again and its SHA-256 compared with the source's;
    /// 3. the manifest listing it is saved (previous one kept as .prev);
    /// 4. return. Deleting the source is the caller's job, and safe only now.
    /// A crash before 3 leaves an orphan object (swept to orphans/ at the next unlock) and
    /// the source untouched.
    /// `keepsOrigin`: the manifest records the folder of `path` (absolute), where `remove` puts
    /// the comic back.
    @discardableResult
    public func add(file path: String, displayPath: String, keepsOrigin: Bool = false) throws(VaultError) -> VaultEntry {
        try addReturningSource(file: path, displayPath: displayPath, keepsOrigin: keepsOrigin).entry
    }

    /// `add`, and the `fstat` of the source as it was opened (what `moveIn` checks before deleting).
    func addReturningSource(file path: String, displayPath: String, keepsOrigin: Bool) throws(VaultError) -> (entry: VaultEntry, source: stat) {
        try changes.run { () throws(VaultError) -> (entry: VaultEntry, source: stat) in
            let keys = try self.keys()
            let requested = try DisplayPath.validateNew(displayPath)
            // Refuse an unusable path before writing anything, rather than leave an orphan.
            // (Checked again at the end: only that check's answer is recorded.)
            _ = try Self.uniqueDisplayPath(requested, among: entries)
            let (folder, originalName) = DurableFiles.split(path)
            guard DisplayPath.isValidFileName(originalName), !DisplayPath.hasControlCharacter(originalName) else {
                throw .invalidDisplayPath(DisplayPath.escaped(originalName), reason: "source file name is not usable")
            }
            let origin = keepsOrigin && VaultEntry.isValidOrigin(folder) ? folder : nil
            let randomness = environment.randomness
            let (name, fileID, objectKey, objectPath) = try newObject(keys: keys)
            let (size, sourceDigest, source) = try Self.encrypt(path, to: objectPath, key: objectKey, fileID: fileID,
                                                        randomness: randomness)
            CrashPoint.reach("add.object-published")
            do throws(VaultError) {
                let reader = try VaultObjectReader(path: objectPath, key: objectKey)
                let (readSize, digest) = try Self.digest(of: reader)
                guard readSize == size, digest == sourceDigest else {
                    throw .verificationFailed(path: objectPath, detail: "decrypted object differs from \(path)")
                }
            } catch {
                unlink(objectPath)  // our own unusable output, never user data
                throw error
            }
            CrashPoint.reach("add.verified")
            let dateAdded = Date(timeIntervalSince1970: environment.now().timeIntervalSince1970.rounded(.down))
            let added = try state.withLock { (state) throws(VaultError) -> VaultEntry in
                guard let keys = state.keys else { throw .locked }
                let displayPath = try Self.uniqueDisplayPath(requested, among: state.entries)
                let entry = VaultEntry(name: name, fileID: fileID, size: size, sha256: HexEncoding.encode(sourceDigest),
                                       displayPath: displayPath, originalFileName: originalName, dateAdded: dateAdded,
                                       originFolder: origin)
                try save(entries: state.entries + [entry], state: &state, keys: keys)
                CrashPoint.reach("add.manifest-saved")
                return entry
            }
            // The add is done; an object left in an older format now gets its turn (a failure
            // here leaves it as it was, and the next change tries again).
            try? migrateOldObjects(keys: keys)
            return (added, source)
        }
    }

    // MARK: Removing

    /// Decrypts the comic with object name `name` into `destinationDirectory` under its
    /// original file name (" (1)" etc. if taken), then removes it from the vault.
    /// Returns the path written.
    ///
    /// Order: decrypt to a temp file beside the destination (O_EXCL) → verify SHA-256 →
    /// fsync, rename (never over an existing file), directory fsync → manifest saved
    /// without the entry → object deleted. A crash at any point loses nothing: before the
    /// manifest save the comic is still in the vault; after it, the extracted copy is
    /// durable and a leftover object becomes an orphan.
    @discardableResult
    public func remove(name: String, to destinationDirectory: String) throws(VaultError) -> String {
        try changes.run { () throws(VaultError) -> String in
            let (keys, entry) = try state.withLock { (state) throws(VaultError) -> (VaultKeys, VaultEntry) in
                guard let keys = state.keys else { throw .locked }
                guard let entry = state.entries.first(where: { $0.name == name }) else { throw .noSuchEntry(name: name) }
                return (keys, entry)
            }
            guard DurableFiles.isDirectory(destinationDirectory) else {
                throw .io(path: destinationDirectory, operation: "open directory", errno: .init(ENOTDIR))
            }
            let objectPath = paths.object(named: entry.name)
            let reader = try Self.openReader(for: entry, keys: keys, path: objectPath)
            let destination = try Self.extract(reader, entry: entry, into: destinationDirectory)
            CrashPoint.reach("remove.extracted")
            try state.withLock { (state) throws(VaultError) in
                guard let keys = state.keys else { throw .locked }
                try save(entries: state.entries.filter { $0.name != name }, state: &state, keys: keys)
            }
            CrashPoint.reach("remove.manifest-saved")
            // If this fails the object is merely unreferenced; the next unlock moves it to
            // orphans/ and reports it. The removal itself has already succeeded.
            if unlink(objectPath) == 0 { try? DurableFiles.syncDirectory(paths.objects) }
            CrashPoint.reach("remove.object-deleted")
            try? migrateOldObjects(keys: keys)
            return destination
        }
    }

    // MARK: Password

    /// Re-wraps the master key under `new` (no object or manifest is re-encrypted).
    /// `old` must be the current password (one derivation to check it, one for `new`).
    /// `kdf` nil re-derives with today's default cost, or the current one if stronger (an
    /// older, weaker cost is never carried forward).
    /// The key file that worked until now is first written as `vault.key.prev`, then the
    /// new `vault.key` replaces the old, then `.prev` becomes a copy of the new one: a crash
    /// in between leaves a file that opens, and once done the old password opens nothing here.
    /// Note: this is not revocation. The master key is unchanged, so a copy of an old key
    /// file taken elsewhere still opens with the old password; a compromised password calls
    /// for a new vault.
    public func changePassword(old: SecureBytes, new: SecureBytes, kdf: VaultKDF? = nil) throws(VaultError) {
        try changes.run { () throws(VaultError) in
            let (keys, image) = try state.withLock { (state) throws(VaultError) -> (VaultKeys, [UInt8]) in
                guard let keys = state.keys else { throw .locked }
                return (keys, state.keyFileImage)
            }
            guard case .success(let current) = VaultKeyFile.parse(image) else {
                throw .damagedKeyFile(path: paths.keyFile, detail: "the key file in memory does not parse")
            }
            let checked = try current.unwrap(password: old)
            guard checked.constantTimeEquals(keys.masterKey) else {
                throw .damagedKeyFile(path: paths.keyFile, detail: "unwraps to a different master key")
            }
            let replacement = try VaultKeyFile.wrap(masterKey: keys.masterKey, password: new,
                                                    kdf: kdf ?? current.kdf.raisedToDefault,
                                                    randomness: environment.randomness)
            let written = try VaultKeyFileStore.write(replacement, previous: image, paths: paths)
            state.withLock { $0.keyFileImage = written }
        }
    }

    // MARK: Locking

    /// Forgets the keys (wiped as soon as no reader or caller holds them), the manifest
    /// and the directory lock. Every later call throws `.locked`. Readers already open keep
    /// their own object keys until they are released.
    public func lock() {
        state.withLock { state in
            state.keys = nil
            state.entries = []
            state.manifestImage = []
            state.keyFileImage = []
            state.directoryLock = nil
        }
    }

    // MARK: Steps

    /// A new object's random name and file id (in that order from the random stream: the
    /// known-answer fixture depends on it), its key and its path.
    func newObject(keys: VaultKeys) throws(VaultError) -> (name: String, fileID: VaultFileID, key: SecureBytes, path: String) {
        let name: String, fileID: VaultFileID
        do throws(CryptoError) {
            name = HexEncoding.encode(try environment.randomness.bytes(count: VaultEntry.nameLength))
            fileID = try VaultFileID.random(environment.randomness)
        } catch {
            throw .crypto(error)
        }
        return (name, fileID, try keys.objectKey(fileID: fileID), paths.object(named: name))
    }

    func save(entries: [VaultEntry], state: inout State, keys: VaultKeys) throws(VaultError) {
        let manifest = VaultManifest(entries: entries)
        let image = try VaultManifestStore.save(manifest, generation: state.generation + 1, current: state.generation,
                                                currentImage: state.manifestImage, paths: paths,
                                                key: keys.manifestKey, randomness: environment.randomness)
        state.entries = entries
        state.generation += 1
        state.manifestImage = image
        // After the manifest is durable; a record left behind (a crash here) is only older,
        // which the next unlock moves forward. Failing to write it must not fail the save.
        if let record = try? VaultRollbackRecord(generation: state.generation, manifest: image) {
            try? environment.rollbackRecords.store(record, id: rollbackRecordID)
        }
    }

    static let copyBufferSize = 1 << 20

    /// Streams `source` into a new object at `objectPath`; returns its size and SHA-256.
    private static func encrypt(
        _ source: String, to objectPath: String, key: SecureBytes, fileID: VaultFileID, randomness: RandomSource
    ) throws(VaultError) -> (UInt64, [UInt8], stat) {
        // Never through a symlink (the link, not the comic, would be deleted), never a FIFO.
        let input: FileDescriptor
        do { input = try FileDescriptor.regularFile(source) } catch {
            if case .io(_, _, let code) = error, code.code != EINVAL && code.code != ELOOP { throw error }
            throw .sourceChanged(path: source, detail: "not a regular file (a symbolic link, FIFO or device is never added)")
        }
        let info = try input.status()
        let size = UInt64(info.st_size)
        let writer = try VaultObjectWriter(path: objectPath, key: key, fileID: fileID, plaintextSize: size,
                                           chunkSize: VaultObjectHeader.defaultChunkSize, randomness: randomness)
        let hasher: SHA256Hasher
        do { hasher = try SHA256Hasher() } catch { throw .crypto(error) }
        var buffer = [UInt8](repeating: 0, count: copyBufferSize)
        defer { Wipe.array(&buffer) }
        var total: UInt64 = 0
        while true {
            let count = try buffer.withMutableBytes { (buffer) throws(VaultError) in try input.read(into: buffer) }
            if count == 0 { break }
            total += UInt64(count)
            guard total <= size else { throw .sourceChanged(path: source, detail: "grew while being added") }
            try buffer.withBytes { (bytes) throws(VaultError) in
                let piece = UnsafeRawBufferPointer(rebasing: bytes[0..<count])
                do throws(CryptoError) { try hasher.update(piece) } catch { throw .crypto(error) }
                try writer.write(piece)
            }
        }
        guard total == size else { throw .sourceChanged(path: source, detail: "shrank while being added") }
        try writer.finish()
        do { return (size, try hasher.finish(), info) } catch { throw .crypto(error) }
    }

    /// Decrypts all of `reader` sequentially; returns the byte count and SHA-256.
    static func digest(of reader: VaultObjectReader) throws(VaultError) -> (UInt64, [UInt8]) {
        try decrypt(reader) { _ throws(VaultError) in }
    }

    /// Feeds the whole plaintext to `sink` in order, hashing it on the way.
    static func decrypt(
        _ reader: VaultObjectReader, into sink: (UnsafeRawBufferPointer) throws(VaultError) -> Void
    ) throws(VaultError) -> (UInt64, [UInt8]) {
        let hasher: SHA256Hasher
        do { hasher = try SHA256Hasher() } catch { throw .crypto(error) }
        var buffer = [UInt8](repeating: 0, count: copyBufferSize)
        defer { Wipe.array(&buffer) }
        var offset: UInt64 = 0
        while offset < reader.size {
            let count = try buffer.withMutableBytes { (buffer) throws(VaultError) in try reader.read(at: offset, into: buffer) }
            try buffer.withBytes { (bytes) throws(VaultError) in
                let piece = UnsafeRawBufferPointer(rebasing: bytes[0..<count])
                do throws(CryptoError) { try hasher.update(piece) } catch { throw .crypto(error) }
                try sink(piece)
            }
            offset += UInt64(count)
        }
        do { return (offset, try hasher.finish()) } catch { throw .crypto(error) }
    }

    static func openReader(for entry: VaultEntry, keys: VaultKeys, path: String) throws(VaultError) -> VaultObjectReader {
        let reader = try VaultObjectReader(path: path, key: try keys.objectKey(fileID: entry.fileID))
        guard reader.header.fileID == entry.fileID, reader.size == entry.size else {
            throw .objectDoesNotMatchManifest(name: entry.name, detail:
                "header says \(reader.size) bytes, id \(reader.header.fileID); manifest \(entry.size), \(entry.fileID)")
        }
        return reader
    }

    /// `requested`, or its last component numbered until it collides with no comic and no
    /// folder. A folder of the path that is itself a comic cannot be fixed by renaming
    /// the file, so it is refused.
    private static func uniqueDisplayPath(_ requested: String, among entries: [VaultEntry]) throws(VaultError) -> String {
        let files = Set(entries.map(\.displayPath))
        let folders = Set(entries.flatMap { DisplayPath.folders(of: $0.displayPath) })
        if let clash = DisplayPath.folders(of: requested).first(where: files.contains) {
            throw .invalidDisplayPath(requested, reason: "'\(clash)' is a comic, not a folder")
        }
        return DisplayPath.uniquePath(requested) { files.contains($0) || folders.contains($0) }
    }
}
