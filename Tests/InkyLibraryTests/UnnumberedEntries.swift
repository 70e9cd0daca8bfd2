import InkyCore
import InkyLibrary
import InkyTree

extension LibraryFilesystem {
    /// A directory's entries with no numbers (every id 0): a test of the core asks for names.
    func unnumberedEntries(of node: Node) -> Result<[DirectoryEntry], Errno> {
        directoryEntries(of: node) { $0.map { _ in 0 } }
    }
}
