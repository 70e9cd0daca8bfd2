import ArgumentParser
import Foundation
import InkyCommandLine
import InkyCore
import InkyDaemon
import InkyVault
import InkyWorker

struct VaultCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vault",
        abstract: "Keep comics in an encrypted vault (AES-256-GCM, password-derived key).",
        discussion: """
            Comics moved into the vault are stored as opaque encrypted objects; their names live only \
            in the encrypted manifest. Passwords are read from the terminal with no echo, or from \
            stdin or --password-file when not on a terminal; never from arguments or the environment.

            Examples:
              inkyfs vault init
              inkyfs vault add "Issue 1.cbz" --into "Private Series"
              inkyfs vault list
              inkyfs vault remove "Private Series/Issue 1.cbz" --to ~/Comics
            """,
        subcommands: [VaultInit.self, VaultAdd.self, VaultRemove.self, VaultList.self, VaultPasswd.self, VaultStatus.self,
                      VaultUnlock.self, VaultLock.self, VaultDebug.self]
    )
}

/// `--vault DIR` and `--password-file FILE`, on every vault command.
struct VaultOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The vault folder. Default: $XDG_DATA_HOME/inkyfs/vault.", valueName: "dir"))
    var vault: String?

    @Option(help: ArgumentHelp("Read the password from this file (first line) instead of the terminal.", valueName: "file"))
    var passwordFile: String?

    @Flag(help: "Open the vault even if its manifest is older than the newest one seen here (a backup restored on purpose).")
    var acceptRollback = false

    var directory: String { Self.directory(vault) }

    /// `--vault DIR`, or `$XDG_DATA_HOME/inkyfs/vault`.
    static func directory(_ vault: String?) -> String {
        vault.map(absolutePath) ?? XDGDirectories.data + "/vault"
    }

    /// Unlocks with one password prompt; a wrong password exits 2 after one derivation.
    func unlock() throws -> UnlockedVault {
        try refuseWhileAMountHoldsIt()
        return try unlock(with: PasswordInput.read(prompt: "Password for the vault at \(directory): ", file: passwordFile))
    }

    /// Before any password is asked for: a running mount that holds this vault unlocked (one
    /// holder at a time) is said at once, with what to do.
    func refuseWhileAMountHoldsIt() throws {
        let here = Self.resolved(directory)
        let holders = ControlClient.statuses().filter { $0.vaultUnlocked == true && $0.vaultDirectory.map(Self.resolved) == here }
        if !holders.isEmpty { throw Self.heldBy(holders.map(\.mountpoint)) }
    }

    private static func resolved(_ path: String) -> String { URL(fileURLWithPath: path).resolvingSymlinksInPath().path }

    private static func heldBy(_ mountpoints: [String]) -> CommandFailure {
        CommandFailure(.refused, "the vault is unlocked by " + (mountpoints.isEmpty ? "another process" : "the mount at \(mountpoints.joined(separator: ", "))")
                       + "; lock it first: inkyfs vault lock")
    }

    /// Unlocks with a password already read; wrong password: one line, exit 2.
    func unlock(with password: SecureBytes) throws -> UnlockedVault {
        ProcessHardening.makeNonDumpable()
        do throws(VaultError) {
            let vault = try Vault.unlock(at: directory, password: password, acceptRollback: acceptRollback)
            for line in vault.unlockReport.lines { FileHandle.standardError.write(Data("inkyfs: vault: \(line)\n".utf8)) }
            return vault
        } catch .wrongPassword {
            FileHandle.standardError.write(Data("inkyfs: wrong password\n".utf8))
            throw ExitCode(ExitStatus.refused.rawValue)
        } catch .vaultBusy {
            throw Self.heldBy(ControlClient.statuses().filter { $0.vaultUnlocked == true }.map(\.mountpoint))
        } catch {
            throw CommandFailure(.refused, "\(error)")
        }
    }
}

