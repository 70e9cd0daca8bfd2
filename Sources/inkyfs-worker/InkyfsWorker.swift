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

        @Option(help: ArgumentHelp("The mounted library: a mount's worker, which opens no file itself.",
                                   discussion: "Every comic comes with its request as a descriptor the daemon opened. The worker confines itself (Landlock) to reading the system's libraries only, neither the library nor any other file."))
        var library: String?

        @Flag(help: "Start the image library before the sandbox: the mount converts pages.")
        var images = false

        @Flag(help: ArgumentHelp("Run as root: become nobody, with no capability at all, before the sandbox; with --library only.",
                                 discussion: "The worker becomes nobody/nogroup without supplementary groups, and empties its effective, permitted, inheritable, ambient and bounding capability sets: it needs none, since the daemon passes every comic open."))
        var dropRoot = false

        func run() throws {
            WorkerServer.run(library: library, images: images, dropRoot: dropRoot)
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
