import Foundation
import InkyCore
import XCTest

/// A real FUSE mount of a library by the built `inkyfs` binary, in the foreground as a child
/// of the test, so the test knows the daemon's pid and exit status. Teardown always runs
/// `fusermount3 -u -z`, so a crashed daemon never leaves "Transport endpoint is not connected".
public final class MountedLibrary {
    public let library: URL
    public let mountpoint: URL
    public let process: Process
    public let stateHome: URL
    private let output: Pipe
    private var outputClosed = false
    private let log = LogBuffer()

    /// `launcher`: a program and its arguments that run the daemon (setpriv with fewer rights, say).
    /// `covers`: show folder.jpg and .directory files; `views`: the metadata views (By Series/...),
    /// which appear while the listing pass reads the comics' tags. Both off unless a test is about
    /// them (or chooses its own `--views`), so other tests see the folders exactly as the library
    /// has them, at any moment.
    public init(library: URL, arguments: [String] = [], environment: [String: String] = [:], launcher: [String] = [],
                covers: Bool = false, views: Bool = false) throws {
        try Self.skipUnlessFUSEOpens()
        LeftoverProcesses.watching
        output = Pipe()
        self.library = library
        mountpoint = ArchiveMaker.temporaryDirectory("mnt")
        process = Process()
        let choosesViews = views || arguments.contains { $0 == "--views" || $0.contains("views=") }
        // A launcher may run the daemon as another user, who needs a binary it can reach.
        let executable = launcher.isEmpty ? CommandRunner.binary : CommandRunner.binaryForOtherUsers
        let command = launcher + [executable.path, "mount", "--foreground"] + (covers ? [] : ["--no-covers"])
            + (choosesViews ? [] : ["--views", "none"]) + arguments + [library.path, mountpoint.path]
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        // A state folder of the test's own (and a cache folder, for covers): never the machine's ~/.local/state.
        stateHome = ArchiveMaker.temporaryDirectory("state-home")
        process.environment = ProcessInfo.processInfo.environment.merging(["XDG_STATE_HOME": stateHome.path,
                                                                                   "XDG_CACHE_HOME": stateHome.path + "/cache"]) { $1 }
            .merging(environment) { $1 }
        process.standardOutput = output
        process.standardError = output
        output.fileHandleForReading.readabilityHandler = { [log] handle in log.append(handle.availableData) }
        try process.run()
        let deadline = Date().addingTimeInterval(20)
        while !Self.isMounted(mountpoint.path) {
            guard process.isRunning, Date() < deadline else {
                // A daemon that never mounts (spinning before it does) would never exit either.
                if process.isRunning { kill(process.processIdentifier, SIGKILL) }
                unmount()
                throw MountFailure(log: logText)
            }
            usleep(20_000)
        }
    }

    deinit { unmount() }

    /// Skips the test, saying why, when this user cannot open /dev/fuse (a container's 0600
    /// device, say): no mount can come up, and that is the machine's state, not a regression.
    /// Checked here, with open(2), not by reading the daemon's refusal, which could be its bug.
    public static func skipUnlessFUSEOpens() throws {
        let fd = open("/dev/fuse", O_RDWR)
        if fd >= 0 { close(fd); return }
        let why = String(cString: strerror(errno))
        throw XCTSkip("/dev/fuse does not open read-write for uid \(getuid()) (\(why)): mount tests need it (Debian's default is crw-rw-rw-)")
    }

    public var logText: String { log.text }

    /// Whether the daemon's log says `text` within `seconds`: its lines reach this process
    /// through a pipe and a handler on another queue, so a line written before the mount came
    /// up may arrive after it on a loaded machine.
    public func logSays(_ text: String, within seconds: Double = 10) -> Bool {
        waitUntil(seconds) { logText.contains(text) }
    }

    /// Whether `relative` shows under the mount within `seconds`: what the background listing
    /// pass makes (metadata views) appears some time after the mount comes up.
    public func appears(_ relative: String, within seconds: Double) -> Bool {
        waitUntil(seconds) { FileManager.default.fileExists(atPath: path(relative)) }
    }

    public func path(_ relative: String) -> String { mountpoint.appendingPathComponent(relative).path }

    /// FUSE requests the daemon has received, as libfuse's debug output lists them: mount with
    /// `-o debug`. libfuse prints a request before it is answered, so a request whose answer
    /// came back is in the pipe; its line is counted once the log has been still for 0.3 s.
    /// (The daemon's read(2) calls are no count: its device readers also read an empty device.)
    public func requestsReceived() -> Int {
        waitUntilSteady(10, still: 0.3) { logText.utf8.count }
        return logText.components(separatedBy: ", opcode: ").count - 1
    }

    public var isDaemonAlive: Bool { kill(process.processIdentifier, 0) == 0 && process.isRunning }

    /// `fusermount3 -u`, not lazy, as a user runs it: retried while the kernel says the mount is
    /// busy, until `seconds` pass. Right after a read, the mount can be busy for a moment with no
    /// program of the test's holding it (seen once in a full run under load); a test that means
    /// "unmount" waits for the mount to be free, and one that stays busy fails with its holders named.
    public func unmountOnceFree(within seconds: Double = 60) throws {
        var last: ArchiveMaker.ToolFailure?
        let freed = waitUntil(seconds) {
            do { _ = try ArchiveMaker.run("/usr/bin/fusermount3", ["-u", mountpoint.path]); return true }
            catch let failure as ArchiveMaker.ToolFailure where failure.stderr.contains("busy") { last = failure; return false }
            catch { last = error as? ArchiveMaker.ToolFailure; return true }
        }
        if let last, !freed || Self.isMounted(mountpoint.path) {
            throw UnmountFailure(failure: last, holders: MountHolders.of(mountpoint.path, excluding: nil))
        }
    }

