import Foundation
import InkyCore
import InkyVault

/// Where a request's comic is read from, as the library knows it: a file of the library, or a
/// vault object with its key. The pool sends a key only with the request that carries it, so it
/// never asks anyone which a path was; lock revokes the key (`VaultObjectKey`), and a request
/// still in flight then finds none to send.
public enum ComicSource: Sendable {
    case file(String)
    case vaultObject(String, key: VaultObjectKey)

    /// The file the comic's bytes are in (a vault object's is its encrypted object).
    public var path: String {
        switch self {
        case .file(let path), .vaultObject(let path, _): path
        }
    }

    public var isVaultObject: Bool {
        if case .vaultObject = self { true } else { false }
    }
}

extension WorkerPool {
    /// Sends a vault object's key to the worker about to read it; false when lock revoked it.
    /// The key is held for the send only: a request in flight at lock keeps none of its bytes.
    static func send(_ key: VaultObjectKey, for path: String, to worker: WorkerProcess) throws(FrameChannel.Failure) -> Bool {
        guard let bytes = key.current else { return false }
        try worker.send(.useKey(path: path))
        // Straight from locked memory: no frame is built around a copy of the key.
        try bytes.withUnsafeBytes { (raw) throws(FrameChannel.Failure) in try worker.send(data: raw) }
        return true
    }

    /// What a request of a vault comic answers once the vault is locked.
    static func locked(_ path: String) -> ComicError {
        .io(path: path, errno: EIO, detail: "the vault was locked while the comic was read")
    }
}
