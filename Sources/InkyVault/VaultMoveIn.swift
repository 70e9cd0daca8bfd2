#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import InkyCore

extension UnlockedVault {
    /// A comic moved into the vault, and the identity of the original as it was encrypted (what
    /// its cached cover and pages are keyed by).
    public struct MovedIn: Sendable {
        public let entry: VaultEntry
        public let original: FileIdentity
    }

    /// Moves a comic into the vault: encrypted, decrypted again and compared by SHA-256 (`add`),
    /// and only then the original deleted, unless `keepOriginal`. On any failure before that the
    /// original is untouched; a crash between the two leaves both, never neither.
    ///
    /// The original is opened without following a symlink, and deleted with `unlinkat` in its
    /// folder only if it is still the file that was encrypted (device, inode, size, modification
    /// time): a file swapped in or changed meanwhile is kept. A delete that fails throws
    /// `.originalNotDeleted`; the comic is in the vault all the same. The manifest keeps the folder
    /// it came from (`VaultEntry.originFolder`, for an absolute `path`): `vault remove` puts it back there.
    public func moveIn(file path: String, displayPath: String, keepOriginal: Bool) throws(VaultError) -> MovedIn {
        let (entry, source) = try addReturningSource(file: path, displayPath: displayPath, keepsOrigin: true)
        let moved = MovedIn(entry: entry, original: FileIdentity(source))
        guard !keepOriginal else { return moved }
        try Self.deleteOriginal(path, encrypted: source, as: entry.displayPath)
        CrashPoint.reach("add.source-deleted")
        return moved
    }

    private static func deleteOriginal(_ path: String, encrypted: stat, as displayPath: String) throws(VaultError) {
        func kept(_ detail: String) -> VaultError { .originalNotDeleted(path: path, displayPath: displayPath, detail: detail) }
        let (folderPath, name) = DurableFiles.split(path)
        let folder: FileDescriptor
        do throws(VaultError) { folder = try FileDescriptor(path: folderPath, flags: O_RDONLY | O_DIRECTORY) } catch {
            throw kept("cannot open its folder: \(error)")
        }
        var now = stat()
        guard fstatat(folder.raw, name, &now, AT_SYMLINK_NOFOLLOW) == 0 else { throw kept("\(Errno.current)") }
        guard now.st_dev == encrypted.st_dev, now.st_ino == encrypted.st_ino, now.st_size == encrypted.st_size,
              now.st_mtim.tv_sec == encrypted.st_mtim.tv_sec, now.st_mtim.tv_nsec == encrypted.st_mtim.tv_nsec else {
            throw kept("it is no longer the file that was encrypted (replaced or changed since), so it was kept")
        }
        guard unlinkat(folder.raw, name, 0) == 0 else { throw kept("\(Errno.current)") }
        try? folder.sync()  // the delete made durable where the filesystem allows it
    }
}
