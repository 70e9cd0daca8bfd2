import ArgumentParser
import Foundation
import InkyCommandLine
import InkyCore
import InkyDaemon

@main
struct Inkyfs: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inkyfs",
        abstract: "Mount a comic library as folders of page images.",
        discussion: """
            Every comic archive (CBZ/ZIP, CBR/RAR, CB7/7z, CBT/TAR) and every PDF appears as a folder of its \
            pages, 001.jpg, 002.png, ... in reading order, so any image viewer can page through it.

            Examples:
              inkyfs mount ~/Comics ~/mnt   mount it; inkyfs unmount ~/mnt ends it
              inkyfs scan ~/Comics          list every comic and its page count
              inkyfs pages "Issue 1.cbz"    show one comic's pages in reading order
              inkyfs status                 the mounts running now

            \(ExitStatus.help)
            """,
        version: InkyfsVersion.text,
        subcommands: [MountCommand.self, UnmountCommand.self, StatusCommand.self, VaultCommand.self, IndexCommand.self, ProgressCommand.self,
                      BookmarkCommand.self, AccountCommand.self, ScanCommand.self, PagesCommand.self, DoctorCommand.self, DuplicatesCommand.self, ServeCommand.self],
        // `inkyfs SOURCE MOUNTPOINT -o OPTIONS` is how mount.fuse3 runs a fuse.inkyfs fstab line.
        defaultSubcommand: MountCommand.self
    )

    /// ArgumentParser's own main, with three things it cannot do: a bare `inkyfs` shows the
    /// overview (no error line), an unknown first word is an unknown command rather than a
    /// library that does not exist, and a runtime error ends with its own status, unprefixed
    /// by the usage.
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        // A background mount's daemon, handed its command line parsed already.
        if let plan = MountPlanCoding.handedOver(arguments) {
            #if DEBUG
            MountPlanCoding.verify(plan, arguments: arguments)
            #endif
            plan.runDaemon()
        }
        if arguments.isEmpty {
            print(helpMessage())
            Foundation.exit(ExitStatus.ok.rawValue)
        }
        let names = configuration.subcommands.map { $0._commandName }
        if let message = CommandWords.unknown(arguments[0], commands: names.filter { !$0.hasPrefix("_") } + ["help"],
                                              hidden: names.filter { $0.hasPrefix("_") }) {
            FileHandle.standardError.write(Data("inkyfs: \(message)\n".utf8))
            Foundation.exit(ExitStatus.usage.rawValue)
        }
        // A background mount's daemon starts now, while this process parses: `MountCommand.run` hands it the plan.
        let plainMount = MountCommand.isPlainBackgroundMount(arguments, commands: names)
        if plainMount { DaemonLauncher.startEarly(arguments: arguments) }
        // `-o` settings of a mount become the flags they name, before the parser sees them.
        var parsed = arguments
        if arguments[0] == MountCommand._commandName || !names.contains(arguments[0]) && arguments[0] != "help" {
            do { parsed = try MountOptionList.expanding(arguments) } catch {
                let usage = "Usage: inkyfs \(MountCommand.usageString())\n  See 'inkyfs mount --help' for more information."
                FileHandle.standardError.write(Data("Error: \(error)\n\(usage)\n".utf8))
                Foundation.exit(ExitStatus.usage.rawValue)
            }
        }
        // A plain mount is parsed as `mount` alone: the root's parse reflects mount's ~50 options
        // once more, to learn whether it takes passthrough arguments (~1.5 ms of CPU, on the
        // mount's path). A line it refuses goes through the root's parse for the root's message.
        if plainMount, let mount = try? MountCommand.parseAsRoot(parsed[0] == MountCommand._commandName ? Array(parsed.dropFirst()) : parsed) {
            run(mount)
        }
        parseAndRun(parsed)
    }
}
