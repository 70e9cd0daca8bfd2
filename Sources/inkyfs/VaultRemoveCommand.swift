import ArgumentParser
import Foundation
import InkyCommandLine
import InkyCore
import InkyDaemon
import InkyVault

struct VaultRemove: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Decrypt comics out of the vault into a folder, verify them, then delete them from the vault.",
        discussion: """
            Each comic goes back to the folder it was added from (the vault keeps it, encrypted), unless --to \
            names another. A comic added before the vault kept its folder, or whose folder is gone, goes to \
            the library of the running mount, else the current folder, and the command says so.
            """
    )
    @Argument(help: "Comics as `vault list` shows them (their path inside the vault).")
    var names: [String]
    @Option(help: ArgumentHelp("Where the comics go (default: the folder each was added from).", valueName: "dir"))
    var to: String?
    @OptionGroup var options: VaultOptions

    func run() throws {
        // Before the password is asked for: a folder that is not there is said at once.
        if let to, !Self.isFolder(to) {
            throw CommandFailure(.refused, "--to \(DisplayPath.escaped(to)): " + (FileManager.default.fileExists(atPath: to)
                ? "not a folder" : "no such folder (make it first: mkdir -p \(DisplayPath.escaped(to)))"))
        }
        let mounts = ControlClient.statuses()
        // Where comics whose folder is unknown or gone go: the running mount's library, else here.
        let fallback = (mounts.count == 1 ? mounts[0].library.flatMap { Self.isFolder($0) ? $0 : nil } : nil) ?? "."
        let vault = try options.unlock()
        defer { vault.lock() }
        var failed = false
        let progress = ProgressLine(total: names.count, evenForOne: true)
        defer { progress.clear() }
        for (done, name) in names.enumerated() {
            guard let entry = try vault.entries.first(where: { $0.displayPath == name || $0.originalFileName == name }) else {
                progress.clear()
                FileHandle.standardError.write(Data("inkyfs: \(name): not in the vault\n".utf8))
                failed = true
                continue
            }
            let destination = to ?? destination(of: entry, fallback: fallback, progress: progress)
            progress.update(done: done, current: "decrypting \(entry.originalFileName) (\(ByteCountText.format(Int64(entry.size))))")
            do throws(VaultError) {
                let written = try vault.remove(name: entry.name, to: absolutePath(destination))
                progress.clear()
                print("restored \(DisplayPath.escaped(written))")
            } catch {
                progress.clear()
                FileHandle.standardError.write(Data("inkyfs: \(name): \(error); it is still in the vault\n".utf8))
                failed = true
            }
        }
        if failed { throw ExitCode(ExitStatus.failed.rawValue) }
    }

    /// The folder `entry` was added from, when the vault knows it and it is still there; else
    /// `fallback`, saying why.
    private func destination(of entry: VaultEntry, fallback: String, progress: ProgressLine) -> String {
        if let origin = entry.originFolder, Self.isFolder(origin) { return origin }
        let why = entry.originFolder.map { "the folder it was added from, \(DisplayPath.escaped($0)), is gone" }
            ?? "added before the vault kept where comics came from"
        progress.clear()
        FileHandle.standardError.write(Data("inkyfs: \(DisplayPath.escaped(entry.displayPath)): \(why); restoring it into \(absolutePath(fallback)) (--to DIR puts it elsewhere)\n".utf8))
        return fallback
    }

    static func isFolder(_ path: String) -> Bool {
        var isFolder: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) && isFolder.boolValue
    }
}
