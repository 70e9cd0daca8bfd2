import ArgumentParser
import Foundation
import InkyCommandLine
import InkyCore
import InkyLibrary
import InkyServe
import InkySync
import InkyTLS
import InkyWorker
import Logging
import Synchronization

/// `inkyfs-serve`: the HTTP server `inkyfs serve` becomes (execv, same arguments, same pid). Its
/// own executable so that only it maps Hummingbird, SwiftNIO and libssl; installed beside the worker in
/// PREFIX/libexec/inkyfs/. People type `inkyfs serve`, which shows the help and checks the options.
@main
struct InkyfsServe: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inkyfs serve",
        abstract: ServeOptions.abstract,
        discussion: ServeOptions.discussion,
        version: "inkyfs-serve \(InkyfsRelease.number)"
    )

    @OptionGroup var options: ServeOptions

    /// As `inkyfs` ends: a runtime error is one line after "inkyfs: " with its own status.
    static func main() {
        parseAndRun()
    }

    func run() throws {
        let library = absolutePath(options.library)
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: library, isDirectory: &isFolder), isFolder.boolValue else {
            throw CommandFailure(.refused, "\(library) is not a folder: serve a library folder")
        }
        let address = options.address
        let tls = try tlsContext(Logger(label: "inkyfs"))
        // Who may use the server: the accounts of `inkyfs account`, HTTP Basic and KOReader's sync.
        let state = options.stateOptions.open()
        let access: any ServeAccess = AccountAccess(authenticator: Authenticator(state: state), allowRegistration: options.allowRegistration)
        do throws(ServeRefusal) { try access.check(address) } catch {
            throw CommandFailure(.refused, "\(error)")
        }
        let logger = Logger(label: "inkyfs")
        var mountOptions = MountOptions(limits: options.limitOptions.limits, cacheBytes: Int(options.cacheSize))
        mountOptions.recordProgress = !options.noProgress
        mountOptions.vaultName = nil
        mountOptions.listingParallelism = options.workers
        mountOptions.listLibraryAhead = true
        mountOptions.readingListsDirectory = options.readingLists.map(absolutePath)
        mountOptions.covers = CoverCache()
        mountOptions.pageCache = ConvertedPageCache()
        // The library, opened once: the pool opens comics beneath it only, the library core lists it.
        let root = LibraryFilesystem.openRoot(library)
        var configuration = WorkerPool.Configuration(maxWorkers: options.workers, timeout: options.workerTimeout)
        configuration.libraryRoot = root.path
        // Pages fitted to a reader's width and covers are made by workers' image code.
        configuration.images = .every
        // Their stderr as log lines with levels, never raw in the log (libunarr's notes).
        configuration.workerOutput = { logger.write($0) }
        let pool = WorkerPool(configuration, root: root)
        defer { pool.shutdown() }
        let filesystem = LibraryFilesystem(root: root, options: mountOptions, backend: pool, state: state,
                                           log: { logger.write($0) })
        filesystem.startWatching()
        defer { filesystem.stopWatching() }
        defer { filesystem.finishStateWrites() }
        defer { mountOptions.pageCache?.finishWrites() }
        defer { filesystem.stopBackgroundWork() }
        let reader = LibraryReader(library: filesystem)
        filesystem.listLibraryAhead { count, seconds in
            if count > 0 { logger.info("listed \(count) comics ahead in \(String(format: "%.1f", seconds)) s") }
            // KOReader names a comic by a digest of its file: made once per comic, kept in the index.
            reader.finishStateWrites()
            let digested = reader.digestLibraryFiles()
            if digested > 0 { logger.info("digested \(digested) comics for KOReader's progress sync") }
        }
        let failure = Mutex<String?>(nil)
        let finished = DispatchSemaphore(value: 0)
        Task {
            do {
                try await InkyServer.run(reader: reader, address: address, access: access, tls: tls) { url in
                    logger.notice("serving \(library) at \(url)")
                    // A `Type=notify` unit (contrib/systemd/inkyfs-serve@.service) counts it started only now.
                    SystemdNotify.send("READY=1\nMAINPID=\(getpid())\nSTATUS=serving \(library) at \(url)")
                }
            } catch {
                failure.withLock { $0 = "\(error)" }
            }
            finished.signal()
        }
        finished.wait()
        SystemdNotify.send("STOPPING=1")
        if let message = failure.withLock({ $0 }) {
            throw CommandFailure(.refused, "cannot serve on \(address): \(message)")
        }
        logger.notice("stopped serving \(library)")
    }

    /// The certificate and key, read before anything starts: a mistake in them is said at once.
    private func tlsContext(_ logger: Logger) throws -> TLSServerContext? {
        guard let tlsCert = options.tlsCert, let tlsKey = options.tlsKey else { return nil }
        do throws(TLSError) {
            let context = try TLSServerContext(certificateChainFile: absolutePath(tlsCert), privateKeyFile: absolutePath(tlsKey))
            for warning in context.warnings { logger.warning("\(warning)") }
            return context
        } catch {
            throw CommandFailure(.refused, "cannot serve HTTPS: \(error)")
        }
    }
}
