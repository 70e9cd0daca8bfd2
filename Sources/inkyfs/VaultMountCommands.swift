import ArgumentParser
import Foundation
import InkyCommandLine
import InkyCore
import InkyDaemon
import InkyVault

/// The mount a vault command talks to: the one named, or the only one running.
func runningMount(_ named: String?) throws -> String {
    // A runtime folder someone else could control: say so, before any password is asked for.
    if let problem = ControlClient.folderProblem() { throw CommandFailure(.refused, problem) }
    if let named { return absolutePath(named) }
    let mounts = ControlClient.runningMounts()
    guard mounts.count == 1 else {
        if mounts.isEmpty { throw CommandFailure(.notMounted, "no inkyfs mount is running (mount one with: inkyfs mount LIBRARY MOUNTPOINT)") }
        throw ValidationError("several mounts are running; name one: \(mounts.joined(separator: ", "))")
    }
    return mounts[0]
}

struct VaultUnlock: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unlock",
        abstract: "Show the vault under a running mount, as MOUNTPOINT/Vault/.",
        discussion: "The password goes to the daemon over its private control socket; it never appears in arguments or the environment."
    )
    @Argument(help: "The mount (default: the only one running).")
    var mountpoint: String?
    @Option(help: ArgumentHelp("Read the password from this file (first line) instead of the terminal.", valueName: "file"))
    var passwordFile: String?
    @Flag(help: "Open the vault even if its manifest is older than the newest one seen here (a backup restored on purpose).")
    var acceptRollback = false

    func run() throws {
        let mount = try runningMount(mountpoint)
        let password = try PasswordInput.read(prompt: "Password for the vault of the mount at \(mount): ", file: passwordFile)
        let reply: ControlReply
        do throws(ControlError) {
            reply = try password.withUnsafeBytes { (raw) throws(ControlError) in
                try ControlClient.unlock(mount, password: raw, acceptingRollback: acceptRollback) { wait in
                    FileHandle.standardError.write(Data("inkyfs: after wrong passwords, waiting \(String(format: "%.1f", wait)) s\n".utf8))
                }
            }
        } catch {
            throw CommandFailure(.notMounted, "cannot reach the mount at \(mount): \(error)")
        }
        switch reply.outcome {
        case .ok: print(reply.message)
        case .wrongPassword:
            FileHandle.standardError.write(Data("inkyfs: wrong password\n".utf8))
            throw ExitCode(ExitStatus.refused.rawValue)
        case .throttled, .refused, .failed: throw CommandFailure(.refused, reply.message)
        }
    }
}

struct VaultLock: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lock",
        abstract: "Hide the vault again: its folder disappears and every decrypted byte is dropped.",
        discussion: "Without a mountpoint, locks it in every running mount that holds it unlocked: locking is never the wrong thing to do."
    )
    @Argument(help: "The mount (default: every running one that holds the vault unlocked).")
    var mountpoint: String?

    func run() throws {
        if mountpoint == nil {
            if let problem = ControlClient.folderProblem() { throw CommandFailure(.refused, problem) }
            let mounts = ControlClient.statuses()
            if mounts.isEmpty { throw CommandFailure(.notMounted, "no inkyfs mount is running (mount one with: inkyfs mount LIBRARY MOUNTPOINT)") }
            let unlocked = mounts.filter { $0.vaultUnlocked == true }.map(\.mountpoint)
            // Several running and none unlocked: each says so, as the one mount did before.
            for mount in unlocked.isEmpty ? mounts.map(\.mountpoint) : unlocked { try lock(mount, named: mounts.count > 1) }
            return
        }
        try lock(try runningMount(mountpoint), named: false)
    }

    private func lock(_ mount: String, named: Bool) throws {
        let reply: ControlReply
        do throws(ControlError) {
            reply = try ControlClient.send(.lock, to: mount)
        } catch {
            throw CommandFailure(.notMounted, "cannot reach the mount at \(mount): \(error)")
        }
        guard reply.outcome == .ok else { throw CommandFailure(.refused, reply.message) }
        print(named ? "\(mount): \(reply.message)" : reply.message)
    }
}

/// `inkyfs vault debug [MOUNTPOINT]`: the daemon's count of cached vault pages and live key
/// buffers, for tests and for a user who wants to see that a lock left nothing.
struct VaultDebug: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "debug", abstract: "Show what a mount holds of the vault (counts only).",
                                                    shouldDisplay: false)
    @Argument(help: "The mount (default: the only one running).")
    var mountpoint: String?

    func run() throws {
        let mount = try runningMount(mountpoint)
        do throws(ControlError) { print(try ControlClient.send(.debug, to: mount).message) } catch {
            throw CommandFailure(.notMounted, "cannot reach the mount at \(mount): \(error)")
        }
    }
}
