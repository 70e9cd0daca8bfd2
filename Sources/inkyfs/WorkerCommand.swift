import ArgumentParser
import InkyWorker

/// `inkyfs __worker`: the archive-parsing worker a mount daemon starts. Not for people.
struct WorkerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "__worker", shouldDisplay: false)

    @Option(help: "The mounted library: comics are opened beneath it only, never through a link.")
    var library: String?

    func run() throws {
        WorkerServer.run(library: library)
    }
}
