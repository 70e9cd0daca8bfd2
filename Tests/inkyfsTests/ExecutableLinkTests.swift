import Foundation
import InkyTestSupport
import XCTest

/// What users run maps no parser: `inkyfs` (CLI and daemon, the vault's master key) needs only
/// libfuse, SQLite, libcrypto and the C runtime; every parser and image library is the worker
/// executable's, the HTTP server and libssl the server executable's. Each library a process maps costs its start, and a parser in the daemon
/// would run hostile input beside the key.
final class ExecutableLinkTests: XCTestCase {
    /// Parser and image libraries, and what MuPDF (linked statically) and libvips bring.
    private static let parserLibraries = ["libarchive", "libunarr", "liblzma", "libvips", "libjxl", "libglib", "libgobject",
                                          "libmujs", "libgumbo", "libopenjp2", "libjbig2dec", "libfreetype", "libharfbuzz", "libjpeg",
                                          "libpng", "libwebp", "libheif", "libtiff", "libz.so"]

    private func needed(_ binary: URL) throws -> [String] {
        let dynamic = try ArchiveMaker.run("/usr/bin/readelf", ["-d", binary.path])
        return dynamic.split(separator: "\n").filter { $0.contains("(NEEDED)") }.compactMap { line in
            line.split(separator: "[").last.map { String($0.dropLast()) }
        }
    }

    private func parsers(in libraries: [String]) -> [String] {
        libraries.filter { library in Self.parserLibraries.contains { library.hasPrefix($0) } }
    }

    func testTheUserFacingExecutableNeedsNoParserOrImageLibrary() throws {
        let libraries = try needed(CommandRunner.binary)
        XCTAssertTrue(libraries.contains { $0.hasPrefix("libfuse3") }, "readelf read the real inkyfs: \(libraries)")
        XCTAssertEqual(parsers(in: libraries), [], "inkyfs must not need a parser or image library")
        // MuPDF is linked statically: its symbols, not a NEEDED line, would show it.
        let symbols = try ArchiveMaker.run("/usr/bin/nm", ["--defined-only", CommandRunner.binary.path])
        for symbol in ["fz_new_context_imp", "archive_read_new", "ar_open_archive", "vips_init", "JxlDecoderCreate", "lzma_code"] {
            XCTAssertFalse(symbols.contains(" \(symbol)\n"), "\(symbol) is linked into inkyfs")
        }
    }

    /// Swift modules of the HTTP server, as their names appear in mangled symbols (`$s7NIOCore…`).
    private static let serverModules = ["9InkyServe", "7InkyTLS", "11Hummingbird", "15HummingbirdCore", "7NIOCore", "8NIOPosix", "8NIOHTTP1"]

    private func serverModules(in binary: URL) throws -> [String] {
        let symbols = try ArchiveMaker.run("/usr/bin/nm", ["--defined-only", binary.path])
        return Self.serverModules.filter { symbols.contains("$s\($0)") }
    }

    /// The HTTP server (Hummingbird on SwiftNIO) is `inkyfs-serve`'s: linked into `inkyfs` it made
    /// the binary three times larger and every mount slower to start. Swift packages are linked in
    /// statically, so their symbols, not a NEEDED line, would show them.
    func testTheUserFacingExecutableHoldsNoHTTPServer() throws {
        XCTAssertEqual(try serverModules(in: CommandRunner.binary), [], "the HTTP server is linked into inkyfs")
        XCTAssertEqual(try needed(CommandRunner.binary).filter { $0.hasPrefix("libssl") }, [], "HTTPS is the server's")
    }

    /// The positive control: the same reading finds the server where it belongs, with no parser.
    func testTheServeExecutableHoldsTheServerAndNoParser() throws {
        XCTAssertEqual(try serverModules(in: CommandRunner.serveBinary), Self.serverModules, "inkyfs-serve holds the HTTP server")
        let libraries = try needed(CommandRunner.serveBinary)
        XCTAssertTrue(libraries.contains { $0.hasPrefix("libssl") }, "inkyfs-serve serves HTTPS: \(libraries)")
        XCTAssertEqual(parsers(in: libraries), [], "inkyfs-serve must not need a parser or image library")
    }

    /// The positive control: the same reading finds the parsers where they belong. libvips is not
    /// among them: it maps about a hundred libraries, most bound at load, and made every worker's
    /// start cost about 20 ms of CPU; a worker that converts pages loads it (CInkyVips). Nor is
    /// libjxl (about 4 ms of each start), which such a worker loads at its first page (CInkyJxl).
    func testTheWorkerExecutableHoldsTheParsers() throws {
        let libraries = try needed(CommandRunner.workerBinary)
        for library in ["libarchive", "libunarr", "liblzma"] {
            XCTAssertTrue(libraries.contains { $0.hasPrefix(library) }, "inkyfs-worker needs \(library): \(libraries)")
        }
        for library in ["libvips", "libgobject", "libgio", "libjxl"] {
            XCTAssertFalse(libraries.contains { $0.hasPrefix(library) }, "inkyfs-worker starts with \(library): \(libraries)")
        }
        let symbols = try ArchiveMaker.run("/usr/bin/nm", ["--defined-only", CommandRunner.workerBinary.path])
        XCTAssertTrue(symbols.contains(" fz_new_context_imp\n"), "MuPDF is linked into inkyfs-worker")
    }
}
