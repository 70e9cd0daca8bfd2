import Foundation
import InkyCommandLine
import InkyCore
import InkyFUSE
import InkyLibrary
import InkyMount
import InkyStore
import InkyTree
import InkyVault
import InkyWorker

/// The daemon: a worker pool for archive parsing, the library filesystem over it, and the
/// FUSE session serving it until unmounted or signalled.
public enum MountDaemon {
    public struct Configuration: Sendable {
        public var library: String
        public var mountpoint: String
        public var fuseOptions: [String]
        public var mount: MountOptions
        public var workers: WorkerPool.Configuration
        /// The state database file (index, reading state); nil runs without one.
        public var statePath: String?
        /// The vault `inkyfs vault unlock` opens under this mount; nil: no vault.
        public var vaultDirectory: String?
        /// Seconds without vault use before it locks itself; 0 never.
        public var vaultIdleSeconds: Double = 15 * 60
        /// The settings that differ from the defaults, as `inkyfs status` shows them.
        public var settings: [String] = []

        public init(library: String, mountpoint: String, fuseOptions: [String], mount: MountOptions,
                    workers: WorkerPool.Configuration, statePath: String?, vaultDirectory: String? = nil) {
            self.library = library
            self.mountpoint = mountpoint
            self.fuseOptions = fuseOptions
            self.mount = mount
            self.workers = workers
            self.statePath = statePath
            self.vaultDirectory = vaultDirectory
        }
    }

    /// Makes this process fit to be the daemon before anything else runs: with malloc's
    /// per-thread caches off, so that freed memory can be wiped once a vault is unlocked
    /// (`ProcessHardening.wipeFreedMemory`). A mount in the background was started so; one in
    /// the foreground runs itself again. Returns why it could not, nil when it is fit.
    public static func prepareProcess() -> String? {
        ProcessHardening.restartWithFreedMemoryTunables()
        guard ProcessHardening.startedWithFreedMemoryTunables else {
            return "cannot restart with \(ProcessHardening.freedMemoryTunables): small freed buffers may keep vault plaintext after lock"
        }
        return nil
    }

    /// Serves until unmounted, then ends the process with status 0 (unmount or SIGTERM/SIGINT:
    /// both clean ends); throws only when it could not mount. `warn` gets what the person
    /// mounting must hear before `ready` (also logged).
    public static func run(_ configuration: Configuration, log: @escaping LogSink,
                           warn: (String) -> Void = { _ in }, ready: () -> Void) throws(FUSESession.Failure) -> Never {
        let served = try serve(configuration, log: log, warn: warn, ready: ready)
        // What must outlive the process is done by now: reading state written and synced, the
        // workers exited, the control socket removed. What is left is memory (the index's
        // caches, folder tables, views), which the kernel takes back at once: freeing it one
        // object at a time took about 10 ms of CPU at 20,000 comics, most of the daemon's exit.
        withExtendedLifetime(served) { exit(0) }
    }

