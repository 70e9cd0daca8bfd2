import InkyArchive
import InkyFUSE

/// `inkyfs --version`: ours and the C libraries' we run against.
enum InkyfsVersion {
    static let number = "0.1.0"
    static var text: String {
        let libraries = ComicOpener.libraryVersions.merging(["libfuse": FUSELibrary.version]) { $1 }
        return "inkyfs \(number) (" + libraries.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ") + ")"
    }
}
