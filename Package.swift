// swift-tools-version: 6.1
import PackageDescription

/// Module rules (docs/architecture.md):
/// - Each C library is wrapped by exactly one Swift module, imported `internal`.
/// - InkyCore knows comics and pages and nothing of C, FUSE or storage.
/// - The `inkyfs` executable only parses arguments and wires modules.
/// Our own C, checked at run time where glibc can (release builds: fortify needs optimisation).
let fortified: [CSetting] = [.define("_FORTIFY_SOURCE", to: "2", .when(configuration: .release))]

let package = Package(
    name: "inkyfs",
    products: [
        .executable(name: "inkyfs", targets: ["inkyfs"]),
        // Every parser and image library lives here alone (docs/architecture.md, "Processes").
        .executable(name: "inkyfs-worker", targets: ["inkyfs-worker"]),
        // The HTTP server `inkyfs serve` becomes: Hummingbird and SwiftNIO live here alone.
        .executable(name: "inkyfs-serve", targets: ["inkyfs-serve"]),
        // For the libFuzzer package under Fuzz/, which depends on this one by path (packages
        // see each other's products only). Nothing else links them.
        .library(name: "InkyFuzzable", targets: ["InkyCore", "InkyArchive", "InkyWorker", "InkyWorkerProcess", "InkyVault"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // `inkyfs serve`: HTTP/1.1 on SwiftNIO. No traits: swift-configuration and full Foundation unused.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        // Hummingbird's own SwiftNIO, named for NIOCore alone: the TLS handler is a channel handler.
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.0"),
    ],
    targets: [
        // C shims: module maps over the Debian -dev packages.
        .systemLibrary(name: "CArchive", path: "Sources/Shims/CArchive", pkgConfig: "libarchive",
                       providers: [.apt(["libarchive-dev"])]),
        .systemLibrary(name: "CLZMA", path: "Sources/Shims/CLZMA", pkgConfig: "liblzma",
                       providers: [.apt(["liblzma-dev"])]),
        .systemLibrary(name: "CUnarr", path: "Sources/Shims/CUnarr", pkgConfig: "libunarr",
                       providers: [.apt(["libunarr-dev"])]),
        .systemLibrary(name: "CFuse3", path: "Sources/Shims/CFuse3", pkgConfig: "fuse3",
                       providers: [.apt(["libfuse3-dev"])]),
        .systemLibrary(name: "CCrypto", path: "Sources/Shims/CCrypto", pkgConfig: "libcrypto",
                       providers: [.apt(["libssl-dev"])]),
        // HTTPS for `inkyfs serve`: the system's OpenSSL, the same as libcrypto's (libssl3 ships both).
        .systemLibrary(name: "CSSL", path: "Sources/Shims/CSSL", pkgConfig: "libssl",
                       providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CLinux", path: "Sources/Shims/CLinux"),
        // Header only (no library): ZIP's CRC-32 folded with PCLMULQDQ, for stored pages the daemon reads itself.
        .systemLibrary(name: "CCRC32", path: "Sources/Shims/CCRC32"),
        // libvips: every page format comics carry, decoded at the scale needed (shrink-on-load).
        // Its headers only, which need GLib's: CInkyVips loads the library when a worker converts pages.
        .systemLibrary(name: "CVips", path: "Sources/Shims/CVips", pkgConfig: "glib-2.0",
                       providers: [.apt(["libvips-dev"])]),
        .systemLibrary(name: "CSQLite", path: "Sources/Shims/CSQLite", pkgConfig: "sqlite3",
                       providers: [.apt(["libsqlite3-dev"])]),

        // C code of our own, in .c files (headers only declare): the FUSE device's readers.
        .target(name: "CInkyFuseDevice", cSettings: fortified),
        // libvips loaded on first need (dlopen), behind fixed-argument wrappers of its varargs calls.
        .target(name: "CInkyVips", dependencies: ["CVips"], cSettings: fortified),
        // libjxl's decoder alone gives back the JPEG a JPEG XL was made from, bit-exact. Loaded
        // (dlopen) by a worker that converts and meets one: its headers only (libjxl-dev).
        .target(name: "CInkyJxl", cSettings: fortified),
        // A JPEG decoded at the scale it is needed (libjpeg-turbo's scaled IDCT) into a libvips image.
        .target(name: "CInkyScaledJPEG", dependencies: ["CInkyVips"], cSettings: fortified, linkerSettings: [.linkedLibrary("jpeg")]),
        // PDF comics over MuPDF: every fz_try/fz_catch stays in C, behind one small API.
        // Debian ships MuPDF as static archives only (libmupdf-dev): the libraries they call follow them.
        .target(name: "CInkyPDF", cSettings: fortified, linkerSettings: ["mupdf", "mupdf-third", "mujs", "gumbo", "openjp2", "jbig2dec", "jpeg",
                                                   "freetype", "harfbuzz", "z", "m"].map { .linkedLibrary($0) }),

        .target(name: "InkyCore"),
        .target(name: "InkyPDF", dependencies: ["InkyCore", "CInkyPDF"]),
        .target(name: "InkyArchive", dependencies: ["InkyCore", "InkyPDF", "CArchive", "CUnarr", "CLZMA"]),
        // Page images: decoding, fitting, grayscale, JPEG/PNG encoding, pixel limits.
        .target(name: "InkyImage", dependencies: ["CInkyVips", "CInkyJxl", "CInkyScaledJPEG"]),
        // The daemon's side of workers: pool, protocol, spawning, sandbox rules. No parser.
        .target(name: "InkyWorker", dependencies: ["InkyCore", "InkyVault", "CLinux", "CCRC32"]),
        // The worker's side: parsing, converting, covers. Linked into inkyfs-worker only.
        .target(name: "InkyWorkerProcess", dependencies: ["InkyCore", "InkyArchive", "InkyImage", "InkyVault", "InkyWorker"]),
        // What the FUSE adapter serves: the tree protocol, node attributes. No FUSE, no library.
        .target(name: "InkyTree", dependencies: ["InkyCore"]),
        .target(name: "InkyLibrary", dependencies: ["InkyCore", "InkyTree", "InkyWorker", "InkyStore", "InkyVault"]),
        // The library as a mount numbers it: inode numbers, the kernel told by number. No FUSE.
        .target(name: "InkyMount", dependencies: ["InkyCore", "InkyTree", "InkyLibrary", "InkyStore"]),
        // The kernel adapter knows only the tree protocol (docs/architecture.md, ModuleRulesTests).
        .target(name: "InkyFUSE", dependencies: ["InkyCore", "InkyTree", "CFuse3", "CInkyFuseDevice"]),
        // The composition root: worker pool, state, library, vault control, the FUSE session; the control
        // socket and the launcher that starts the daemon.
        .target(name: "InkyDaemon", dependencies: ["InkyCore", "InkyCommandLine", "InkyTree", "InkyLibrary", "InkyMount", "InkyWorker", "InkyStore", "InkyVault", "InkyFUSE"]),
        .target(name: "InkyVault", dependencies: ["InkyCore", "CCrypto"]),
        .target(name: "InkyStore", dependencies: ["InkyCore", "CSQLite"]),
        // Accounts, login throttling and KOReader's sync protocol, over typed requests: no HTTP.
        .target(name: "InkySync", dependencies: ["InkyCore", "InkyStore", "InkyVault"]),
        // HTTPS: libssl over memory buffers, as a SwiftNIO channel handler first in each connection.
        .target(name: "InkyTLS", dependencies: [
            "InkyCore", "CSSL",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "HummingbirdCore", package: "hummingbird"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // The HTTP front end (`inkyfs serve`): OPDS, page streaming. Reaches comics through the library
        // core by ComicRef and page index (`LibraryReader`), never a node number or a mount.
        .target(name: "InkyServe", dependencies: [
            "InkyCore", "InkyLibrary", "InkyStore", "InkySync", "InkyTLS",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HummingbirdCore", package: "hummingbird"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // What both executables that read a command line share: the options of `inkyfs serve`, limits,
        // state folder, exit statuses. No HTTP: `inkyfs` checks serve's options with it.
        .target(name: "InkyCommandLine", dependencies: [
            "InkyCore", "InkyStore", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // What users run: CLI and daemon. No parser, image library or HTTP server (ExecutableLinkTests).
        .executableTarget(name: "inkyfs", dependencies: [
            "InkyCore", "InkyCommandLine", "InkyWorker", "InkyLibrary", "InkyFUSE", "InkyDaemon", "InkyVault", "InkyStore", "InkySync",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // `inkyfs serve`, once its options are checked: the HTTP(S) server over the library core.
        .executableTarget(name: "inkyfs-serve", dependencies: [
            "InkyCore", "InkyCommandLine", "InkyLibrary", "InkyServe", "InkySync", "InkyTLS", "InkyWorker",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        .executableTarget(name: "inkyfs-worker", dependencies: [
            "InkyCore", "InkyArchive", "InkyImage", "InkyWorkerProcess",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),

        .target(name: "InkyTestSupport", dependencies: ["InkyCore"], path: "Tests/InkyTestSupport"),
        .testTarget(name: "InkyCoreTests", dependencies: ["InkyCore", "InkyTestSupport"]),
        .testTarget(name: "InkyPDFTests", dependencies: ["InkyPDF", "InkyCore", "InkyTestSupport"]),
        .testTarget(name: "InkyArchiveTests", dependencies: ["InkyArchive", "InkyCore", "InkyTestSupport"]),
        .testTarget(name: "InkyWorkerTests", dependencies: ["InkyWorker", "InkyWorkerProcess", "InkyCore", "InkyArchive", "InkyVault", "InkyTestSupport", "inkyfs", "inkyfs-worker"]),
        // The control socket over real sockets (and `inkyfs` run as another user), systemd's notify datagram.
        .testTarget(name: "InkyDaemonTests", dependencies: ["InkyDaemon", "InkyCommandLine", "InkyWorker", "InkyCore", "InkyTestSupport", "inkyfs"]),
        .testTarget(name: "InkyLibraryTests", dependencies: ["InkyLibrary", "InkyMount", "InkyTree", "InkyWorker", "InkyVault", "InkyCore", "InkyArchive", "InkyStore", "InkyTestSupport", "inkyfs-worker"]),
        .testTarget(name: "InkyMountTests", dependencies: ["InkyMount", "InkyLibrary", "InkyTree", "InkyCore", "InkyWorker", "InkyStore", "InkyTestSupport"]),
        .testTarget(name: "InkyFUSETests", dependencies: ["InkyFUSE", "InkyVault", "inkyfs", "inkyfs-worker", "InkyCore", "InkyArchive", "InkyTestSupport", "CFuse3", "CInkyFuseDevice"]),
        .testTarget(name: "InkyVaultTests", dependencies: ["InkyVault"]),
        .testTarget(name: "InkyImageTests", dependencies: ["InkyImage", "InkyTestSupport"]),
        .testTarget(name: "InkyTreeTests", dependencies: ["InkyTree", "InkyCore"]),
        .testTarget(name: "InkyStoreTests", dependencies: ["InkyStore", "InkyCore"]),
        .testTarget(name: "InkySyncTests", dependencies: ["InkySync", "InkyStore", "InkyVault", "InkyCore"]),
        // A real `inkyfs serve` on loopback, read by real clients (curl, unzip, 7zz, jing); the pages
        // compared with what the library core gives (InkyLibrary over a worker pool).
        .testTarget(name: "InkyServeTests", dependencies: ["InkyServe", "InkyLibrary", "InkyWorker", "InkyStore", "InkyCore", "InkyTestSupport", "inkyfs", "inkyfs-worker", "inkyfs-serve",
                                                         .product(name: "Hummingbird", package: "hummingbird")],
                    exclude: ["Schemas"]),
        // Reads docs/architecture.md and Sources/: the module rules hold (no module dependency).
        .testTarget(name: "ArchitectureTests"),
        .testTarget(name: "inkyfsTests", dependencies: ["inkyfs", "inkyfs-worker", "inkyfs-serve", "InkyCore", "InkyTestSupport"]),
    ]
)
