import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Deliberate worker failures for the isolation tests, which must see a real crash and a real
/// hang of a worker process through a real mount. Set `INKYFS_TEST_WORKER_FAULT` to
/// `crash:TEXT` or `hang:TEXT`: a worker asked about a path containing TEXT then dies of
/// SIGSEGV or spins forever. Unset (always, outside tests) it does nothing.
enum WorkerFault {
    static let setting: (kind: Substring, text: Substring)? = {
        guard let value = ProcessInfo.processInfo.environment["INKYFS_TEST_WORKER_FAULT"],
              let colon = value.firstIndex(of: ":") else { return nil }
        return (value[..<colon], value[value.index(after: colon)...])
    }()

    static func inject(for request: WorkerRequest) {
        guard let setting, !setting.text.isEmpty else { return }
        let path: String = switch request {
        case .list(let path, _), .read(let path, _, _, _), .comicInfo(let path, _, _): path
        }
        guard path.contains(setting.text) else { return }
        switch setting.kind {
        case "crash": raise(SIGSEGV)
        case "hang": while true { sleep(1000) }
        default: return
        }
    }
}
