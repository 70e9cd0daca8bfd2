import Foundation

/// A test hook of debug builds: with `INKYFS_TEST_WATCH_LIMIT=N` the library watcher's
/// `inotify_add_watch` fails with ENOSPC, as the kernel's `fs.inotify.max_user_watches` makes it
/// fail, once N watches are in place. A test shows the fallback (a rescan every 30 s, the kernel
/// keeping names for `--tree-timeout` only) through a real mount without lowering the machine's
/// limit, which every other process shares. A release build never reads the setting.
enum WatchLimitHook {
    static let limit: Int? = {
        #if DEBUG
        ProcessInfo.processInfo.environment["INKYFS_TEST_WATCH_LIMIT"].flatMap { Int($0) }
        #else
        nil
        #endif
    }()

    /// `inotify_add_watch(fd, path, mask)`, or -1 with errno ENOSPC when `watching` watches
    /// already reach the test's limit.
    static func addWatch(_ fd: Int32, _ path: String, _ mask: UInt32, watching: Int) -> Int32 {
        if let limit, watching >= limit {
            errno = ENOSPC
            return -1
        }
        return inotify_add_watch(fd, path, mask)
    }
}
