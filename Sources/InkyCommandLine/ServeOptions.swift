import ArgumentParser
import InkyCore

/// What `inkyfs serve` takes, written once for the two executables that read it: `inkyfs`, which
/// shows it in `--help` and the man page and checks it (a bad option fails there, before anything
/// starts), and `inkyfs-serve`, which `inkyfs serve` becomes (execv, same arguments, same pid)
/// and which holds the HTTP server, so that `inkyfs` maps none of it.
public struct ServeOptions: ParsableArguments {
    public static let abstract = "Serve a comic library over HTTP or HTTPS: an OPDS catalog, page streaming, CBZ downloads."

    public static let discussion = """
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

    @Argument(help: "The library folder.")
    public var library: String

    @Option(help: ArgumentHelp("Address and port to listen on: 127.0.0.1:8190, [::1]:8190, or a port alone (loopback). "
                               + "Port 0 takes a free one (the log line tells which).", valueName: "addr:port"))
    public var listen = ListenAddress.standard.description

    @Option(help: ArgumentHelp("Serve HTTPS with this certificate: a PEM file, the server's certificate first, then "
                               + "its intermediates (fullchain.pem). Needs --tls-key.", valueName: "file"))
    public var tlsCert: String?

    @Option(help: ArgumentHelp("The certificate's private key: a PEM file, not encrypted, readable by you alone. "
                               + "Needs --tls-cert.", valueName: "file"))
    public var tlsKey: String?

    @Option(help: "Archive-parsing worker processes.")
    public var workers: Int = 4

    @Option(help: ArgumentHelp("Seconds a worker may make no progress before it is killed.", valueName: "seconds"))
    public var workerTimeout: Double = 15

    @Option(help: ArgumentHelp("Memory for decoded pages, across all comics, e.g. 512M. (default: 256M)", valueName: "size"),
            transform: parseSize)
    public var cacheSize: Int64 = 256 << 20

    @Option(help: ArgumentHelp("A folder of ComicRack reading lists (.cbl) shown in Reading Lists, besides those in the library.",
                               valueName: "dir"))
    public var readingLists: String?

    @Flag(help: "Do not record reading progress.")
    public var noProgress = false

    @Flag(help: ArgumentHelp("Let KOReader make accounts (Progress sync > Register). Anyone who reaches the server can then "
                             + "make one and read the library: for a first setup, then serve without it."))
    public var allowRegistration = false

    @OptionGroup public var limitOptions: LimitOptions
    @OptionGroup public var stateOptions: StateOptions

    public init() {}

    public mutating func validate() throws {
        guard ListenAddress(parsing: listen) != nil else {
            throw ValidationError("--listen \(listen): give ADDR:PORT with a numeric address (127.0.0.1:8190, [::1]:8190) or a port")
        }
        if (tlsCert == nil) != (tlsKey == nil) {
            throw ValidationError(tlsCert == nil ? "--tls-key needs --tls-cert: HTTPS takes a certificate and its key"
                                                 : "--tls-cert needs --tls-key: HTTPS takes a certificate and its key")
        }
        guard (1...64).contains(workers) else { throw ValidationError("--workers must be between 1 and 64") }
    }

    /// The address `validate()` accepted.
    public var address: ListenAddress { ListenAddress(parsing: listen)! }
}
