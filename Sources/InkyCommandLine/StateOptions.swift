import ArgumentParser
import Foundation
import InkyStore

/// `--state DIR`: where the index and reading state live.
struct StateOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Folder of the state database (index, reading progress). Default: $XDG_STATE_HOME/inkyfs.",
                               valueName: "dir"))
    var state: String?

    var databasePath: String { StateDatabase.defaultPath(stateDirectory: state.map(absolutePath)) }

    func open() -> StateDatabase {
        let database = StateDatabase.open(at: databasePath)
        if let note = database.recovery { FileHandle.standardError.write(Data("inkyfs: \(note)\n".utf8)) }
        return database
    }
}

/// A path made absolute and tidy, as the daemon and the index key comics by it.
func absolutePath(_ path: String) -> String {
    URL(fileURLWithPath: path).standardizedFileURL.path
}
