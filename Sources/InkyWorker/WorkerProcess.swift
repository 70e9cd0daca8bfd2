import Foundation
#if canImport(Glibc)
import Glibc
#endif
import InkyCore

/// One worker process as the daemon sees it: spawned from our own executable in worker mode,
/// reached over a socketpair, killed and reaped when it misbehaves.
final class WorkerProcess {
    let pid: pid_t
    /// Its stderr goes to /dev/null (not the daemon's log).
    let isQuiet: Bool
    /// It loaded the image library at its start: it can convert and make covers.
    let hasImages: Bool
    /// The vault object whose key this worker was given: from then on it serves that object only.
    var vaultObject: String?
    private let channel: FrameChannel
    private var reaped = false
    /// SIGKILL was sent by `signalEnd()`: a kill seen when reaping is ours, not from outside.
    private var killSent = false

    /// Starts `executable arguments…` with the socket as fd 3, stdin and stdout on /dev/null
    /// (a library printing to stdout must not corrupt the protocol) and stderr on `output` (the
    /// pool's `WorkerOutput`), else inherited. `images`: the kind the pool chose, which its
    /// `arguments` ask for (`Configuration.spawnArguments`).
    init(executable: String, arguments: [String], images: Bool, quiet: Bool = false, output: Int32? = nil) throws(ComicError) {
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw .parserFailed(path: executable, detail: "cannot create a socket pair: \(String(cString: strerror(errno)))")
        }
        let child: pid_t
        do throws(Errno) {
            var files: [ProcessSpawner.FileAction] = [
                .duplicate(pair[1], as: 3),
                .open("/dev/null", flags: O_RDONLY, as: 0),
                .open("/dev/null", flags: O_WRONLY, as: 1),
            ]
            if quiet {
                files.append(.open("/dev/null", flags: O_WRONLY, as: 2))
            } else if let output {
                files.append(.duplicate(output, as: 2))
            }
            // A crash is expected and reported as a typed error; no backtrace in the log.
            child = try ProcessSpawner.spawn(executable, arguments, files: files,
                                             environment: ProcessHardening.workerEnvironment.merging(["SWIFT_BACKTRACE": "enable=no"]) { $1 })
        } catch {
            close(pair[0])
            close(pair[1])
            throw .parserFailed(path: executable, detail: "cannot start a worker (\(executable)): \(error)")
        }
        close(pair[1])
        pid = child
        isQuiet = quiet
        hasImages = images
        channel = FrameChannel(fd: pair[0])
    }

    deinit { terminate() }

    func send(_ request: WorkerRequest) throws(FrameChannel.Failure) {
        try channel.send(WorkerCodec.frame(request))
    }

    /// A request and, in a data frame right after it, the files it reads as descriptors (one
    /// `sendmsg` for both while they fit one; `RequestFiles`).
    func send(_ request: WorkerRequest, files: RequestFiles?) throws(FrameChannel.Failure) {
        guard let files else { return try send(request) }
        let payload = files.payload
        try channel.send(WorkerCodec.frame(request) + WorkerFrame.header(length: payload.count, kind: 2) + payload,
                         descriptors: files.descriptors)
    }

    /// A data frame straight from `payload` (a key in locked memory: no copy of it is made).
    func send(data payload: UnsafeRawBufferPointer) throws(FrameChannel.Failure) {
        try channel.sendData(payload)
    }

    /// The next frame, lent to `body` (data points into the channel's buffer).
    func receive(timeout: Double, _ body: (FrameChannel.BorrowedFrame) -> Void) throws(FrameChannel.Failure) {
        try channel.receive(timeout: timeout, body)
    }

    /// Kills the worker (if still running) and says how it ended, in words for ERROR.txt.
    /// `grace`: seconds a worker whose socket just closed may take to finish dying, so a kill
    /// from outside is not mistaken for our own.
    @discardableResult
    func terminate(grace: Double = 0) -> String {
        ending(grace: grace).description
    }

    /// How a worker ended: `killedFromOutside` is a SIGKILL we did not send (the OOM killer, an
    /// administrator), which says nothing about the archive it was reading.
    struct Ending: CustomStringConvertible {
        var signal: Int32
        var status: Int32
        var killedFromOutside: Bool
        var description: String {
            if signal != 0 {
                let name = signal == SIGKILL ? "killed" : signal == SIGXCPU ? "CPU time limit" : "signal \(signal)"
                return "crashed (\(name))"
            }
            return "exited with status \(status)"
        }
    }

    /// Sends SIGKILL without waiting: workers stopped together give back their memory side by
    /// side (a few ms each) while the caller goes on; `terminate()` reaps them after.
    func signalEnd() {
        guard !reaped, !killSent else { return }
        killSent = true
        kill(pid, SIGKILL)
    }

    /// Waits until the worker has exited, leaving it unreaped: a process about to end leaves
    /// its dead children to whoever adopts them (a subreaper or PID 1). Reaping one frees its
    /// /proc entries, which took 0-6 ms a worker at unmount, on the way out of the daemon.
    func awaitExit() {
        signalEnd()
        var info = siginfo_t()
        _ = Syscall.retrying { waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) }
    }

    func ending(grace: Double = 0) -> Ending {
        guard !reaped else { return Ending(signal: 0, status: 0, killedFromOutside: false) }
        reaped = true
        var status: Int32 = 0
        // A worker that already exited is reaped at once; otherwise it is killed first.
        var exited = waitpid(pid, &status, WNOHANG) == pid
        let deadline = Date().addingTimeInterval(grace)
        while !exited && Date() < deadline {
            usleep(2_000)
            exited = waitpid(pid, &status, WNOHANG) == pid
        }
        if !exited {
            kill(pid, SIGKILL)
            _ = Syscall.retrying { waitpid(pid, &status, 0) }
        }
        let signal = status & 0x7F
        return Ending(signal: signal, status: (status >> 8) & 0xFF, killedFromOutside: exited && signal == SIGKILL && !killSent)
    }
}
