import ArgumentParser
import InkyCommandLine
import InkyCore
import InkyFUSE

struct UnmountCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unmount",
        abstract: "Unmount an inkyfs mount; its daemon then exits.",
        discussion: """
            The same as `fusermount3 -u MOUNTPOINT`. While a program still uses the mount (an open page, a \
            shell whose working directory is in it) it is busy: the programs are named (exit 5), and --lazy \
            detaches it now, the daemon exiting once they let go. Nothing mounted there: exit 4.
            """
    )

    @Argument(help: "Where the library is mounted.")
    var mountpoint: String

    @Flag(help: "Detach even while programs still use the mount (fusermount3 -u -z).")
    var lazy = false

    func run() throws {
        let path = absolutePath(mountpoint)
        let real = MountPreflight.resolved(path)
        guard InkyfsMount.current().contains(where: { $0.mountpoint == real || $0.mountpoint == path }) else {
            let other = FilesystemKind.mountType(at: real)
            throw CommandFailure(.notMounted, "\(mountpoint) is not an inkyfs mount: "
                                 + (other.map { "it is a \($0) mount, not inkyfs's" } ?? "nothing is mounted there")
                                 + (StatusCommand.mounts().isEmpty ? "" : " (inkyfs status lists yours)"))
        }
        do throws(MountPreflight.Problem) {
            try MountPreflight.runFusermount("fusermount3", (lazy ? ["-u", "-z"] : ["-u"]) + [real])
        } catch {
            guard error.message.contains("busy") else { throw CommandFailure(.failed, "\(error)") }
            let holders = MountHolders.of(real)
            let names = holders.isEmpty ? "a program (none of yours that this user can see)"
                : holders.map { "\($0.name) (pid \($0.pid): \($0.how))" }.joined(separator: ", ")
            throw CommandFailure(.busy, "\(mountpoint) is busy: in use by \(names)\n"
                                 + "  fix: close \(holders.count == 1 ? "it" : "them"), or detach it now with: inkyfs unmount --lazy \(mountpoint)")
        }
    }
}
