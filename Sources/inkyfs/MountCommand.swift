import ArgumentParser
import Foundation
import InkyCore
import InkyFUSE
import InkyLibrary
import InkyWorker
import Logging

struct MountCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mount",
        abstract: "Mount a comic library: every comic becomes a folder of its pages.",
        discussion: """
            Returns once the mount answers; the daemon keeps running in the background and logs to \
            $XDG_STATE_HOME/inkyfs/ (~/.local/state/inkyfs/). Unmount with `inkyfs unmount MOUNTPOINT` \
            or `fusermount3 -u MOUNTPOINT`.

            Comic archives appear as directories named like the archive without its extension, holding \
            001.jpg, 002.png, … in reading order. A comic that cannot be read holds only ERROR.txt saying why.

            Examples:
              inkyfs mount ~/Comics ~/mnt
              inkyfs mount --foreground --cache-size 512M ~/Comics ~/mnt
              inkyfs mount -o allow_other ~/Comics /srv/comics     (needs user_allow_other in /etc/fuse.conf)
            """
    )

    @Argument(help: "The library folder, or one comic file.")
    var library: String

    @Argument(help: "An empty directory to mount on.")
    var mountpoint: String

    @Flag(help: "Stay attached and log to stderr instead of daemonizing.")
    var foreground = false

    @Option(name: .customShort("o"), help: ArgumentHelp("FUSE mount options, comma-separated (allow_other, nonempty, …).", valueName: "options"))
    var fuseOptions: [String] = []

    @Option(help: ArgumentHelp("Memory for decoded pages, across all comics, e.g. 256M.", valueName: "size"), transform: parseSize)
    var cacheSize: Int64 = 256 << 20

    @Option(help: "Pages kept on each side of the page being read.")
    var window: Int = 5

    @Option(help: "Pages read ahead of the page being read.")
    var prefetch: Int = 5

    @Option(help: "Archive-parsing worker processes.")
    var workers: Int = 4

    @Option(help: ArgumentHelp("Seconds a worker may make no progress before it is killed.", valueName: "seconds"))
    var workerTimeout: Double = 15

    @Flag(help: "Clear a stale mount left on MOUNTPOINT by a daemon that died.")
    var force = false

    @OptionGroup var limitOptions: LimitOptions

    @Option(help: .hidden)
    var readyFd: Int32?

    func validate() throws {
        guard window >= 0, prefetch >= 0 else { throw ValidationError("--window and --prefetch must be 0 or more") }
        guard workers >= 1 else { throw ValidationError("--workers must be at least 1") }
    }

    func run() throws {
        let library = absolute(self.library)
        let mountpoint = absolute(self.mountpoint)
        var options = fuseOptions.flatMap { $0.split(separator: ",").map(String.init) }
        let allowNonEmpty = options.contains("nonempty")
        options.removeAll { $0 == "nonempty" } // fuse3 mounts over non-empty directories; the check is ours
        do throws(MountPreflight.Problem) {
            try MountPreflight.check(library: library, mountpoint: mountpoint, allowNonEmpty: allowNonEmpty, force: force)
        } catch {
            report(ready: readyFd, "inkyfs: \(error)")
            throw ExitCode(2)
        }
        if !foreground && readyFd == nil {
            if let failure = DaemonLauncher.launch(arguments: Array(CommandLine.arguments.dropFirst()),
                                                   logPath: DaemonLauncher.logPath(for: mountpoint)) {
                FileHandle.standardError.write(Data((failure + "\n").utf8))
                throw ExitCode(1)
            }
            return
        }
        let logger = Logger(label: "inkyfs")
        let configuration = MountDaemon.Configuration(
            library: library, mountpoint: mountpoint, fuseOptions: options,
            mount: MountOptions(limits: limitOptions.limits, window: WindowPolicy(window: window, prefetch: prefetch), cacheBytes: Int(cacheSize)),
            workers: WorkerPool.Configuration(executable: ProcessSpawner.ownExecutable, maxWorkers: workers, timeout: workerTimeout))
        do throws(FUSESession.Failure) {
            try MountDaemon.run(configuration, log: { logger.info("\($0)") }) {
                logger.info("mounted \(library) on \(mountpoint)")
                report(ready: readyFd, "ready")
            }
        } catch {
            report(ready: readyFd, "inkyfs: \(error)")
            throw ExitCode(1)
        }
    }

    private func absolute(_ path: String) -> String {
        let url = URL(fileURLWithPath: path)
        return url.standardizedFileURL.path
    }

    /// Tells a waiting `inkyfs mount` (our parent) how startup went, or prints it when foreground.
    private func report(ready fd: Int32?, _ message: String) {
        guard let fd else {
            if message != "ready" { FileHandle.standardError.write(Data((message + "\n").utf8)) }
            return
        }
        let line = message + "\n"
        _ = line.withCString { write(fd, $0, strlen($0)) }
        close(fd)
    }
}
