import ArgumentParser
import Foundation
import InkyCore
import InkyLibrary
import InkyServe
import InkySync
import InkyTLS
import InkyWorker
import Logging
import Synchronization

struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve a comic library over HTTP or HTTPS: an OPDS catalog, page streaming, CBZ downloads.",
        discussion: """
            For e-readers, tablets and phones, which cannot mount: KOReader, Panels, Chunky, Librera, \
            Thorium and other OPDS readers browse the catalog at http://ADDR:PORT/opds. Every comic, whatever \
            its format (CBZ, CBR, CB7, CBT, PDF, a folder of images), downloads as the CBZ `mount --as cbz` \
            serves, and streams page by page (OPDS-PSE, fitted to the reader's width). The catalog mirrors \
            the mount: Folders, By Series, By Publisher, Story Arcs, Reading Lists, Continue Reading, Recently \
            Added, and a search.

            Runs in the foreground until Ctrl-C or SIGTERM; logs one line with its URL. It shares the index \
            and the reading state with any mount of the same library: a page streamed counts as read, and \
            shows in Continue Reading/ and `inkyfs progress`. The vault is never served.

            Listens on 127.0.0.1:8190 unless told otherwise. Any other address than loopback is refused while \
            no account exists: without one, anyone who reaches the port reads the library.

            HTTPS: --tls-cert and --tls-key give a certificate (chain) and its private key, PEM files \
            (from Let's Encrypt: fullchain.pem and privkey.pem), read once at start; the URL is then \
            https://ADDR:PORT/opds, and plain HTTP on that port is answered 400. Over a network, serve \
            HTTPS: accounts log in with HTTP Basic, which plain HTTP carries readable. The key must not \
            be encrypted with a passphrase (there is no one to type it); it should be readable by you \
            alone (chmod 600). Without a certificate, an SSH tunnel also does: \
            ssh -L 8190:127.0.0.1:8190 HOST.

            Accounts (`inkyfs account add NAME`): with any, every request needs one, HTTP Basic for the \
            catalog and downloads; failed logins are throttled (429 with Retry-After, per address and per \
            account). KOReader's progress sync speaks to the same server: in KOReader, Progress sync > Custom \
            sync server http://ADDR:PORT, then Login with an account's name and password. A comic downloaded \
            from the catalog (or its original file) is found by KOReader's document digest, and its progress \
            moves the same reading state as the mount's, both ways.

            Examples:
              inkyfs serve ~/Comics                          http://127.0.0.1:8190/opds
              inkyfs serve --listen 127.0.0.1:9000 ~/Comics
              inkyfs account add kobo; inkyfs serve --listen 0.0.0.0:8190 ~/Comics
              inkyfs serve --listen 0.0.0.0:8443 --tls-cert fullchain.pem \\
                           --tls-key privkey.pem ~/Comics    https://HOST:8443/opds
              systemctl --user enable --now inkyfs-serve@$(systemd-escape ~/Comics)
            """
    )

    @Argument(help: "The library folder.")
    var library: String

    @Option(help: ArgumentHelp("Address and port to listen on: 127.0.0.1:8190, [::1]:8190, or a port alone (loopback). "
                               + "Port 0 takes a free one (the log line tells which).", valueName: "addr:port"))
    var listen = ListenAddress.standard.description

    @Option(help: ArgumentHelp("Serve HTTPS with this certificate: a PEM file, the server's certificate first, then "
                               + "its intermediates (fullchain.pem). Needs --tls-key.", valueName: "file"))
    var tlsCert: String?

    @Option(help: ArgumentHelp("The certificate's private key: a PEM file, not encrypted, readable by you alone. "
                               + "Needs --tls-cert.", valueName: "file"))
    var tlsKey: String?

    @Option(help: "Archive-parsing worker processes.")
    var workers: Int = 4

    @Option(help: ArgumentHelp("Seconds a worker may make no progress before it is killed.", valueName: "seconds"))
    var workerTimeout: Double = 15

    @Option(help: ArgumentHelp("Memory for decoded pages, across all comics, e.g. 512M. (default: 256M)", valueName: "size"),
            transform: parseSize)
    var cacheSize: Int64 = 256 << 20

    @Option(help: ArgumentHelp("A folder of ComicRack reading lists (.cbl) shown in Reading Lists, besides those in the library.",
                               valueName: "dir"))
    var readingLists: String?

    @Flag(help: "Do not record reading progress.")
    var noProgress = false

    @Flag(help: ArgumentHelp("Let KOReader make accounts (Progress sync > Register). Anyone who reaches the server can then "
                             + "make one and read the library: for a first setup, then serve without it."))
    var allowRegistration = false

    @OptionGroup var limitOptions: LimitOptions
    @OptionGroup var stateOptions: StateOptions

    mutating func validate() throws {
        guard ListenAddress(parsing: listen) != nil else {
            throw ValidationError("--listen \(listen): give ADDR:PORT with a numeric address (127.0.0.1:8190, [::1]:8190) or a port")
        }
        if (tlsCert == nil) != (tlsKey == nil) {
            throw ValidationError(tlsCert == nil ? "--tls-key needs --tls-cert: HTTPS takes a certificate and its key"
                                                 : "--tls-cert needs --tls-key: HTTPS takes a certificate and its key")
        }
        guard (1...64).contains(workers) else { throw ValidationError("--workers must be between 1 and 64") }
    }

    func run() throws {
        let library = absolutePath(self.library)
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: library, isDirectory: &isFolder), isFolder.boolValue else {
            throw CommandFailure(.refused, "\(library) is not a folder: serve a library folder")
        }
        let address = ListenAddress(parsing: listen)!
        let tls = try tlsContext(Logger(label: "inkyfs"))
        // Who may use the server: the accounts of `inkyfs account`, HTTP Basic and KOReader's sync.
        let state = stateOptions.open()
        let access: any ServeAccess = AccountAccess(authenticator: Authenticator(state: state), allowRegistration: allowRegistration)
        do throws(ServeRefusal) { try access.check(address) } catch {
            throw CommandFailure(.refused, "\(error)")
        }
        let logger = Logger(label: "inkyfs")
        var options = MountOptions(limits: limitOptions.limits, cacheBytes: Int(cacheSize))
        options.recordProgress = !noProgress
        options.vaultName = nil
        options.listingParallelism = workers
        options.listLibraryAhead = true
        options.readingListsDirectory = readingLists.map(absolutePath)
        options.covers = CoverCache()
        options.pageCache = ConvertedPageCache()
        var configuration = WorkerPool.Configuration(maxWorkers: workers, timeout: workerTimeout)
        configuration.libraryRoot = library
        // Pages fitted to a reader's width and covers are made by workers' image code.
        configuration.arguments.append("--images")
        let pool = WorkerPool(configuration)
        defer { pool.shutdown() }
        let filesystem = LibraryFilesystem(library: library, options: options, backend: pool, state: state,
                                           log: { logger.info("\($0)") })
        filesystem.startWatching()
        defer { filesystem.stopWatching() }
        defer { filesystem.finishStateWrites() }
        defer { options.pageCache?.finishWrites() }
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
        guard let tlsCert, let tlsKey else { return nil }
        do throws(TLSError) {
            let context = try TLSServerContext(certificateChainFile: absolutePath(tlsCert), privateKeyFile: absolutePath(tlsKey))
            for warning in context.warnings { logger.warning("\(warning)") }
            return context
        } catch {
            throw CommandFailure(.refused, "cannot serve HTTPS: \(error)")
        }
    }
}
