import Foundation
#if canImport(Glibc)
import Glibc
#endif
import InkyCore
import InkyWorker

/// Deliberate worker failures for the isolation tests, which must see a real crash and a real
/// hang of a worker process through a real mount. Set `INKYFS_TEST_WORKER_FAULT` to
/// `crash:TEXT` or `hang:TEXT` (any request about a path containing TEXT), or `crash-read:TEXT`
/// / `hang-read:TEXT` (only page reads, after a good listing): the worker then dies of SIGSEGV
/// or stops answering. `probe:TEXT` makes the listing of such a comic try what the seccomp
/// filter forbids and fail with the errno of each try, so ERROR.txt shows what a hijacked
/// decoder would get. `stall-read:TEXT` holds page reads while the file named by
/// `INKYFS_TEST_WORKER_HOLD` exists (at most 120 s), so a test kills the worker, or locks the
/// vault, in the middle of one and then lets it go: a fixed delay raced a loaded machine.
/// `hold-cover:TEXT` holds a cover's making the same way, so a test decides when a cover may come
/// (`-cover` forms act on cover requests only). While it stalls, the worker's thread is named
/// `inky-stall` (/proc/PID/task/TID/comm; naming a thread is all the seccomp filter lets a worker
/// show), so a test waits until a worker is inside the read instead of sleeping and hoping it is;
/// a hanging worker's thread is named `inky-hang` the same way.
/// `hostile-listing:TEXT` sends an impossible listing (`tamper`).
/// Unset it does nothing, and a release build has no such hook at all: the setting is never read
/// (the tests run the debug build).
enum WorkerFault {
    static let setting: (kind: Substring, text: Substring)? = {
        #if DEBUG
        guard let value = ProcessInfo.processInfo.environment["INKYFS_TEST_WORKER_FAULT"],
              let colon = value.firstIndex(of: ":") else { return nil }
        return (value[..<colon], value[value.index(after: colon)...])
        #else
        return nil
        #endif
    }()

    static func inject(for request: WorkerRequest) {
        guard let setting, !setting.text.isEmpty else { return }
        let (path, only): (String, String) = switch request {
        case .list(let path, _): (path, "")
        case .comicInfo(let path, _, _): (path, "")
        case .cover(let path, _, _, _, _): (path, "-cover")
        case .read(let path, _, _, _): (path, "-read")
        case .useKey(let path): (path, "")
        }
        guard path.contains(setting.text) else { return }
        // "crash" and "hang" on any request, the "-read" and "-cover" forms only on those requests.
        let kind = !only.isEmpty && setting.kind.hasSuffix(only) ? setting.kind.dropLast(only.count) : setting.kind
        let isRead = only == "-read"
        switch kind {
        case "crash":
            // A real invalid access, as a decoder bug would make; raise() would return from the handler.
            UnsafeMutablePointer<Int>(bitPattern: 16)!.pointee = 1
        case "hang":
            Thread.current.name = "inky-hang"
            while true { sleep(1000) }
        case "stall" where isRead:
            let name = Thread.current.name
            Thread.current.name = "inky-stall"
            holdWhileTheFileExists(atMost: 120)
            Thread.current.name = name ?? ""
        case "hold" where only == "-cover":
            holdWhileTheFileExists()
        default: return
        }
    }

    /// Waits while the file named by `INKYFS_TEST_WORKER_HOLD` exists (not at all when unset),
    /// `seconds` at most: the test removes it when the worker may go on.
    private static func holdWhileTheFileExists(atMost seconds: Double = .infinity) {
        let file = ProcessInfo.processInfo.environment["INKYFS_TEST_WORKER_HOLD"] ?? ""
        let until = Date().addingTimeInterval(seconds)
        while !file.isEmpty, access(file, F_OK) == 0, Date() < until { usleep(10_000) }
    }

    /// For `hostile-listing:TEXT`: the listing a hijacked worker might send instead, a page name
    /// of 300 bytes and a size past every limit; the daemon must refuse it, not trap on it.
    static func tamper(_ listing: ComicListing, path: String) -> ComicListing {
        guard let setting, setting.kind == "hostile-listing", path.contains(setting.text), !listing.pages.isEmpty else { return listing }
        var hostile = listing
        hostile.pages[0].name = String(repeating: "a", count: 300) + ".jpg"
        hostile.pages[0].size = .max
        return hostile
    }

    /// The errnos of forbidden calls, for `probe:TEXT`; nil for any other path or setting.
    static func probe(_ path: String) -> String? {
        guard let setting, setting.kind == "probe", !setting.text.isEmpty, path.contains(setting.text) else { return nil }
        func result(_ value: Int32) -> String { value >= 0 ? "allowed" : String(cString: strerror(errno)) }
        var lines: [String] = []
        let written = "/tmp/inkyfs-probe-\(getpid())"
        let file = open(written, O_WRONLY | O_CREAT, 0o600)
        lines.append("open for writing: \(result(file))")
        if file >= 0 { close(file) }
        lines.append("open read-only: \(result({ let fd = open(path, O_RDONLY); if fd >= 0 { close(fd) }; return fd }()))")
        // posix_fadvise gives its error number back rather than setting errno. On a file Landlock
        // leaves it (its comics come as descriptors): the filter, not the file, answers.
        let comic = open("/etc/ld.so.cache", O_RDONLY)
        for (name, advice) in [("read-ahead advice", POSIX_FADV_WILLNEED), ("drop advice", POSIX_FADV_DONTNEED)] {
            let failed = posix_fadvise(comic, 0, 4096, advice)
            lines.append("\(name): \(failed == 0 ? "allowed" : String(cString: strerror(failed)))")
        }
        if comic >= 0 { close(comic) }
        let network = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        lines.append("socket: \(result(network))")
        if network >= 0 { close(network) }
        lines.append("kill the daemon: \(result(kill(getppid(), 0)))")
        let child = fork()
        if child == 0 { _exit(0) }
        lines.append("fork: \(result(child))")
        lines.append("execve: \(result(execve("/bin/true", [nil], [nil])))")
        return "probe " + written + "\n" + lines.joined(separator: "\n")
    }
}