struct VaultInit: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "init", abstract: "Create an empty vault (asks for the password twice).")
    @OptionGroup var options: VaultOptions

    func run() throws {
        let password = try PasswordInput.readNew(file: options.passwordFile, vault: options.directory)
        do throws(VaultError) {
            try Vault.create(at: options.directory, password: password)
        } catch {
            throw CommandFailure(.refused, "\(error)")
        }
        print("created the vault at \(options.directory)")
    }
}

struct VaultAdd: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Encrypt comics into the vault, verify them, then delete the originals.",
        discussion: "Each comic is written, decrypted again and compared by SHA-256 before its original is deleted (kept with --keep). A name that exists already gets \" (1)\", \" (2)\", ... before the extension."
    )
    @Argument(help: "Comic files to move into the vault.")
    var comics: [String]
    @Option(help: ArgumentHelp("Folder inside the vault.", valueName: "folder"))
    var into: String?
    @Flag(help: "Keep the originals.")
    var keep = false
    @OptionGroup var options: VaultOptions
    @OptionGroup var state: StateOptions

    func validate() throws {
        if comics.isEmpty { throw ValidationError("name at least one comic") }
        for comic in comics where !FileManager.default.fileExists(atPath: comic) { throw CommandFailure(.refused, "\(comic): no such file") }
    }

    func run() throws {
        // Before the password is asked for: a link, a page of a mount or a file that is no comic
        // is named with what to give instead, and nothing is added.
        let mounts = ControlClient.statuses()
        let refusals = comics.compactMap { comic in VaultAddSource.refusal(comic, mounts: mounts).map { "inkyfs: \(DisplayPath.escaped(comic)): \($0)\n" } }
        guard refusals.isEmpty else {
            for line in refusals { FileHandle.standardError.write(Data(line.utf8)) }
            throw ExitCode(ExitStatus.refused.rawValue)
        }
        let vault = try options.unlock()
        defer { vault.lock() }
        var failed = false
        let progress = ProgressLine(total: comics.count, evenForOne: true)
        defer { progress.clear() }
        var moved: [String] = []
        defer { VaultAddCleanup.forget(moved, in: state) }
        for (done, comic) in comics.enumerated() {
            let name = (comic as NSString).lastPathComponent
            let size = (try? FileManager.default.attributesOfItem(atPath: comic)[.size] as? Int) ?? 0
            progress.update(done: done, current: "encrypting \(name) (\(ByteCountText.format(Int64(size))))")
            let display = into.map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "/")) + "/" + name } ?? name
            do throws(VaultError) {
                let paths = VaultAddCleanup.keys(of: comic)
                let added = try vault.moveIn(file: absolutePath(comic), displayPath: display, keepOriginal: keep)
                VaultAddCleanup.purgeCaches(of: paths, identity: added.original)
                if !keep { moved += paths }
                progress.clear()
                print("added \(added.entry.displayPath) (\(added.entry.size) bytes)\(keep ? "" : "; original deleted")")
            } catch {
                progress.clear()
                if case .originalNotDeleted(_, _, let detail) = error {
                    // In the vault, but the plaintext stays: an error, and its names are not forgotten.
                    FileHandle.standardError.write(Data("inkyfs: \(DisplayPath.escaped(comic)): added to the vault, but the original was NOT deleted: \(detail)\n".utf8))
                } else {
                    FileHandle.standardError.write(Data("inkyfs: \(DisplayPath.escaped(comic)): \(error); the original is untouched\n".utf8))
                }
                failed = true
            }
        }
        if failed { throw ExitCode(ExitStatus.failed.rawValue) }
    }
}

struct VaultList: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the comics in the vault.")
    @Flag(help: "Print JSON: an array of { path, size, added, sha256 }.")
    var json = false
    @OptionGroup var options: VaultOptions

    struct Row: Encodable {
        var path: String
        var size: UInt64
        var added: String
        var sha256: String
    }

    func run() throws {
        let vault = try options.unlock()
        defer { vault.lock() }
        let entries = try vault.entries.sorted { $0.displayPath < $1.displayPath }
        if json {
            let stamp = ISO8601DateFormatter()
            try JSONOutput.print(entries.map { Row(path: $0.displayPath, size: $0.size, added: stamp.string(from: $0.dateAdded), sha256: $0.sha256) })
            return
        }
        // Escaped: a name stored before control characters were refused must not drive the terminal.
        for entry in entries { print("\(String(entry.size).leftPadded(to: 12))  \(DisplayPath.escaped(entry.displayPath))") }
        print("\(entries.count) comic\(entries.count == 1 ? "" : "s")")
    }
}

