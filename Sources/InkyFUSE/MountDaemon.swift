import Foundation
import InkyCore
import InkyLibrary
import InkyStore
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

    /// Serves until unmounted. Returns normally for a clean end (unmount or SIGTERM/SIGINT).
    public static func run(_ configuration: Configuration, log: @escaping @Sendable (String) -> Void,
                           ready: () -> Void) throws(FUSESession.Failure) {
        ProcessHardening.makeNonDumpable()
        ProcessHardening.releaseLargeBuffersEagerly()
        let pool = WorkerPool(configuration.workers)
        defer { pool.shutdown() }
        pool.warmUp(2)
        let state = configuration.statePath.map { StateDatabase.open(at: $0) }
        if let note = state?.recovery { log(note) }
        let filesystem = LibraryFilesystem(library: configuration.library, options: configuration.mount, backend: pool,
                                           state: state, log: log)
        filesystem.listSingleComicAhead()
        filesystem.startWatching()
        defer { filesystem.stopWatching() }
        let control = try? ControlServer(mountpoint: configuration.mountpoint) { request, password in
            VaultControl.handle(request, password: password, filesystem: filesystem, pool: pool,
                                vaultDirectory: configuration.vaultDirectory, mountpoint: configuration.mountpoint, log: log)
        }
        if control == nil { log("no control socket: inkyfs vault unlock/lock cannot reach this mount") }
        let idleLock = VaultIdleLock(after: configuration.vaultIdleSeconds, filesystem: filesystem, pool: pool, log: log)
        idleLock?.start()
        defer { idleLock?.stop() }
        defer {
            control?.stop()
            filesystem.lockVault()
        }
        let session = FUSESession(filesystem: filesystem, mountpoint: configuration.mountpoint,
                                  options: configuration.fuseOptions, log: log)
        let result = try session.run(ready: ready)
        log(result == 0 ? "unmounted \(configuration.mountpoint)" : "signal \(result): unmounted \(configuration.mountpoint)")
    }
}
