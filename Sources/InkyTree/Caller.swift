import Foundation

/// Who made a request: the thread and user the kernel names with it (FUSE's request context).
/// The library tells a person paging through a comic from a thumbnailer, or from another user
/// of an `allow_other` mount, by it.
public struct Caller: Sendable, Equatable {
    /// The requesting thread's id as the daemon's pid namespace sees it; 0 when the kernel
    /// could not name it there (a process in a namespace the daemon cannot see).
    public var pid: Int32
    public var uid: UInt32

    public init(pid: Int32, uid: UInt32) {
        self.pid = pid
        self.uid = uid
    }

    /// This process, as its own user: for reads made in-process (tests, a front end calling
    /// the library directly), which count as the mounting user's.
    public static var thisProcess: Caller { Caller(pid: getpid(), uid: getuid()) }
}
