import ArgumentParser
import Foundation
import InkyCommandLine
import InkyCore

/// `inkyfs serve`: checked here, served by `inkyfs-serve`. The HTTP server (Hummingbird, SwiftNIO)
/// lives in that executable alone, so that every other `inkyfs` process (each mount, its daemon)
/// starts without loading it. Once its options are good, this process becomes the server
/// (execv, the arguments unchanged): the same pid, which a `Type=notify` unit waits on.
struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "serve", abstract: ServeOptions.abstract, discussion: ServeOptions.discussion)

    @OptionGroup var options: ServeOptions

    func run() throws {
        let arguments = Array(CommandLine.arguments.dropFirst())
        // `serve` is the first word: the only way ArgumentParser reaches this command.
        guard arguments.first == Self.configuration.commandName else {
            throw CommandFailure(.usage, "serve must be the first word: inkyfs serve [options] LIBRARY")
        }
        let server = HelperExecutable.serve
        let path = server.path
        let argv = [path] + arguments.dropFirst()
        let pointers = argv.map { strdup($0) } + [nil]
        execv(path, pointers)
        let error = errno
        pointers.forEach { free($0) }
        let fix = "reinstall inkyfs (scripts/install puts it in PREFIX/libexec/inkyfs/), or set \(server.variable) to its path"
        guard error == ENOENT else {
            throw CommandFailure(.refused, "cannot start the server: \(path): \(String(cString: strerror(error))); \(fix)")
        }
        let looked = server.candidates.contains(path) ? server.candidates.joined(separator: " or ") : "\(path) (\(server.variable))"
        throw CommandFailure(.refused, "cannot start the server: no \(server.name) at \(looked); \(fix)")
    }
}
