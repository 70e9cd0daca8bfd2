import ArgumentParser
import InkyFUSE

struct UnmountCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unmount",
        abstract: "Unmount an inkyfs mount; its daemon then exits.",
        discussion: "The same as `fusermount3 -u MOUNTPOINT`. With --lazy, detaches now even if files are open."
    )

    @Argument(help: "Where the library is mounted.")
    var mountpoint: String

    @Flag(help: "Detach even while programs still use the mount (fusermount3 -u -z).")
    var lazy = false

    func run() throws {
        do throws(MountPreflight.Problem) {
            try MountPreflight.runFusermount("fusermount3", (lazy ? ["-u", "-z"] : ["-u"]) + [mountpoint])
        } catch {
            throw ValidationError("\(error)")
        }
    }
}
