import Foundation
#if canImport(Glibc)
import Glibc
#endif
import InkyCore
import InkyWorker
import Synchronization

/// The daemon's end of its control socket: `$XDG_RUNTIME_DIR/inkyfs/<hash of mountpoint>.sock`,
/// in a 0700 folder, the socket 0600, and every peer's uid checked with SO_PEERCRED, so only
/// the user who mounted can unlock or lock, even if the path were reachable. Connections are
/// served one at a time on a thread of its own, each within `connectionSeconds` however slowly
/// it trickles; a malformed one gets a `failed` reply (read and dropped for `drainSeconds` more,
/// so the reply is not lost to a reset) and is closed, and the server goes on.
/// Wrong passwords are throttled (`PasswordThrottle`).
public final class ControlServer: Sendable {
    /// Answers a request; `password` is set for `.unlock` and must be copied, not kept: its
    /// buffer is wiped when the handler returns.
    public typealias Handler = @Sendable (ControlRequest, UnsafeRawBufferPointer?) -> ControlReply

    public let path: String
    /// The checked runtime folder, open for the server's life: the socket is bound and removed
    /// through it, never through a path someone could have swapped.
    private let folder: ControlPaths.Folder
    private let socketName: String
    private let mountpoint: String
    private let listener: Int32
    private let handler: Handler
    private let log: LogSink
    private let stopped = Atomic(false)
    /// Touched only by the serving thread (the mutex is never contended).
    private let throttle = Mutex(PasswordThrottle())
    /// The longest one connection may take, from accept to the last byte of its request.
    static let connectionSeconds = 5.0
    /// How long a refused or malformed connection is read (and dropped) after its reply.
    static let drainSeconds = 1.0

    public init(mountpoint: String, log: @escaping LogSink = { _ in }, handler: @escaping Handler) throws(ControlError) {
        folder = try ControlPaths.folder(create: true)
        socketName = ControlPaths.socketName(for: mountpoint)
        path = folder.path + "/" + socketName
        let local = folder.through(socketName)
        unlink(local)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .system(Errno.current) }
        var address: sockaddr_un
        do throws(Errno) { address = try ControlPaths.address(local) } catch { throw .system(error) }
        let previous = umask(0o177) // the socket is created 0600
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        umask(previous)
        guard bound == 0, chmod(local, 0o600) == 0, listen(fd, 8) == 0 else {
            let error = Errno.current
            close(fd)
            throw .system(error)
        }
        listener = fd
        self.mountpoint = mountpoint
        self.log = log
        self.handler = handler
        let thread = Thread { [self] in serve() }
        thread.name = "inkyfs.control"
        thread.start()
    }

    /// Stops accepting and removes the socket.
    public func stop() {
        stopped.store(true, ordering: .releasing)
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        unlink(folder.through(socketName))
    }

    private var isStopped: Bool { stopped.load(ordering: .acquiring) }

    private func serve() {
        while !isStopped {
            let connection = Syscall.retrying { HiddenCalls.acceptClosingOnExec(listener) }
            if connection < 0 { return }
            handle(FrameChannel(fd: connection))
        }
    }

    private func handle(_ channel: FrameChannel) {
        func answer(_ outcome: ControlReply.Outcome, _ message: String, retryAfter: Double? = nil) {
            _ = try? channel.send(WorkerFrame.encode(ControlReply(outcome: outcome, message: message, mountpoint: mountpoint, retryAfter: retryAfter)))
        }
        /// A refusal is sent before the request was read: closing on unread bytes would reset
        /// the connection and the caller would see EIO instead of the reason.
        func refuse(_ outcome: ControlReply.Outcome, _ message: String) {
            answer(outcome, message)
            channel.drain(for: Self.drainSeconds, upTo: 64 << 10)
        }
        let peer = Self.peer(channel.fd)
        guard let peer, peer.uid == getuid() else {
            // Said plainly to the caller and to the log: never a silent hang-up.
            log("control socket: refused a connection from uid \(peer.map { String($0.uid) } ?? "?") pid \(peer.map { String($0.pid) } ?? "?")")
            return refuse(.refused, "permission denied: this mount belongs to uid \(getuid())")
        }
        let deadline = DispatchTime.now() + Self.connectionSeconds
        guard case .message(let json)? = try? channel.receive(timeout: Self.connectionSeconds, deadline: deadline,
                                                              maxLength: ControlReply.maxRequestLength),
              let request = ControlReply.parseRequest(Array(json)) else {
            log("control socket: dropped a malformed or incomplete request from pid \(peer.pid)")
            return refuse(.failed, "malformed request")
        }
        guard request.carriesPassword else {
            _ = try? channel.send(WorkerFrame.encode(handler(request, nil)))
            return
        }
        guard case .data(var password)? = try? channel.receive(timeout: Self.connectionSeconds, deadline: deadline,
                                                               maxLength: ControlReply.maxPasswordLength) else {
            log("control socket: dropped an unlock without a password from pid \(peer.pid)")
            return refuse(.failed, "malformed request: no password")
        }
        defer { _ = password.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 0) } }
        let now = Self.now()
        let wait = throttle.withLock { $0.remaining(now: now) }
        guard wait == 0 else {
            return answer(.throttled, "too many wrong passwords: try again in \(String(format: "%.1f", wait)) s", retryAfter: wait)
        }
        var reply = password.withUnsafeBytes { handler(request, $0) }
        switch reply.outcome {
        case .wrongPassword:
            let (retryAfter, failures) = throttle.withLock { throttle in (throttle.failed(now: Self.now()), throttle.failures) }
            reply.retryAfter = retryAfter
            if failures > 1 { log("control socket: \(failures) wrong vault passwords in a row") }
        case .ok:
            throttle.withLock { $0.succeeded() }
        default:
            break
        }
        _ = try? channel.send(WorkerFrame.encode(reply))
    }

    private static func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    /// The process at the other end (SO_PEERCRED: fixed when it connected), nil if unknown.
    static func peer(_ fd: Int32) -> (pid: Int32, uid: UInt32)? {
        // struct ucred is a GNU name Swift's Glibc module hides; its layout is the kernel's ABI.
        struct PeerCredentials { var pid: Int32 = 0; var uid: UInt32 = UInt32.max; var gid: UInt32 = UInt32.max }
        var credentials = PeerCredentials()
        var length = socklen_t(MemoryLayout<PeerCredentials>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0,
              length == socklen_t(MemoryLayout<PeerCredentials>.size) else { return nil }
        return (credentials.pid, credentials.uid)
    }
}

