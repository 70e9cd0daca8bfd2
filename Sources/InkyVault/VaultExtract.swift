#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import InkyCore

extension UnlockedVault {
    /// Decrypts into a file in `directory`, checks the hash, publishes it under the entry's
    /// original name (made unique). Returns the final path.
    ///
    /// The destination (often the library, which others may write) is reached once, as a
    /// descriptor; the plaintext goes into an unnamed `O_TMPFILE` of mode 0600 there, is verified
    /// and fsynced, then given its name with `linkat` (never over an existing file), and only then
    /// given the mode the umask allows (`fchmod` last): no one can open it by a name while it is
    /// being written or before it is whole. A filesystem without `O_TMPFILE` gets a 0600
    /// temporary name instead (O_EXCL, O_NOFOLLOW), renamed without replacing.
    static func extract(_ reader: VaultObjectReader, entry: VaultEntry, into directory: String) throws(VaultError) -> String {
        let folder = try FileDescriptor(path: directory, flags: O_RDONLY | O_DIRECTORY)
        let unnamed = O_WRONLY | 0o20_200_000 /* O_TMPFILE: __O_TMPFILE | O_DIRECTORY */
        let file: FileDescriptor
        do throws(VaultError) {
            file = try FileDescriptor(at: folder, name: ".", path: directory, flags: unnamed, mode: 0o600)
        } catch {
            guard case .io(_, _, let code) = error, [EOPNOTSUPP, EISDIR, EINVAL, ENOENT].contains(code.code) else { throw error }
            return try extractByName(reader, entry: entry, into: directory)
        }
        try decryptVerified(reader, entry: entry, into: file, label: directory)
        CrashPoint.reach("remove.verified")
        while true {
            let name = DisplayPath.unique(entry.originalFileName) { (candidate: String) -> Bool in
                var info = stat()
                return fstatat(folder.raw, candidate, &info, AT_SYMLINK_NOFOLLOW) == 0
            }
            if linkat(AT_FDCWD, "/proc/self/fd/\(file.raw)", folder.raw, name, AT_SYMLINK_FOLLOW) == 0 {
                try publish(file, in: folder)
                return DurableFiles.join(directory, name)
            }
            // Someone created the chosen name meanwhile: take the next free one.
            guard errno == EEXIST else { throw .io(path: DurableFiles.join(directory, name), operation: "link", errno: .current) }
        }
    }

    /// The fallback: a 0600 temporary name beside the destination, published without replacing.
    private static func extractByName(_ reader: VaultObjectReader, entry: VaultEntry, into directory: String) throws(VaultError) -> String {
        let firstChoice = DisplayPath.unique(entry.originalFileName) { DurableFiles.exists(DurableFiles.join(directory, $0)) }
        let (file, temporary) = try DurableFiles.createTemporary(besides: DurableFiles.join(directory, firstChoice), mode: 0o600)
        do throws(VaultError) {
            try decryptVerified(reader, entry: entry, into: file, label: temporary)
            try publish(file, in: nil)
            while true {
                let name = DisplayPath.unique(entry.originalFileName) { DurableFiles.exists(DurableFiles.join(directory, $0)) }
                let destination = DurableFiles.join(directory, name)
                do {
                    try DurableFiles.publishWithoutReplacing(temporary, as: destination)
                    return destination
                } catch .io(_, _, let code) where code.code == EEXIST {
                    continue
                }
            }
        } catch {
            unlink(temporary)
            throw error
        }
    }

    private static func decryptVerified(_ reader: VaultObjectReader, entry: VaultEntry, into file: FileDescriptor,
                                        label: String) throws(VaultError) {
        let (_, digest) = try decrypt(reader) { (piece) throws(VaultError) in try file.writeAll(piece) }
        guard HexEncoding.encode(digest) == entry.sha256 else {
            throw .verificationFailed(path: label, detail: "SHA-256 differs from the manifest's")
        }
        try file.sync()
    }

    /// The mode any new file would get (0666 less the umask), set last; then the folder fsynced.
    /// (umask is read by setting it back at once: `vault remove` runs this on its only thread.)
    private static func publish(_ file: FileDescriptor, in folder: FileDescriptor?) throws(VaultError) {
        let mask = umask(0o022)
        umask(mask)
        guard fchmod(file.raw, 0o666 & ~mask) == 0 else { throw .io(path: file.path, operation: "fchmod", errno: .current) }
        try folder?.sync()
    }
}
