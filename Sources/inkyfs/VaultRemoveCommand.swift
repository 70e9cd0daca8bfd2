import ArgumentParser
import Foundation
import InkyCore
import InkyVault
import InkyWorker

struct VaultRemove: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Decrypt comics out of the vault into a folder, verify them, then delete them from the vault."
    )
    @Argument(help: "Comics as `vault list` shows them (their path inside the vault).")
    var names: [String]
    @Option(help: ArgumentHelp("Where the comics go (default: the library of the running mount, else the current folder).", valueName: "dir"))
    var to: String?
    @OptionGroup var options: VaultOptions

    func run() throws {
        let mounts = ControlClient.statuses()
        var isFolder: ObjCBool = false
        let library = mounts.count == 1 ? mounts[0].library.flatMap {
            FileManager.default.fileExists(atPath: $0, isDirectory: &isFolder) && isFolder.boolValue ? $0 : nil
        } : nil
        let to = self.to ?? library ?? "."
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
            progress.update(done: done, current: "decrypting \(entry.originalFileName) (\(ByteCountText.format(Int64(entry.size))))")
            do throws(VaultError) {
                let written = try vault.remove(name: entry.name, to: absolutePath(to))
                progress.clear()
                print("restored \(written)")
            } catch {
                progress.clear()
                FileHandle.standardError.write(Data("inkyfs: \(name): \(error); it is still in the vault\n".utf8))
                failed = true
            }
        }
        if failed { throw ExitCode(ExitStatus.failed.rawValue) }
    }
}
