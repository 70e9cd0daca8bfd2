import Foundation
internal import CFuse3
internal import CInkyFuseDevice
import InkyCore
import InkyTree
import Synchronization

/// What every FUSE callback reaches through the session's userdata: the tree it serves. Never
/// a global: FUSE calls back on its own threads.
final class FUSEContext: Sendable {
    let filesystem: any MountedFilesystem
    let log: LogSink
    /// Set at init when the kernel takes ENOSYS from OPENDIR as "open, stop asking".
    var opendirOptional: Bool {
        get { _opendirOptional.load(ordering: .relaxed) }
        set { _opendirOptional.store(newValue, ordering: .relaxed) }
    }
    /// What the session's device I/O saw of INIT (`FUSESession.deviceIO`): C memory, as the
    /// wrappers run in C on libfuse's threads (unsafe: C memory those threads share by C's rules).
    nonisolated(unsafe) let diropsWatch: UnsafeMutablePointer<inky_dirops_watch> = {
        let watch = UnsafeMutablePointer<inky_dirops_watch>.allocate(capacity: 1)
        watch.initialize(to: inky_dirops_watch())
        return watch
    }()
    /// The device's readers (`FUSESession.deviceIO`, shim.h): which CPUs they pin themselves to
    /// (unsafe as `diropsWatch`: C memory the C readers use).
    nonisolated(unsafe) let deviceReaders: UnsafeMutablePointer<inky_device_readers> = {
        let readers = UnsafeMutablePointer<inky_device_readers>.allocate(capacity: 1)
        readers.initialize(to: inky_device_readers())
        return readers
    }()
    /// Whether a file opened with direct I/O can still be mapped shared (the INIT reply granted
    /// FUSE_DIRECT_IO_ALLOW_MMAP): without it mmap fails (ENODEV), and image viewers map pages.
    var directIOMaps: Bool { inky_direct_io_mmap_granted(diropsWatch) != 0 }
    /// Comic directories' replies made ahead.
    let listingReplies = FUSEListingReplies()
    /// Folders' listings dropped once their subdirectories were listed (not on a `ro` mount).
    let parentRelisting: FUSEParentRelisting
    private let _opendirOptional = Atomic(false)
    private struct State {
        /// Directories whose last reply went to their end, by inode, with the offset after it.
        var listedToEnd: [UInt64: Int] = [:]
        /// READDIR(PLUS) replies being made, by inode, and whether another began meanwhile: with
        /// parallel directory operations two listings of one directory run at once, and the end one
        /// of them reached may come in after the other's newer, shorter reply.
        var listings: [UInt64: (running: Int, overlapped: Bool)] = [:]
        /// LOOKUPs being answered, by a hash of parent and name (never the name itself: vault names
        /// must not stay behind in this table's memory), with how many.
        var lookups: [Int: Int] = [:]
    }
    private let state = Mutex(State())

    /// A READDIR(PLUS) reply of `inode` is being made; `listed(_:toEnd:)` ends it.
    func listing(_ inode: UInt64) {
        state.withLock { state in
            let running = state.listings[inode]?.running ?? 0
            state.listings[inode] = (running + 1, running > 0)
        }
    }

    /// A reply to READDIR(PLUS) of `inode` held its last entry, the next offset being `end`;
    /// nil: it did not (an older end must not cut this listing short where it stops). An end
    /// reached while another listing of the directory ran is not kept: which of the two saw the
    /// directory last is unknown.
    func listed(_ inode: UInt64, toEnd end: Int?) {
        state.withLock { state in
            let (running, overlapped) = state.listings[inode] ?? (1, false)
            state.listings[inode] = running > 1 ? (running - 1, true) : nil
            if state.listedToEnd.count >= 4096 { state.listedToEnd.removeAll() }
            state.listedToEnd[inode] = overlapped ? nil : end
        }
    }

    private static func lookupKey(_ parent: UInt64, _ name: String) -> Int {
        var hasher = Hasher()
        hasher.combine(parent)
        hasher.combine(name)
        return hasher.finalize()
    }

    /// A LOOKUP of `name` in `parent` is being answered; `lookedUp` with the key returned ends it.
    func lookingUp(_ parent: UInt64, _ name: String) -> Int {
        let key = Self.lookupKey(parent, name)
        state.withLock { $0.lookups[key, default: 0] += 1 }
        return key
    }

    func lookedUp(_ key: Int) {
        state.withLock { state in state.lookups[key] = state.lookups[key].flatMap { $0 > 1 ? $0 - 1 : nil } }
    }

    /// Which names of `directory` a LOOKUP is being answered for now, as of this call. A
    /// readdirplus reply hands those out without attributes: given attributes, the kernel would
    /// wait for that lookup before it finished the listing (it makes a name's dentry only once at
    /// a time), and a lookup stuck on a hanging archive then held up `ls` of its whole folder.
    /// (A lookup that begins after this call and before the kernel takes the reply in is not
    /// seen: the listing then waits for it, as it always did.)
    func beingLookedUp(in directory: UInt64) -> (String) -> Bool {
        guard let keys = state.withLock({ $0.lookups.isEmpty ? nil : Set($0.lookups.keys) }) else { return { _ in false } }
        return { keys.contains(Self.lookupKey(directory, $0)) }
    }

    /// Whether `offset` is past the end the last reply for `inode` reached (once): the kernel
    /// asks once more after every directory's last entries, and that answer is empty. Listing
    /// the directory again only to find nothing after it cost as much as the listing itself.
    func isPastEnd(_ inode: UInt64, offset: Int) -> Bool {
        state.withLock { state in
            guard offset > 0, state.listedToEnd[inode] == offset else { return false }
            state.listedToEnd[inode] = nil
            return true
        }
    }

    init(filesystem: any MountedFilesystem, readOnly: Bool, log: @escaping LogSink) {
        self.filesystem = filesystem
        self.log = log
        parentRelisting = FUSEParentRelisting(enabled: !readOnly)
    }

    deinit {
        diropsWatch.deallocate()
        deviceReaders.deallocate()
    }
}
