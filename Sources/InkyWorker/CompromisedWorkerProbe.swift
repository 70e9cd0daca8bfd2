#if DEBUG
import Foundation
import InkyVault

/// Test hook, compiled into debug builds only: with `INKYFS_TEST_COMPROMISED_WORKER` set, the
/// worker plays a compromised one that keeps every key it is ever sent, and says on stderr (the
/// daemon's log) which keys it holds each time it is given one, as short fingerprints
/// (HKDF of the key, never the key). A test proves from these lines that the daemon gives a worker
/// at most the key of the comic it is serving, whatever the worker does with it.
package enum CompromisedWorkerProbe {
    package static let isEnabled = ProcessInfo.processInfo.environment["INKYFS_TEST_COMPROMISED_WORKER"] != nil
    /// One worker process, one thread serving requests: no concurrent access.
    nonisolated(unsafe) private static var received: [String] = []

    package static func kept(_ key: SecureBytes, for path: String, holding: Int) {
        guard isEnabled, let print = try? fingerprint(of: key) else { return }
        if !received.contains(print) { received.append(print) }
        let line = "inkyfs-test-worker \(getpid()) serving \(path) holding \(holding) received \(received.joined(separator: ","))\n"
        FileHandle.standardError.write(Data(line.utf8))
    }

    /// What the test computes from the vault's own keys to recognise them in the log.
    package static func fingerprint(of key: SecureBytes) throws -> String {
        let derived = try HKDFSHA256.deriveKey(inputKey: key, info: Array("inkyfs test: key fingerprint".utf8), length: 8)
        return derived.withUnsafeBytes { $0.map { String(format: "%02x", $0) }.joined() }
    }
}
#endif
