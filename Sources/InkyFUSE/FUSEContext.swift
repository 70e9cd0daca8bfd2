import Foundation
import InkyCore
import InkyTree

/// What every FUSE callback reaches through the session's userdata: the tree it serves. Never
/// a global: FUSE calls back on its own threads.
final class FUSEContext: @unchecked Sendable {
    let filesystem: any MountedFilesystem
    let log: @Sendable (String) -> Void
    /// Set at init when the kernel takes ENOSYS from OPENDIR as "open, stop asking".
    var opendirOptional: Bool {
        get { lock.withLock { _opendirOptional } }
        set { lock.withLock { _opendirOptional = newValue } }
    }
    private let lock = NSLock()
    private var _opendirOptional = false

    init(filesystem: any MountedFilesystem, log: @escaping @Sendable (String) -> Void) {
        self.filesystem = filesystem
        self.log = log
    }
}
