import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Deliberate worker failures for the isolation tests, which must see a real crash and a real
/// hang of a worker process through a real mount. Set `INKYFS_TEST_WORKER_FAULT` to
/// `crash:TEXT` or `hang:TEXT` (any request about a path containing TEXT), or `crash-read:TEXT`
/// / `hang-read:TEXT` (only page reads, after a good listing): the worker then dies of SIGSEGV
/// or stops answering. `stall-read:TEXT` answers page reads 3 s late, long enough for a test to
/// kill the worker in the middle of one. Unset (always, outside tests) it does nothing.
enum WorkerFault {
    static let setting: (kind: Substring, text: Substring)? = {
        guard let value = ProcessInfo.processInfo.environment["INKYFS_TEST_WORKER_FAULT"],
              let colon = value.firstIndex(of: ":") else { return nil }
        return (value[..<colon], value[value.index(after: colon)...])
    }()

    static func inject(for request: WorkerRequest) {
        guard let setting, !setting.text.isEmpty else { return }
        let (path, isRead): (String, Bool) = switch request {
        case .list(let path, _): (path, false)
        case .comicInfo(let path, _, _): (path, false)
        case .read(let path, _, _, _): (path, true)
        case .useKey(let path): (path, false)
        }
        guard path.contains(setting.text) else { return }
        switch setting.kind {
        case "crash", "crash-read" where isRead:
            // A real invalid access, as a decoder bug would make; raise() would return from the handler.
            UnsafeMutablePointer<Int>(bitPattern: 16)!.pointee = 1
        case "hang", "hang-read" where isRead: while true { sleep(1000) }
        case "stall-read" where isRead: sleep(3)
        default: return
        }
    }
}
