#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import InkyCore

/// An exclusive `flock` on the vault directory, held while a vault is unlocked (or being
/// created). Two unlocked instances would each sweep the other's half-written objects into
/// `orphans/` and overwrite each other's manifest; with the lock the second one is told
/// `.vaultBusy` instead. The kernel drops the lock when the descriptor closes, including
/// when the process dies, so a crash never leaves the vault stuck.
final class VaultDirectoryLock: Sendable {
    private let descriptor: Int32

    init(directory: String) throws(VaultError) {
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .io(path: directory, operation: "open", errno: .current) }
        let result = Syscall.retrying { flock(descriptor, LOCK_EX | LOCK_NB) }
        guard result == 0 else {
            let failure = errno
            close(descriptor)
            if failure == EWOULDBLOCK { throw .vaultBusy(path: directory) }
            throw .io(path: directory, operation: "flock", errno: Errno(failure))
        }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }
}
