import Foundation

/// A test hook of debug builds: while the file named by `INKYFS_TEST_VIEW_HOLD` exists, a
/// metadata view's tree is not made (the making waits before it reads the index), so a test
/// can show through a real mount what is served while the views are being built. A release
/// build has no such hook: the setting is never read.
enum ViewBuildHold {
    static let file: String? = {
        #if DEBUG
        ProcessInfo.processInfo.environment["INKYFS_TEST_VIEW_HOLD"].flatMap { $0.isEmpty ? nil : $0 }
        #else
        nil
        #endif
    }()

    static func wait() {
        guard let file else { return }
        while access(file, F_OK) == 0 { usleep(10_000) }
    }
}
