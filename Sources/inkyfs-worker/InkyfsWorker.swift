import ArgumentParser
import Foundation
import InkyArchive
import InkyWorkerProcess

/// `inkyfs-worker`: the process that parses comics and converts pages for `inkyfs`. The daemon
/// and the command line start it with a socket on fd 3; people do not run it. It is its own
/// executable so that only it maps libarchive, libunarr, liblzma, MuPDF, libvips and libjxl.
@main
struct InkyfsWorker: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inkyfs-worker",
        abstract: "Parses comics for inkyfs, sandboxed, on fd 3. Started by inkyfs, not by people.",
        subcommands: [Serve.self, Versions.self, ConvertCommand.self],
        defaultSubcommand: Serve.self
    )

    struct Serve: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "serve", shouldDisplay: false)

        @Option(help: "The mounted library: comics are opened beneath it only, never through a link.")
        var library: String?

        @Option(help: "A folder the worker may also read beneath (the vault's objects); with --library only.")
        var alsoRead: [String] = []

        @Flag(help: "Start the image library before the sandbox: the mount converts pages.")
        var images = false

        @Flag(help: "Run as root: become nobody, with CAP_DAC_READ_SEARCH alone, before the sandbox; with --library only.")
        var dropRoot = false

        func run() throws {
            WorkerServer.run(library: library, alsoReadable: alsoRead, images: images, dropRoot: dropRoot)
        }
    }

    /// `inkyfs-worker versions`: the parser libraries' versions as JSON, for `inkyfs doctor`.
    struct Versions: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "versions", abstract: "Print the parser libraries' versions as JSON.")

        func run() throws {
            let data = try JSONSerialization.data(withJSONObject: ComicOpener.libraryVersions, options: [.sortedKeys])
            print(String(decoding: data, as: UTF8.self))
        }
    }
}