    /// Serves until unmounted; returns what it made, not yet freed.
    private static func serve(_ configuration: Configuration, log: @escaping LogSink,
                              warn: (String) -> Void, ready: () -> Void) throws(FUSESession.Failure) -> [AnyObject] {
        ProcessHardening.makeNonDumpable()
        ProcessHardening.releaseLargeBuffersEagerly()
        // The library, opened once: the pool opens comics beneath it only (ConfinedFile), the
        // library core lists it, and whether it is a folder chooses which workers load libvips.
        let root = LibraryFilesystem.openRoot(configuration.library)
        var workers = configuration.workers
        workers.libraryRoot = root.path
        // Comics come from the library and the vault's objects, opened here and passed to workers.
        workers.alsoReadable = configuration.vaultDirectory.map { [$0 + "/objects"] } ?? []
        // A root mount's workers are not root, where that leaves them able to read the library.
        if geteuid() == 0 {
            if let reason = PrivilegeDrop.reasonToKeepRoot(for: [configuration.library] + workers.alsoReadable) {
                log(.info("workers run as root: \(reason)"))
            } else {
                workers.dropRoot = true
            }
        }
        // Their stderr as log lines with levels, never raw in the log (libunarr's notes).
        workers.workerOutput = log
        // Only a worker that converts pages or makes covers loads libvips (about 20 ms of CPU at
        // each start): covers are made for folders, so a mount of one comic file needs none unless
        // it converts, and a library's listings and plain reads start workers without it.
        if configuration.mount.limits.rendering.conversion.isActive {
            workers.images = .every
        } else if configuration.mount.covers != nil && root.isFolder {
            workers.images = .forCovers
        }
        let pool = WorkerPool(workers, root: root)
        // Last: the workers have exited when the daemon does (their zombies, reaped by whoever
        // adopts them, are not left running).
        defer { pool.shutdown(reaping: false) }
        if root.isFolder {
            pool.warmUp(2)
        } else {
            // One comic file: its listing comes at once, and one worker serves it (stored pages are
            // read here), started now, before the state database opens, and in the pool before
            // the listing asks: a second would start beside it on the same two CPUs.
            _ = pool.startIdle()
        }
        let state = configuration.statePath.map { StateDatabase.open(at: $0) }
        if let note = state?.recovery { log(.warning(note)) }
        if let state, state.isInMemory {
            // Serving without the index beats refusing: the library is read as if for the first time.
            warn("inkyfs: warning: \(state.recovery ?? "the state database cannot be used"); "
                 + "the library is served without its index and reading progress is not saved")
        }
        let filesystem = LibraryFilesystem(root: root, options: configuration.mount, backend: pool,
                                           state: state, log: log)
        filesystem.listSingleComicAhead()
        filesystem.startWatching()
        defer {
            filesystem.finishStateWrites()
            state?.checkpoint()
        }
        // The watcher is told to stop before the last writes are finished and synced.
        defer { filesystem.stopWatching() }
        // Pages converted last are still being written: a remount finds them. A cover being
        // written is finished, and none is started after (its temporary file would stay).
        defer {
            configuration.mount.pageCache?.finishWrites()
            configuration.mount.covers?.finishWrites()
        }
        let opened = Result { () throws(ControlError) in
            try ControlServer(mountpoint: configuration.mountpoint, log: log) { request, password in
                VaultControl.handle(request, password: password, filesystem: filesystem, pool: pool,
                                    vaultDirectory: configuration.vaultDirectory, mountpoint: configuration.mountpoint,
                                    settings: configuration.settings, idleLockSeconds: configuration.vaultIdleSeconds, log: log)
            }
        }
        let control = try? opened.get()
        if case .failure(let problem) = opened {
            log(.warning("no control socket: inkyfs vault unlock/lock cannot reach this mount: \(problem)"))
            if configuration.vaultDirectory != nil { warn("inkyfs: warning: the vault cannot be unlocked on this mount: \(problem)") }
        }
        let idleLock = VaultIdleLock(after: configuration.vaultIdleSeconds, filesystem: filesystem, log: log)
        idleLock?.start()
        defer { idleLock?.stop() }
        defer {
            control?.stop()
            filesystem.vault.lock()
        }
        // The tree the kernel sees: the library with the views' folders at its root.
        let numbered = NumberedLibrary(filesystem)
        let mounted = MountComposition(sourcePath: numbered.sourcePath, base: numbered, views: numbered.standardViews())
        let session = FUSESession(filesystem: mounted, mountpoint: configuration.mountpoint,
                                  options: configuration.fuseOptions, log: log)
        defer {
            filesystem.stopBackgroundWork()
            // First: the workers end side by side with the writes the defers above finish;
            // `pool.shutdown()`, the last of them, reaps them.
            pool.beginShutdown()
        }
        let result = try session.run {
            ready()
            filesystem.listLibraryAhead { count, seconds in
                if count > 0 { log("listed \(count) comics ahead in \(String(format: "%.1f", seconds)) s") }
            }
            // A `Type=notify` unit (contrib/inkyfs@.service) starts what depends on the mount only now.
            SystemdNotify.send("READY=1\nMAINPID=\(getpid())\nSTATUS=serving \(configuration.library) on \(configuration.mountpoint)")
        }
        SystemdNotify.send("STOPPING=1")
        log(result == 0 ? "unmounted \(configuration.mountpoint)" : "signal \(result): unmounted \(configuration.mountpoint)")
        let optional: [AnyObject?] = [state, control, idleLock]
        return [pool, filesystem, mounted, session] + optional.compactMap { $0 }
    }
}