/// The command line's end: finds the running mounts and asks one of them.
public enum ControlClient {
    /// Sends `request` (with `password` for `.unlock`) to the mount at `mountpoint`.
    public static func send(_ request: ControlRequest, to mountpoint: String, password: UnsafeRawBufferPointer? = nil) throws(ControlError) -> ControlReply {
        try send(request, in: ControlPaths.folder(create: false), name: ControlPaths.socketName(for: mountpoint), password: password)
    }

    /// Dials through the checked folder's descriptor, and says nothing, password or request,
    /// before SO_PEERCRED shows the listener is this user's: a socket planted by someone else
    /// (should a folder check ever be beaten) hears not a byte.
    static func send(_ request: ControlRequest, in folder: ControlPaths.Folder, name: String,
                     password: UnsafeRawBufferPointer?) throws(ControlError) -> ControlReply {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .system(Errno.current) }
        let channel = FrameChannel(fd: fd)
        var address: sockaddr_un
        do throws(Errno) { address = try ControlPaths.address(folder.through(name)) } catch { throw .system(error) }
        let connected = withExtendedLifetime(folder) {
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
        }
        guard connected == 0 else { throw .system(Errno.current) }
        guard let peer = ControlServer.peer(fd), peer.uid == getuid() else {
            throw .impostor("\(folder.path)/\(name) is served by uid \(ControlServer.peer(fd).map { String($0.uid) } ?? "?"),"
                            + " not by you (uid \(getuid())): nothing was sent to it")
        }
        do throws(FrameChannel.Failure) {
            try channel.send(WorkerFrame.encode(request))
            if let password { try channel.sendData(password) }
            // An unlock derives a key, which a loaded machine may take seconds over. A status is
            // answered at once by a daemon that runs, or after the clients ahead of it (each within
            // its deadline; two stalled ones take 12 s): `inkyfs status` waited 30 s on one stopped.
            let seconds = request == .status ? 2 * (ControlServer.connectionSeconds + ControlServer.drainSeconds) + 3 : 30
            guard case .message(let json) = try channel.receive(timeout: seconds),
                  let reply = try? JSONDecoder().decode(ControlReply.self, from: json) else { throw .malformed }
            return reply
        } catch {
            throw .system(.EIO)
        }
    }

    /// Why no control socket can be used at all (the runtime folder is not private), nil if one can.
    public static func folderProblem() -> String? {
        do throws(ControlError) {
            _ = try ControlPaths.folder(create: false)
            return nil
        } catch .system(let code) where code.code == ENOENT {
            return nil
        } catch {
            return "\(error)"
        }
    }

    /// Mountpoints of running mounts of this user that answer `status`.
    public static func runningMounts() -> [String] { statuses().map(\.mountpoint) }

    /// The archive a file or comic directory of an inkyfs mount comes from (its
    /// `user.inkyfs.archive` attribute), or nil for anything else: what `vault add` names
    /// instead of a page of a mount.
    public static func mountedArchive(of path: String) -> String? {
        var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = buffer.withUnsafeMutableBytes { HiddenCalls.extendedAttribute(path, "user.inkyfs.archive", into: $0) }
        return length > 0 ? String(decoding: buffer.prefix(length), as: UTF8.self) : nil
    }

    /// The `status` answer of every running mount of this user.
    public static func statuses() -> [ControlReply] {
        guard let folder = try? ControlPaths.folder(create: false),
              let names = try? FileManager.default.contentsOfDirectory(atPath: folder.through("")) else { return [] }
        return names.filter { $0.hasSuffix(".sock") }.sorted().compactMap { name in
            try? send(.status, in: folder, name: name, password: nil)
        }
    }
}
