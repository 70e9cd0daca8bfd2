import Foundation
#if canImport(Glibc)
import Glibc
#endif
import InkyCore
import Synchronization
internal import CLinux

/// What a daemon's workers print on stderr, turned into log lines with levels. Inherited, their
/// stderr was the daemon's log itself, and the libraries' own notes landed there raw, with no
/// time or level (`- rar.c:65: Skipping directory entry "t"`, libunarr's). Now every worker of
/// the pool writes into one pipe, read here line by line: a worker's own notes (`inkyfs worker:
/// ...`, a page served as it is) are warnings, a Swift runtime's last words before a crash are
/// errors, and what a library printed is debug (the comic's own error says what failed).
final class WorkerOutput: Sendable {
    /// The pipe's write end, given to each worker as its fd 2; -1 once closed.
    private let writeEnd: Int32
    private let closed = Atomic<Bool>(false)

    init?(_ sink: @escaping LogSink) {
        var ends: [Int32] = [-1, -1]
        guard inky_pipe_cloexec(&ends) == 0 else { return nil }
        writeEnd = ends[1]
        let readEnd = ends[0]
        // A thread of its own: a read that blocks until a worker writes, or every write end closed.
        let thread = Thread {
            Self.readLines(readEnd) { sink(Self.line($0)) }
            Glibc.close(readEnd)
        }
        thread.name = "inkyfs worker output"
        thread.start()
    }

    /// The descriptor a new worker gets as its stderr; nil once the pool shut down.
    var descriptor: Int32? { closed.load(ordering: .acquiring) ? nil : writeEnd }

    /// Closes the write end: the reader ends once the last worker holding it has exited.
    func close() {
        if !closed.exchange(true, ordering: .acquiringAndReleasing) { Glibc.close(writeEnd) }
    }

    /// Each complete line read from `descriptor` until end of file, a last one without its newline too.
    static func readLines(_ descriptor: Int32, _ body: (String) -> Void) {
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = Syscall.retrying { buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) } }
            if count <= 0 { break }
            pending += buffer[..<count]
            while let newline = pending.firstIndex(of: 0x0A) {
                body(String(decoding: pending[..<newline], as: UTF8.self))
                pending.removeSubrange(...newline)
            }
            // A line without end is cut, not kept growing: a worker cannot fill the daemon's memory.
            if pending.count > 16_384 {
                body(String(decoding: pending, as: UTF8.self))
                pending.removeAll()
            }
        }
        if !pending.isEmpty { body(String(decoding: pending, as: UTF8.self)) }
    }

    /// The log line for one line a worker printed.
    static func line(_ text: String) -> LogLine {
        if text.hasPrefix("inkyfs worker: ") { return .warning("worker: " + text.dropFirst("inkyfs worker: ".count)) }
        // The debug-build test hook's report (CompromisedWorkerProbe), read back from the log.
        if text.hasPrefix("inkyfs-test-worker ") { return .info(text) }
        if text.contains("Fatal error") { return .error("worker: " + text) }
        return LogLine(.debug, "worker library: " + text)
    }
}
