import Foundation
import InkyTestSupport
import XCTest

/// Who may see what: other users and the mount, the vault under `-o allow_other`, the control
/// socket, and what a worker process is allowed. "Another user" is nobody (65534), run through
/// setpriv with no supplementary groups.
final class MountSecurityTests: XCTestCase {
    private func asNobody(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws -> CommandRunner.Result {
        try CommandRunner.capture("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", executable] + arguments,
                                  environment: environment)
    }

    func testWithoutAllowOtherNoOtherUserCanEvenLookAtTheMount() throws {
        let fixture = try VaultMountFixture()
        let root = fixture.mount.mountpoint.path
        // The way there is open to nobody (so the refusal below is the mount's own)…
        XCTAssertEqual(try asNobody("/usr/bin/stat", ["-c", "%a", (root as NSString).deletingLastPathComponent]).status, 0)
        // …and the kernel refuses every other user at the mount itself.
        for path in [root, fixture.path("Space Patrol"), fixture.path("Space Patrol/Space Patrol 001/001.jpg")] {
            let seen = try asNobody("/usr/bin/stat", ["-c", "%i", path])
            XCTAssertNotEqual(seen.status, 0, path)
            XCTAssertTrue(seen.stderr.contains("Permission denied"), seen.stderr)
        }
        XCTAssertNotEqual(try asNobody("/bin/cat", [fixture.path("Space Patrol/Space Patrol 001/001.jpg")]).status, 0)
        XCTAssertNotNil(SystemCall.status(fixture.path("Space Patrol/Space Patrol 001/001.jpg")), "the owner sees it")
    }

    func testWithAllowOtherOthersReadTheLibraryButTheVaultStaysTheOwners() throws {
        let fixture = try VaultMountFixture(mountArguments: ["-o", "allow_other"])
        try fixture.unlock()
        let page = "Space Patrol/Space Patrol 001/001.jpg"
        let vaultPage = "Vault/Secret Series/Moon Tales 01/001.jpg"
        let read = try asNobody("/usr/bin/sha256sum", [fixture.path(page)])
        XCTAssertEqual(read.status, 0, read.stderr)
        XCTAssertTrue(read.stdout.hasPrefix(Digest.sha256Hex(try readFile(fixture.path(page)))), "others read the library")

        // Owned by the mounting user, 0500 and 0400: nobody cannot list or read any of it.
        for (relative, mode) in [("Vault", 0o500), ("Vault/Secret Series", 0o500), ("Vault/Secret Series/Moon Tales 01", 0o500), (vaultPage, 0o400)] {
            let info = try XCTUnwrap(SystemCall.status(fixture.path(relative)), relative)
            XCTAssertEqual(Int(info.st_mode & 0o777), mode, relative)
            XCTAssertEqual(info.st_uid, getuid(), relative)
        }
        XCTAssertEqual(try asNobody("/usr/bin/stat", ["-c", "%a %u", fixture.path("Vault")]).stdout, "500 \(getuid())\n")
        for command in [["/bin/ls", fixture.path("Vault")], ["/bin/cat", fixture.path(vaultPage)],
                        ["/usr/bin/stat", fixture.path("Vault/Secret Series")]] {
            let refused = try asNobody(command[0], Array(command.dropFirst()))
            XCTAssertNotEqual(refused.status, 0, command.joined(separator: " "))
            XCTAssertTrue(refused.stderr.contains("Permission denied"), refused.stderr)
        }
        XCTAssertEqual(try readFile(fixture.path(vaultPage)).count, 35199, "the owner reads it")
    }

    func testVaultAllowOtherOpensTheVaultToOthersToo() throws {
        let fixture = try VaultMountFixture(mountArguments: ["-o", "allow_other", "--vault-allow-other"])
        try fixture.unlock()
        let vaultPage = "Vault/Secret Series/Moon Tales 01/001.jpg"
        XCTAssertEqual(SystemCall.status(fixture.path(vaultPage)).map { Int($0.st_mode & 0o777) }, 0o444)
        XCTAssertEqual(SystemCall.status(fixture.path("Vault")).map { Int($0.st_mode & 0o777) }, 0o555)
        let read = try asNobody("/usr/bin/sha256sum", [fixture.path(vaultPage)])
        XCTAssertEqual(read.status, 0, read.stderr)
        XCTAssertTrue(read.stdout.hasPrefix(Digest.sha256Hex(try readFile(fixture.path(vaultPage)))))
    }

