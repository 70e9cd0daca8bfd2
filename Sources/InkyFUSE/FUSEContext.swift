import Foundation
internal import CFuse3
internal import CInkyFuseDevice
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
    /// What the session's device I/O saw of INIT (`FUSESession.deviceIO`): C memory, as the
    /// wrappers run in C on libfuse's threads.
    let diropsWatch: UnsafeMutablePointer<inky_dirops_watch> = {
        let watch = UnsafeMutablePointer<inky_dirops_watch>.allocate(capacity: 1)
        watch.initialize(to: inky_dirops_watch())
        return watch
    }()
    /// The device's readers (`FUSESession.deviceIO`, shim.h): which CPUs they pin themselves to.
    let deviceReaders: UnsafeMutablePointer<inky_device_readers> = {
        let readers = UnsafeMutablePointer<inky_device_readers>.allocate(capacity: 1)
        readers.initialize(to: inky_device_readers())
        return readers
    }()
    /// Comic directories' replies made ahead.
    let listingReplies = FUSEListingReplies()
    private let lock = NSLock()
    private var _opendirOptional = false
    /// Directories whose last reply went to their end, by inode, with the offset after it.
    private var listedToEnd: [UInt64: Int] = [:]
    /// READDIR(PLUS) replies being made, by inode, and whether another began meanwhile: with
    /// parallel directory operations two listings of one directory run at once, and the end one
    /// of them reached may come in after the other's newer, shorter reply.
    private var listings: [UInt64: (running: Int, overlapped: Bool)] = [:]
    /// LOOKUPs being answered, by a hash of parent and name (never the name itself: vault names
    /// must not stay behind in this table's memory), with how many.
    private var lookups: [Int: Int] = [:]

    /// A READDIR(PLUS) reply of `inode` is being made; `listed(_:toEnd:)` ends it.
    func listing(_ inode: UInt64) {
        lock.withLock {
            let running = listings[inode]?.running ?? 0
            listings[inode] = (running + 1, running > 0)
        }
    }

    /// A reply to READDIR(PLUS) of `inode` held its last entry, the next offset being `end`;
    /// nil: it did not (an older end must not cut this listing short where it stops). An end
    /// reached while another listing of the directory ran is not kept: which of the two saw the
    /// directory last is unknown.
    func listed(_ inode: UInt64, toEnd end: Int?) {
        lock.withLock {
            let (running, overlapped) = listings[inode] ?? (1, false)
            listings[inode] = running > 1 ? (running - 1, true) : nil
            if listedToEnd.count >= 4096 { listedToEnd.removeAll() }
            listedToEnd[inode] = overlapped ? nil : end
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
        lock.withLock { lookups[key, default: 0] += 1 }
        return key
    }

    func lookedUp(_ key: Int) {
        lock.withLock { lookups[key] = lookups[key].flatMap { $0 > 1 ? $0 - 1 : nil } }
    }

    /// Which names of `directory` a LOOKUP is being answered for now, as of this call. A
    /// readdirplus reply hands those out without attributes: given attributes, the kernel would
    /// wait for that lookup before it finished the listing (it makes a name's dentry only once at
    /// a time), and a lookup stuck on a hanging archive then held up `ls` of its whole folder.
    /// (A lookup that begins after this call and before the kernel takes the reply in is not
    /// seen: the listing then waits for it, as it always did.)
    func beingLookedUp(in directory: UInt64) -> (String) -> Bool {
        guard let keys = lock.withLock({ lookups.isEmpty ? nil : Set(lookups.keys) }) else { return { _ in false } }
        return { keys.contains(Self.lookupKey(directory, $0)) }
    }

    /// Whether `offset` is past the end the last reply for `inode` reached (once): the kernel
    /// asks once more after every directory's last entries, and that answer is empty. Listing
    /// the directory again only to find nothing after it cost as much as the listing itself.
    func isPastEnd(_ inode: UInt64, offset: Int) -> Bool {
        lock.withLock {
            guard offset > 0, listedToEnd[inode] == offset else { return false }
            listedToEnd[inode] = nil
            return true
        }
    }

    init(filesystem: any MountedFilesystem, log: @escaping @Sendable (String) -> Void) {
        self.filesystem = filesystem
        self.log = log
    }

    deinit {
        diropsWatch.deallocate()
        deviceReaders.deallocate()
    }
}
