import InkyCommandLine
import InkyFUSE
import InkyStore
import InkyVault

/// `inkyfs --version`: ours and the C libraries this executable runs against. The parsers'
/// versions are the worker's (`inkyfs doctor` asks it): starting it would cost every `--version`.
enum InkyfsVersion {
    static var text: String {
        let libraries = ["libfuse": FUSELibrary.version, "openssl": OpenSSLVersion.version, "sqlite": SQLiteVersion.version]
        return "inkyfs \(InkyfsRelease.number) (" + libraries.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ") + ")"
    }
}
