import Foundation
internal import CFuse3
internal import CInkyFuseDevice
import InkyCore
import Synchronization

/// Gives the kernel the mount root's attributes before the root is ever invalidated.
///
/// The kernel makes a FUSE mount's root with no permission bits, owner 0 and one link, and
/// replaces them with the first GETATTR answer it applies. It does not apply an answer when the
/// node was invalidated after the request began (its attribute version moved), and when
/// `default_permissions` made that GETATTR, it does not ask again: a walk by another user
/// (`allow_other`) through a root that never took an answer failed with EACCES, no LOOKUP
/// sent. The views appear a moment after the first request and invalidate the root (its link
/// count and listing count them), so that first walk often lost the race.
///
/// So the daemon stats its own root as it starts serving, on a thread of its own, and every
/// invalidation of the root is held back until that stat returned (`FUSEKernelCache`): no
/// answer can be dropped before then, whoever asked, and stat(2) returns only once the kernel
/// has applied one. From then on an answer dropped leaves real attributes in place, and the
/// held invalidation goes out. The mount says it is ready without waiting for it: nothing can
/// go wrong meanwhile, and that wait (a request's round trip, the root's first answer) doubled
/// the time `inkyfs mount` took under load. The stat runs where it holds no descriptor
/// (`inky_stat_own_mount`): a daemon killed during it would otherwise never end.
final class MountRootAttributes: Sendable {
    private let finished = DispatchSemaphore(value: 0)
    private let started = Mutex(false)

    /// Stats `mountpoint` on a new thread, then tells `cache`, unless the session ended
    /// meanwhile (a signal at startup).
    func start(mountpoint: String, session: OpaquePointer, cache: FUSEKernelCache, log: @escaping LogSink) {
        nonisolated(unsafe) let session = session
        started.withLock { $0 = true }
        let thread = Thread { [finished] in
            defer { finished.signal() }
            var info = stat()
            let error = inky_stat_own_mount(mountpoint, &info)
            let failure = error == 0 ? nil : Errno(error)
            guard fuse_session_exited(session) == 0 else { return }
            if let failure {
                // Served on: the first GETATTR that comes in will give the root its attributes.
                log(.warning("the mount's root did not answer the daemon's own stat (\(failure)): another user's first walk may be refused"))
            }
            cache.rootAttributesApplied()
        }
        thread.name = "inkyfs.root-attributes"
        thread.start()
    }

    /// Waits for the thread, if one started. Call after unmounting: a stat waiting on a session
    /// that stopped serving returns once the device is closed.
    func join() {
        if started.withLock({ $0 }) { finished.wait() }
    }
}