    func testWrongPasswordsThroughTheCommandLineCostAGrowingWait() throws {
        let fixture = try VaultMountFixture()
        let wrongFile = fixture.folder.appendingPathComponent("wrong")
        try "guess\n".write(to: wrongFile, atomically: true, encoding: .utf8)
        func unlock(_ file: URL) throws -> (CommandRunner.Result, Double) {
            let started = Date()
            let result = try CommandRunner.inkyfs(["vault", "unlock", fixture.mount.mountpoint.path, "--password-file", file.path],
                                                  environment: fixture.environment)
            return (result, Date().timeIntervalSince(started))
        }
        let (first, _) = try unlock(wrongFile)
        XCTAssertEqual(first.status, 2)
        XCTAssertEqual(first.stderr, "inkyfs: wrong password\n")
        // At once again: the daemon hears nothing for 0.5 s, the command waits that out, then it is wrong again.
        let (second, secondTime) = try unlock(wrongFile)
        XCTAssertEqual(second.status, 2)
        XCTAssertTrue(second.stderr.hasPrefix("inkyfs: after wrong passwords, waiting 0."), second.stderr)
        XCTAssertGreaterThan(secondTime, 0.4)
        // The right password now waits the doubled 1 s, and then unlocks.
        let (right, rightTime) = try unlock(fixture.passwordFile)
        XCTAssertEqual(right.status, 0, right.stderr)
        XCTAssertTrue(right.stderr.contains("waiting"), right.stderr)
        XCTAssertGreaterThan(rightTime, 0.8)
        XCTAssertTrue(FileManager.default.fileExists(atPath: fixture.path("Vault/Secret Series")))
        let deadline = Date().addingTimeInterval(2)
        while !fixture.mount.logText.contains("2 wrong vault passwords in a row"), Date() < deadline { usleep(50_000) }
        XCTAssertTrue(fixture.mount.logText.contains("control socket: 2 wrong vault passwords in a row"), fixture.mount.logText)
        print("wrong passwords: the second attempt took \(String(format: "%.2f", secondTime)) s, the right one after it \(String(format: "%.2f", rightTime)) s")
    }

    func testWorkersRunWithoutNewPrivilegesAndUnderTheirLimits() throws {
        let mount = try MountedLibrary(library: Corpus.fixtures)
        XCTAssertEqual(try readFile(mount.path("Space Patrol/Space Patrol 001/001.jpg")).count, 37909)
        // A worker being spawned right now is still the daemon's image for a moment: wait until
        // every child runs as a worker.
        func isWorker(_ pid: Int32) -> Bool {
            ((try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8)) ?? "").contains("inkyfs-worker")
                && ((try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? "").contains("Seccomp:\t2")
        }
        let deadline = Date().addingTimeInterval(5)
        while !mount.workerPIDs.allSatisfy(isWorker), Date() < deadline { usleep(50_000) }
        let workers = mount.workerPIDs
        XCTAssertFalse(workers.isEmpty, "a live worker to look at")
        for pid in workers {
            let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
            XCTAssertTrue(status.contains("NoNewPrivs:\t1\n"), "worker \(pid): PR_SET_NO_NEW_PRIVS")
            XCTAssertTrue(status.contains("Seccomp:\t2\n"), "worker \(pid): a seccomp filter")
            XCTAssertTrue(status.contains("Seccomp_filters:\t1\n"), "worker \(pid): exactly ours")
            let limits = try String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8).split(separator: "\n")
            func limit(_ name: String) -> [String] {
                guard let line = limits.first(where: { $0.hasPrefix(name) }) else { return [] }
                return line.dropFirst(name.count).split(separator: " ").map(String.init)
            }
            // Under a sanitizer workers go without the address-space limit (its shadow memory exceeds it).
            if !Sanitizer.isRunning {
                XCTAssertEqual(limit("Max address space"), ["2147483648", "2147483648", "bytes"], "worker \(pid)")
            }
            XCTAssertEqual(limit("Max cpu time"), ["600", "605", "seconds"], "worker \(pid)")
            XCTAssertEqual(limit("Max core file size"), ["0", "0", "bytes"], "worker \(pid)")
        }
        let daemon = try String(contentsOfFile: "/proc/\(mount.process.processIdentifier)/status", encoding: .utf8)
        XCTAssertTrue(daemon.contains("NoNewPrivs:\t0\n"), "the daemon itself must still be able to run fusermount3")
        XCTAssertTrue(daemon.contains("Seccomp:\t0\n"), "and is not filtered")
    }

    func testAHijackedDecoderCanNeitherWriteNorConnectNorSpawnNorSignal() throws {
        let mount = try MountedLibrary(library: Corpus.fixtures, environment: ["INKYFS_TEST_WORKER_FAULT": "probe:Moon Tales 02"])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path("Moon Tales/Moon Tales 02")), ["ERROR.txt"])
        let report = String(decoding: try readFile(mount.path("Moon Tales/Moon Tales 02/ERROR.txt")), as: UTF8.self)
        // Read-only too: a mount's worker opens not even its own comic (the daemon passes it open).
        for line in ["open for writing: Permission denied", "open read-only: Permission denied", "socket: Operation not permitted",
                     "kill the daemon: Operation not permitted", "fork: Operation not permitted", "execve: Operation not permitted",
                     "read-ahead advice: allowed", "drop advice: Operation not permitted"] {
            XCTAssertTrue(report.contains(line), "\(line)\n\(report)")
        }
        let probeLine = try XCTUnwrap(report.split(separator: "\n").first { $0.contains("probe /tmp/inkyfs-probe-") })
        let probeFile = String(probeLine[probeLine.range(of: "/tmp/inkyfs-probe-")!.lowerBound...])
        XCTAssertFalse(FileManager.default.fileExists(atPath: probeFile), "nothing was created: \(probeFile)")
        // The probed worker lives on and so does everything else.
        XCTAssertEqual(try readFile(mount.path("Moon Tales/Moon Tales 01/010.jpg")).count, 37342)
        XCTAssertEqual(try readFile(mount.path("Real/Captain Science 001/001.jpg")).count, 4542)
        XCTAssertTrue(mount.isDaemonAlive)
    }
}
