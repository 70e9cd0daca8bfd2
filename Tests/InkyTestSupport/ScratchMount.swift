import Foundation

/// An empty mountpoint and a private state folder, for a test that starts inkyfs its own way
/// (mount(8), mount.fuse3, a bare Process). `remove()` unmounts lazily whatever is left and
/// deletes both, so a failed test leaves no dead mount behind.
public struct ScratchMount {
    public let mountpoint = ArchiveMaker.temporaryDirectory("mnt")
    public let state = ArchiveMaker.temporaryDirectory("state")

    public init() {}

    public func remove() {
        _ = try? ArchiveMaker.run("/usr/bin/fusermount3", ["-u", "-z", mountpoint.path])
        try? FileManager.default.removeItem(at: mountpoint)
        try? FileManager.default.removeItem(at: state)
    }
}