    public struct UnmountFailure: Error, CustomStringConvertible {
        public let failure: ArchiveMaker.ToolFailure
        public let holders: [MountHolders.Holder]
        public var description: String {
            "\(failure); holders: " + (holders.isEmpty ? "none seen" : holders.map { "\($0.name) (pid \($0.pid): \($0.how))" }.joined(separator: ", "))
        }
    }

    /// Unmounts (lazily, so it always works) and waits for the daemon; returns its exit status.
    @discardableResult
    public func unmount() -> Int32? {
        if Self.isMounted(mountpoint.path) || process.isRunning {
            _ = try? ArchiveMaker.run("/usr/bin/fusermount3", ["-u", "-z", mountpoint.path])
        }
        let status = process.waitForExit()
        // The handler keeps the pipe's dispatch source, and with it the log, alive until cleared
        // (LeakSanitizer reported it under scripts/dev/sanitize address).
        output.fileHandleForReading.readabilityHandler = nil
        if !outputClosed {
            drainLog()
            // XCTest keeps every test case object, and with it any mount a test kept in a
            // property, until the run ends: an open pipe per mount added up to thousands of
            // descriptors in one run.
            try? output.fileHandleForReading.close()
            outputClosed = true
        }
        try? FileManager.default.removeItem(at: mountpoint)
        try? FileManager.default.removeItem(at: stateHome)
        return status
    }

    /// Reads what the daemon wrote and the handler had not yet taken, once it has exited: after
    /// `unmount()` the log is whole, so a test may check that something was never logged.
    private func drainLog() {
        let fd = output.fileHandleForReading.fileDescriptor
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0 else { return }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let got = read(fd, &buffer, buffer.count)
            if got > 0 { log.append(Data(buffer[0..<got])); continue }
            if got < 0 && errno == EINTR { continue }
            return
        }
    }

    /// Unmounts and returns the daemon's whole log: read once the daemon has exited and the pipe
    /// is drained, its last line "unmounted MOUNTPOINT" (checked, with exit status 0). What a test
    /// says was never logged is known only then; checked earlier, a line on its way passes.
    public func wholeLogAfterUnmount(file: StaticString = #filePath, line: UInt = #line) -> String {
        XCTAssertEqual(unmount(), 0, "the daemon exits 0 on unmount", file: file, line: line)
        let text = logText
        XCTAssertTrue(text.contains("unmounted \(mountpoint.path)"), "the log is whole, to its last line: \(text)", file: file, line: line)
        return text
    }

    public static func isMounted(_ path: String) -> Bool {
        guard let mounts = ProcFile.read("/proc/self/mounts") else { return false }
        let escaped = path.replacingOccurrences(of: " ", with: "\\040")
        return mounts.split(separator: "\n").contains { $0.split(separator: " ").dropFirst().first.map(String.init) == escaped }
    }

    public struct MountFailure: Error, CustomStringConvertible {
        public let log: String
        public var description: String { "the mount did not come up:\n\(log)" }
    }

    /// Pids of the daemon's worker processes. A child is listed under the thread that spawned
    /// it, and workers are spawned from any thread: every task's children count.
    public var workerPIDs: [Int32] { Self.childPIDs(of: process.processIdentifier) }

    /// Workers with a thread named `name`: the debug build's fault hook names the thread that
    /// stalls in a page read "inky-stall", so a test sees that a worker is inside that read now
    /// rather than sleeping and hoping it is.
    public func workers(withThreadNamed name: String) -> [Int32] {
        workerPIDs.filter { pid in
            let tasks = "/proc/\(pid)/task"
            return ((try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? []).contains { task in
                (try? String(contentsOfFile: "\(tasks)/\(task)/comm", encoding: .utf8))?.trimmingCharacters(in: .newlines) == name
            }
        }
    }

    /// Children of `pid`, whichever of its threads spawned them.
    public static func childPIDs(of pid: Int32) -> [Int32] {
        // By each process's parent in /proc/N/stat, not by /proc/PID/task/*/children: those list a
        // child under the thread that started it (a FUSE thread, which libfuse may end), and move
        // it when that thread ends; the kernel documents them as unreliable for that.
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { entry -> Int32? in
            guard let child = Int32(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let end = stat.lastIndex(of: ")") else { return nil }
            // "pid (comm) state ppid …": the name may hold spaces and parentheses, the fields after its last ")" do not.
            let fields = stat[stat.index(after: end)...].split(separator: " ")
            return fields.count > 1 && Int32(fields[1]) == pid ? child : nil
        }.sorted()
    }
}

/// The daemon's output, collected from a pipe handler thread.
final class LogBuffer: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    func append(_ more: Data) { lock.withLock { data.append(more) } }
    var text: String { lock.withLock { String(decoding: data, as: UTF8.self) } }
}

/// Reads a whole file through the kernel, like any program would.
public func readFile(_ path: String) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
}

/// A file's size as `stat` gives it (what a lookup through the mount answers), nil when stat fails.
public func statSize(_ path: String) -> Int64? {
    var info = stat()
    return stat(path, &info) == 0 ? Int64(info.st_size) : nil
}