struct VaultPasswd: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "passwd",
        abstract: "Change the vault password (re-wraps the key; no comic is re-encrypted).",
        discussion: "With --password-file, the file's first line is the current password and its second line the new one."
    )
    @OptionGroup var options: VaultOptions

    func run() throws {
        try options.refuseWhileAMountHoldsIt()
        // With a file: its first line is the current password, its second the new one.
        let fromFile = try options.passwordFile.map { try PasswordInput.lines(of: $0, count: 2) }
        let old = try fromFile?[0] ?? PasswordInput.read(prompt: "Current password for the vault at \(options.directory): ", file: nil)
        let vault = try options.unlock(with: old)
        defer { vault.lock() }
        let new = try fromFile?[1] ?? PasswordInput.readNew(file: nil, vault: options.directory)
        do throws(VaultError) { try vault.changePassword(old: old, new: new) } catch { throw CommandFailure(.refused, "\(error)") }
        print("password changed")
    }
}

struct VaultStatus: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "Say where the vault is and what it holds, without a password.")
    @Flag(help: ArgumentHelp("Print JSON: { vault, exists, objects, orphans, generation, mounts: [ { mountpoint, library, unlocked } ] }; "
                             + "generation is null unless the manifest is the one you last saw here."))
    var json = false
    @OptionGroup var options: VaultOptions

    struct Status: Encodable {
        struct Mount: Encodable {
            var mountpoint: String
            var library: String?
            var unlocked: Bool
        }

        var vault: String
        var exists: Bool
        var objects: Int
        var orphans: Int
        /// The manifest's generation, when it is the one this user last saw (no password needed).
        var generation: UInt64?
        var mounts: [Mount]

        enum CodingKeys: String, CodingKey { case vault, exists, objects, orphans, generation, mounts }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(vault, forKey: .vault)
            try container.encode(exists, forKey: .exists)
            try container.encode(objects, forKey: .objects)
            try container.encode(orphans, forKey: .orphans)
            try container.encode(generation, forKey: .generation) // null, not left out: the key is always there
            try container.encode(mounts, forKey: .mounts)
        }
    }

    func run() throws {
        let directory = options.directory
        let exists = FileManager.default.fileExists(atPath: directory + "/vault.key")
        let objects = (try? FileManager.default.contentsOfDirectory(atPath: directory + "/objects"))?.count ?? 0
        let orphans = (try? FileManager.default.contentsOfDirectory(atPath: directory + "/orphans"))?.count ?? 0
        let mounts = exists ? ControlClient.statuses() : []
        let generation = exists ? Vault.lastSeenGeneration(at: directory) : nil
        if json {
            try JSONOutput.print(Status(vault: directory, exists: exists, objects: objects, orphans: orphans, generation: generation,
                                        mounts: mounts.map {
                Status.Mount(mountpoint: $0.mountpoint, library: $0.library, unlocked: $0.vaultUnlocked == true)
            }))
            return
        }
        guard exists else {
            print("no vault at \(directory) (create one with: inkyfs vault init)")
            return
        }
        print("vault at \(directory): \(objects) encrypted object\(objects == 1 ? "" : "s")\(orphans > 0 ? ", \(orphans) in orphans/" : "")")
        // Without the password only a manifest seen here before can be named; any other is told at unlock.
        print(generation.map { "manifest: generation \($0), the one you last saw here" }
              ?? "manifest: not the one you last saw here (changed elsewhere, put back, or never unlocked here): unlock checks it")
        for mount in mounts { print("mount \(mount.mountpoint): \(mount.message)") }
    }
}
