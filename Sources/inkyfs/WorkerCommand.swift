import ArgumentParser
import InkyWorker

/// `inkyfs __worker`: the archive-parsing worker a mount daemon starts. Not for people.
struct WorkerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "__worker", shouldDisplay: false)

    @Option(help: "The mounted library: comics are opened beneath it only, never through a link.")
    var library: String?

    @Flag(help: "Start the image library before the sandbox: the mount converts pages.")
    var images = false

    func run() throws {
        WorkerServer.run(library: library, images: images)
    }
}
