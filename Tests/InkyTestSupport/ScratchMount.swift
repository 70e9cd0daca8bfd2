import Foundation

/// An empty mountpoint and a private state folder, for a test that starts inkyfs its own way
/// (mount(8), mount.fuse3, a bare Process). `remove()` unmounts lazily whatever is left and
/// deletes both, so a failed test leaves no dead mount behind. Skips the test, saying why, when
/// this user cannot open /dev/fuse: no inkyfs can mount then, however it is started.
public struct ScratchMount {
    public let mountpoint: URL
    public let state: URL

    public init() throws {
        try MountedLibrary.skipUnlessFUSEOpens()
        mountpoint = ArchiveMaker.temporaryDirectory("mnt")
        state = ArchiveMaker.temporaryDirectory("state")
    }

    public func remove() {
        _ = try? ArchiveMaker.run("/usr/bin/fusermount3", ["-u", "-z", mountpoint.path])
        try? FileManager.default.removeItem(at: mountpoint)
        try? FileManager.default.removeItem(at: state)
    }
}
