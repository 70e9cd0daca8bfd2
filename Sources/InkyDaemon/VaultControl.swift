import Foundation
import InkyCore
import InkyLibrary
import InkyVault
import InkyWorker

/// What the daemon does when `inkyfs vault unlock/lock/status` asks through the control socket.
enum VaultControl {
    static func handle(_ request: ControlRequest, password: UnsafeRawBufferPointer?, filesystem: LibraryFilesystem,
                       pool: WorkerPool, vaultDirectory: String?, mountpoint: String, settings: [String] = [], idleLockSeconds: Double = 0,
                       log: LogSink) -> ControlReply {
        func reply(_ outcome: ControlReply.Outcome, _ message: String) -> ControlReply {
            var reply = ControlReply(outcome: outcome, message: message, mountpoint: mountpoint, library: filesystem.libraryPath)
            reply.vaultUnlocked = filesystem.vault.isUnlocked
            reply.pid = getpid()
            reply.settings = settings
            reply.vaultDirectory = vaultDirectory
            if idleLockSeconds > 0, let idle = filesystem.vault.idleSeconds { reply.vaultLocksIn = max(0, idleLockSeconds - idle) }
            return reply
        }
        guard let vaultDirectory else { return reply(request == .status ? .ok : .failed, "this mount has no vault") }
        switch request {
        case .debug:
            let wiped = filesystem.vault.wipedPages
            return reply(.ok, "unlocked=\(filesystem.vault.isUnlocked) cachedVaultPages=\(filesystem.vault.cachedPages) liveKeyBuffers=\(SecureBytes.liveCount) keysInWorkers=\(pool.workersHoldingKeys)"
                         + " pagesDecryptedInDaemon=\(pool.vaultPagesDecryptedHere) wipedVaultPages=\(wiped.inPlace) wipedVaultPagesShared=\(wiped.shared)")
        case .status:
            // No vault made yet (`inkyfs vault init`): none to be locked or unlocked.
            if !filesystem.vault.isUnlocked, !FileManager.default.fileExists(atPath: vaultDirectory) {
                return reply(.ok, "this mount has no vault (none at \(vaultDirectory) yet)")
            }
            return reply(.ok, filesystem.vault.isUnlocked ? "vault unlocked" : "vault locked")
        case .lock:
            let wasUnlocked = filesystem.vault.lock()
            if wasUnlocked { log("vault locked") }
            return reply(.ok, wasUnlocked ? "vault locked" : "the vault was already locked")
        case .unlock, .unlockAcceptingRollback:
            if filesystem.vault.isUnlocked { return reply(.ok, "the vault is already unlocked" + shown(filesystem, mountpoint)) }
            guard let password else { return reply(.failed, "no password") }
            // Before any vault byte passes through the heap: freed buffers are overwritten.
            ProcessHardening.wipeFreedMemory()
            // Straight from the receive buffer into locked memory: no other copy is made.
            let secret = SecureBytes(count: password.count) { $0.copyMemory(from: password) }
            // The first comic's worker starts now, beside the password's derivation (~200 ms on
            // one CPU), not after it: the first listing then waits for no process start. One
            // only, so the derivation keeps its CPU on two. It holds no key until a comic's is sent.
            if Vault.holdsObjects(at: vaultDirectory) { pool.warmUpVaultWorkers(atMost: 1) }
            do throws(VaultError) {
                let vault = try Vault.unlock(at: vaultDirectory, password: secret,
                                             acceptRollback: request == .unlockAcceptingRollback)
                let count = (try? vault.entries.count) ?? 0
                // The others (a second for the first comic, the next comic's) wait for no process start either.
                if count > 0 { pool.warmUpVaultWorkers() }
                filesystem.vault.unlock(vault)
                log("vault unlocked")
                // Counts and random object names only: the log never learns a comic's name.
                let report = vault.unlockReport.lines
                for line in report { log("vault: \(line)") }
                return reply(.ok, (["vault unlocked: \(count) comic\(count == 1 ? "" : "s")" + shown(filesystem, mountpoint)] + report
                                   + [locking(after: idleLockSeconds)]).joined(separator: "\n"))
            } catch .wrongPassword {
                return reply(.wrongPassword, "wrong password")
            } catch {
                return reply(.failed, "\(error)")
            }
        }
    }

    /// ", shown in MOUNTPOINT/Vault/": where the unlocked vault is.
    private static func shown(_ filesystem: LibraryFilesystem, _ mountpoint: String) -> String {
        filesystem.vaultFolderName.map { ", shown in \(mountpoint)/\($0)/" } ?? ""
    }

    /// When the vault locks itself (`--vault-idle`), and how to lock it before.
    static func locking(after seconds: Double) -> String {
        guard seconds > 0 else { return "it stays unlocked until: inkyfs vault lock (or unmount; --vault-idle 0)" }
        let minutes = Int(seconds.rounded()) / 60
        let idle = Int(seconds.rounded()) % 60 != 0 ? "\(Int(seconds.rounded())) seconds"
            : minutes % 60 == 0 ? "\(minutes / 60) hour\(minutes == 60 ? "" : "s")" : "\(minutes) minute\(minutes == 1 ? "" : "s")"
        return "it locks itself after \(idle) without use; lock it now with: inkyfs vault lock"
    }
}
