import ArgumentParser
import Foundation
import InkyStore

/// `--state DIR`: where the index and reading state live.
public struct StateOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Folder of the state database (index, reading progress). Default: $XDG_STATE_HOME/inkyfs.",
                               valueName: "dir"))
    public var state: String?

    public init() {}

    public var databasePath: String { StateDatabase.defaultPath(stateDirectory: state.map(absolutePath)) }

    public func open() -> StateDatabase {
        let database = StateDatabase.open(at: databasePath)
        if let note = database.recovery { FileHandle.standardError.write(Data("inkyfs: \(note)\n".utf8)) }
        return database
    }
}

/// A path made absolute and tidy, as the daemon and the index key comics by it.
public func absolutePath(_ path: String) -> String {
    URL(fileURLWithPath: path).standardizedFileURL.path
}
