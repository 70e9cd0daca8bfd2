import Foundation
import InkyCore
import Synchronization

/// Covers kept on disk between mounts (`~/.cache/inkyfs/covers/`), so a remount serves them
/// without opening an archive. A file is named by a hash of the comic's persistent identity (its
/// library path and `FileIdentity.generation`): a changed comic gets a new name and its old cover
/// ages out. Stored and capped as a `BoundedFileDirectory`. Vault covers never come here.
public final class CoverCache: Sendable {
    private let files: BoundedFileDirectory
    /// Covers that could not be made (a page that does not decode), by key: tried once a mount.
    private let failed = Mutex<Set<String>>([])

    public init(directory: String = XDGDirectories.cache + "/covers", capacity: Int64 = 500 << 20) {
        files = BoundedFileDirectory(directory: directory, capacity: capacity, suffix: ".jpg")
    }

    public var directory: String { files.directory }
    public var capacity: Int64 { files.capacity }

    /// The file name of a comic's cover, from its path and generation.
    public static func key(path: String, identity: FileIdentity) -> String {
        BoundedFileDirectory.comicName(path: path, identity: identity) + ".jpg"
    }

    /// Removes the cover of the library comic `path` (as the library names it) with `identity`;
    /// whether there was one. `vault add` calls it: a comic moved into the vault leaves no picture.
    @discardableResult
    public func purge(path: String, identity: FileIdentity) -> Bool {
        files.remove(prefixed: Self.key(path: path, identity: identity)) > 0
    }

    /// The cover's bytes, or nil; a hit counts as an access for eviction.
    public func cover(_ key: String) -> [UInt8]? { files.read(key) }

    /// Whether the cover is on disk, without reading it (a listing asks this for every folder).
    public func contains(_ key: String) -> Bool {
        access(directory + "/" + key, F_OK) == 0
    }

    /// Remembers that a comic makes no cover, so each `stat` does not start a worker again.
    public func markFailed(_ key: String) { failed.withLock { _ = $0.insert(key) } }
    public func hasFailed(_ key: String) -> Bool { failed.withLock { $0.contains(key) } }

    /// Stores a cover (atomically: a reader never sees half of one), then evicts down to the cap.
    public func store(_ key: String, _ bytes: [UInt8]) { files.write(key, bytes) }

    /// Waits for a cover being written and stores none after (the end of a mount).
    public func finishWrites() { files.close() }

    /// Bytes of the covers on disk (what the cap bounds).
    public var size: Int64 { files.size }
}
