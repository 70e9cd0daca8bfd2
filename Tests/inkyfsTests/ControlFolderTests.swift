import Foundation
import InkyTestSupport
import XCTest

/// Another local user trying to receive the vault password: by creating the fallback runtime
/// folder first, or by listening on the control socket's name. The password file is readable,
/// so a command that did talk would send it; the attacker records every byte it receives.
final class ControlFolderTests: XCTestCase {
    private var folder: URL!
    private let nobody = "65534"

    override func setUpWithError() throws {
        folder = ArchiveMaker.temporaryDirectory("control-folder")
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder.path)
        try "the vault password\n".write(to: folder.appendingPathComponent("pw"), atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: folder.appendingPathComponent("pw").path)
        try Self.attacker.write(to: folder.appendingPathComponent("attacker.py"), atomically: true, encoding: .utf8)
    }

    override func tearDown() { try? FileManager.default.removeItem(at: folder) }

    /// Listens on the socket a mount at MOUNTPOINT would use in FOLDER, writes each byte it
    /// receives to OUT, and prints `ready` once listening. With DROP, binds as root, then listens as nobody.
    private static let attacker = """
        import os, socket, sys
        folder, mountpoint, out_path, drop = sys.argv[1:5]
        os.makedirs(folder, exist_ok=True)
        out = open(out_path, 'wb', buffering=0)
        h = 0xcbf29ce484222325
        for b in mountpoint.encode(): h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(os.path.join(folder, format(h, 'x') + '.sock'))
        os.chmod(os.path.join(folder, format(h, 'x') + '.sock'), 0o777)
        if drop == 'drop': os.setgid(65534); os.setuid(65534)
        s.listen(8)
        print('ready', flush=True)
        while True:
            c, _ = s.accept()
            while True:
                data = c.recv(4096)
                if not data: break
                out.write(data)
            c.close()
        """

    private func startAttacker(in socketFolder: String, mountpoint: String, asNobody: Bool, output: String) throws -> Process {
        let process = Process()
        let script = [folder.appendingPathComponent("attacker.py").path, socketFolder, mountpoint, output]
        if asNobody {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--reuid=\(nobody)", "--regid=\(nobody)", "--clear-groups", "/usr/bin/python3"] + script + ["stay"]
        } else {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            process.arguments = script + ["drop"]
        }
        let said = Pipe()
        process.standardOutput = said
        try process.run()
        // Blocks until the attacker listens (or dies: then it reads nothing).
        XCTAssertEqual(said.fileHandleForReading.readData(ofLength: 6), Data("ready\n".utf8), "the attacker listens")
        return process
    }

    /// What the attacker listening in `socketFolder` has received, once everything sent to it
    /// before now is recorded: it serves connections one after another, in order, so a marker
    /// sent last is recorded after whatever came before it. Nil if the marker never arrives.
    private func receivedBeforeNow(_ socketFolder: String, record: String) throws -> Data? {
        let socket = try XCTUnwrap(FileManager.default.contentsOfDirectory(atPath: socketFolder).first { $0.hasSuffix(".sock") })
        let send = try CommandRunner.capture("/usr/bin/python3", ["-c", """
            import socket, sys
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(sys.argv[1]); s.sendall(sys.argv[2].encode()); s.close()
            """, socketFolder + "/" + socket, Self.marker])
        XCTAssertEqual(send.status, 0, send.stderr)
        var data = Data()
        let arrived = waitUntil(20) {
            data = (try? Data(contentsOf: URL(fileURLWithPath: record))) ?? Data()
            return data.count >= Self.marker.utf8.count && data.suffix(Self.marker.utf8.count) == Data(Self.marker.utf8)
        }
        return arrived ? data.dropLast(Self.marker.utf8.count) : nil
    }

    private static let marker = "end-of-test-marker"

    func testAFallbackFolderCreatedByAnotherUserIsRefusedBeforeAnyPasswordIsRead() throws {
        guard getuid() == 0 else { throw XCTSkip("needs root to run the attacker and the victim as users of their own (setpriv)") }
        // A user of our own, so /tmp/inkyfs-<uid> is nobody else's business on this machine.
        let victim = String(Int.random(in: 60_000..<64_000))
        let base = "/tmp/inkyfs-\(victim)"
        try? FileManager.default.removeItem(atPath: base)
        defer { try? FileManager.default.removeItem(atPath: base) }
        // nobody cannot write into the test's folder: its record goes beside its socket.
        let received = base + "/received"
        let attacker = try startAttacker(in: base + "/inkyfs", mountpoint: "/mnt/victim", asNobody: true, output: received)
        defer { attacker.terminate(); attacker.waitUntilExit() }

        let unlock = try CommandRunner.capture("/usr/bin/setpriv", [
            "--reuid=\(victim)", "--regid=\(victim)", "--clear-groups", "/usr/bin/env", "-u", "XDG_RUNTIME_DIR", "HOME=\(folder.path)",
            CommandRunner.binaryForOtherUsers.path, "vault", "unlock", "/mnt/victim", "--password-file", folder.appendingPathComponent("pw").path,
        ])
        XCTAssertNotEqual(unlock.status, 0)
        XCTAssertTrue(unlock.stderr.contains("\(base) belongs to uid \(nobody), not to you"), unlock.stderr)
        XCTAssertTrue(unlock.stderr.contains("XDG_RUNTIME_DIR"), "it says what to do: \(unlock.stderr)")
        let status = try CommandRunner.capture("/usr/bin/setpriv", [
            "--reuid=\(victim)", "--regid=\(victim)", "--clear-groups", "/usr/bin/env", "-u", "XDG_RUNTIME_DIR", "HOME=\(folder.path)",
            CommandRunner.binaryForOtherUsers.path, "vault", "lock",
        ])
        XCTAssertTrue(status.stderr.contains("belongs to uid \(nobody)"), status.stderr)
        XCTAssertEqual(try receivedBeforeNow(base + "/inkyfs", record: received)?.count, 0, "not one byte reached the attacker")
    }

    func testASocketServedByAnotherUserHearsNothing() throws {
        guard getuid() == 0 else { throw XCTSkip("needs root: the attacker binds as root, then listens as nobody (setuid)") }
        // A private runtime folder of ours, with a listener in it that is not ours (bound, then
        // handed to nobody: SO_PEERCRED tells who listens).
        let runtime = folder.appendingPathComponent("run")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let received = folder.appendingPathComponent("received").path
        let attacker = try startAttacker(in: runtime.appendingPathComponent("inkyfs").path, mountpoint: "/mnt/victim",
                                         asNobody: false, output: received)
        defer { attacker.terminate(); attacker.waitUntilExit() }
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: runtime.appendingPathComponent("inkyfs").path)
        let unlock = try CommandRunner.inkyfs(["vault", "unlock", "/mnt/victim", "--password-file", folder.appendingPathComponent("pw").path],
                                              environment: ["XDG_RUNTIME_DIR": runtime.path])
        XCTAssertNotEqual(unlock.status, 0)
        XCTAssertTrue(unlock.stderr.contains("is served by uid \(nobody), not by you") && unlock.stderr.contains("nothing was sent"),
                      unlock.stderr)
        XCTAssertEqual(try receivedBeforeNow(runtime.appendingPathComponent("inkyfs").path, record: received)?.count, 0,
                       "not one byte reached the attacker")
    }

    func testAMountWhoseRuntimeFolderIsAnotherUsersSaysTheVaultCannotBeUnlocked() throws {
        guard getuid() == 0 else { throw XCTSkip("needs root to give the runtime folder to nobody (chown)") }
        let runtime = folder.appendingPathComponent("theirs")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o777])
        XCTAssertEqual(chown(runtime.path, 65534, 65534), 0)
        let library = folder.appendingPathComponent("library")
        try FileManager.default.createDirectory(at: library, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Corpus.fixture("Space Patrol/Space Patrol 001.cbz"), toPath: library.appendingPathComponent("A.cbz").path)
        let mount = try MountedLibrary(library: library, arguments: ["--vault", folder.appendingPathComponent("vault").path],
                                       environment: ["XDG_RUNTIME_DIR": runtime.path])
        XCTAssertEqual(try readFile(mount.path("A/001.jpg")).count > 0, true, "the library is served")
        let deadline = Date().addingTimeInterval(5)
        while !mount.logText.contains("the vault cannot be unlocked on this mount") && Date() < deadline { usleep(50_000) }
        XCTAssertTrue(mount.logText.contains("the vault cannot be unlocked on this mount") && mount.logText.contains("belongs to uid 65534"),
                      mount.logText)
        XCTAssertFalse(FileManager.default.fileExists(atPath: runtime.appendingPathComponent("inkyfs").path), "nothing created in it")
        let unlock = try CommandRunner.inkyfs(["vault", "unlock", mount.mountpoint.path, "--password-file", folder.appendingPathComponent("pw").path],
                                              environment: ["XDG_RUNTIME_DIR": runtime.path])
        XCTAssertNotEqual(unlock.status, 0)
        XCTAssertTrue(unlock.stderr.contains("belongs to uid 65534"), unlock.stderr)
    }
}
