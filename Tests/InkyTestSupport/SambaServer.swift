import Foundation
import InkyCore

/// A private Samba server on loopback sharing one folder read-only to guests, for tests that
/// export a mount. It has its own smb.conf, state folders and port, so it neither needs nor
/// touches the machine's Samba setup. `stop()` (also run at deinit) ends smbd and every process
/// it forked: one left behind would keep the shared mount busy, and with it the inkyfs daemon
/// alive after a lazy unmount.
public final class SambaServer {
    public static let smbd = "/usr/sbin/smbd"
    public static let smbclient = "/usr/bin/smbclient"
    public static var isInstalled: Bool {
        FileManager.default.isExecutableFile(atPath: smbd) && FileManager.default.isExecutableFile(atPath: smbclient)
    }

    public let share = "comics"
    public let port: UInt16
    private let folder = ArchiveMaker.temporaryDirectory("samba")
    private let process = Process()
    /// smbd in the foreground exits at end of file on stdin (the test runner's may be /dev/null):
    /// it gets a pipe that stays open until stop().
    private let input = Pipe()
    private var configuration: String { folder.appendingPathComponent("smb.conf").path }
    private var outputPath: String { folder.appendingPathComponent("smbd.out").path }

    public init(sharing path: String) throws {
        port = try LoopbackPort.free()
        try writeConfiguration(sharing: path)
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        process.executableURL = URL(fileURLWithPath: Self.smbd)
        // --foreground: a child the test can wait for and stop, not a daemon forked away.
        // --no-process-group: otherwise smbd calls setsid(), which fails ("Failed to create
        // session") because Process already made it a process group leader.
        process.arguments = ["--foreground", "--no-process-group", "--debug-stdout", "-d", "1", "-s", configuration]
        let output = FileHandle(forWritingAtPath: outputPath)
        process.standardOutput = output
        process.standardError = output
        process.standardInput = input
        try process.run()
        try? output?.close()
        let deadline = Date().addingTimeInterval(20)
        while !LoopbackPort.accepts(port) {
            guard process.isRunning, Date() < deadline else {
                let log = self.log
                stop()
                throw StartFailure(log: log)
            }
            usleep(20_000)
        }
    }

    deinit { stop() }

    /// smbd's own output, to explain a failure.
    public var log: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }

    /// Runs smbclient's `commands` (`;`-separated) in one guest session on the share.
    public func client(_ commands: String) throws -> CommandRunner.Result {
        // Our smb.conf for the client too: its caches go to the private folder, not /var/cache/samba.
        try CommandRunner.capture(Self.smbclient, ["//127.0.0.1/\(share)", "-p", "\(port)", "-N", "-s", configuration, "-c", commands])
    }

    /// Ends smbd, then waits until every process it forked (notifyd, cleanupd, one per client
    /// connection) is gone too; they leave once their parent does. Bounded: SIGKILL after 10 s.
    public func stop() {
        if process.processIdentifier > 0 {
            let forked = Self.descendants(of: process.processIdentifier)
            if process.isRunning { kill(process.processIdentifier, SIGTERM) }
            try? input.fileHandleForWriting.close()
            waitUntilGone([process.processIdentifier] + forked)
            _ = process.waitForExit()
        }
        try? FileManager.default.removeItem(at: folder)
    }

    private func waitUntilGone(_ pids: [Int32]) {
        let deadline = Date().addingTimeInterval(10)
        var living = pids
        while true {
            living = living.filter(Self.isAlive)
            if living.isEmpty { return }
            if Date() >= deadline {
                living.forEach { kill($0, SIGKILL) }
                return
            }
            usleep(20_000)
        }
    }

    /// Alive and not a zombie: a zombie holds no file or folder of the mount any more (smbd
    /// itself, our child, is reaped by waitForExit afterwards).
    private static func isAlive(_ pid: Int32) -> Bool {
        guard let stat = ProcFile.read("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else { return false }
        return !stat[stat.index(after: close)...].hasPrefix(" Z")
    }

    private static func descendants(of pid: Int32) -> [Int32] {
        MountedLibrary.childPIDs(of: pid).flatMap { [$0] + descendants(of: $0) }
    }

    private func writeConfiguration(sharing path: String) throws {
        let state = ["lock", "state", "cache", "pid", "private", "ncalrpc"].map { folder.appendingPathComponent($0).path }
        for directory in state { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
        let text = """
            [global]
              server role = standalone server
              smb ports = \(port)
              interfaces = lo
              bind interfaces only = yes
              disable netbios = yes
              lock directory = \(state[0])
              state directory = \(state[1])
              cache directory = \(state[2])
              pid directory = \(state[3])
              private dir = \(state[4])
              ncalrpc dir = \(state[5])
              passdb backend = tdbsam:\(state[4])/passdb.tdb
              log file = \(folder.path)/smbd.log
              map to guest = Bad User
              guest account = nobody
              load printers = no
              printing = bsd
              printcap name = /dev/null
              disable spoolss = yes
            [\(share)]
              path = \(path)
              read only = yes
              guest ok = yes

            """
        try text.write(toFile: configuration, atomically: true, encoding: .utf8)
    }

    public struct StartFailure: Error, CustomStringConvertible {
        public let log: String
        public var description: String { "smbd did not start listening:\n\(log)" }
    }
}

/// TCP on 127.0.0.1, for servers a test starts.
public enum LoopbackPort {
    /// A port nothing listens on now: the kernel's pick for a socket bound to port 0.
    public static func free() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        defer { close(fd) }
        var address = loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        return UInt16(bigEndian: address.sin_port)
    }

    /// Whether something accepts a connection on the port now.
    public static func accepts(_ port: UInt16) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = loopback(port: port)
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }
}
