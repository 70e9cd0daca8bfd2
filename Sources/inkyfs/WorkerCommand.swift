import ArgumentParser
import InkyWorker

/// `inkyfs __worker`: the archive-parsing worker a mount daemon starts. Not for people.
struct WorkerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "__worker", shouldDisplay: false)

    func run() throws {
        WorkerServer.run()
    }
}
