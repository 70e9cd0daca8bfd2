import Foundation
import InkyCore
import InkyTestSupport
import XCTest

/// `inkyfs doctor`: one finding per check, the fix for each failure, the same in JSON.
final class DoctorCommandTests: XCTestCase {
    private var folder: URL!

    override func setUp() { folder = ArchiveMaker.temporaryDirectory("doctor") }
    override func tearDown() { try? FileManager.default.removeItem(at: folder) }

    struct Report: Decodable {
        var ok: Bool
        var checks: [HealthCheck]
        func check(_ name: String) throws -> HealthCheck { try XCTUnwrap(checks.first { $0.name == name }, "no \(name) check") }
    }

    /// Private state and data homes, and whatever else the test sets.
    private func doctor(_ arguments: [String], _ environment: [String: String] = [:]) throws -> (CommandRunner.Result, Report?) {
        let result = try CommandRunner.inkyfs(["doctor"] + arguments, environment: [
            "XDG_STATE_HOME": folder.appendingPathComponent("state").path, "XDG_DATA_HOME": folder.appendingPathComponent("data").path,
        ].merging(environment) { $1 })
        return (result, arguments.contains("--json") ? try JSONDecoder().decode(Report.self, from: Data(result.stdout.utf8)) : nil)
    }

    func testAMissingDevFuseIsAFailureWithItsFixInJSON() throws {
        let (result, report) = try doctor(["--json"], ["INKYFS_DOCTOR_DEV_FUSE": folder.appendingPathComponent("no-fuse").path])
        let json = try XCTUnwrap(report)
        XCTAssertEqual(result.status, 1, "a failed check fails the command")
        XCTAssertFalse(json.ok)
        let device = try json.check("dev-fuse")
        XCTAssertEqual(device.status, .failed)
        XCTAssertTrue(device.detail.contains("no-fuse is missing"), device.detail)
        XCTAssertEqual(device.fix, "sudo modprobe fuse   (in a container: run it with --device /dev/fuse)")
        // One "watching" line per inkyfs mount alive on the machine (another test's, another
        // user's): not this test's to count.
        XCTAssertEqual(json.checks.map(\.name).filter { $0 != "watching" },
                       ["dev-fuse", "fusermount3", "fuse-conf", "libfuse", "mounts", "worker", "libarchive", "libunarr", "mupdf", "serve", "openssl",
                        "sqlite", "state", "vault"])
        for check in json.checks where check.status != .ok { XCTAssertNotNil(check.fix, "\(check.name) is not ok and says no fix") }

        // The real /dev/fuse of this machine passes where this user opens it read-write (as the
        // suite's mounts need), and fails with its fix where not (a container's 0600 device).
        let (real, realReport) = try doctor(["--json"])
        let realDevice = try XCTUnwrap(realReport).check("dev-fuse")
        let fd = open("/dev/fuse", O_RDWR | O_CLOEXEC)
        if fd >= 0 { close(fd) }
        XCTAssertEqual(realDevice.status, fd >= 0 ? .ok : .failed, real.stdout)
        if fd < 0 { XCTAssertEqual(realDevice.fix, "sudo chmod 666 /dev/fuse   (Debian's default: crw-rw-rw- root root)") }
    }

    /// The versions are the libraries' own answers: compared with what their tools and
    /// pkg-config report on this machine, not with numbers typed here.
    func testLibraryVersionsAreTheOnesOnThisMachine() throws {
        let report = try XCTUnwrap(try doctor(["--json"]).1)
        let fusermount = try CommandRunner.capture("/usr/bin/fusermount3", ["-V"]).stdout
        XCTAssertEqual("fusermount3 version: " + (try report.check("libfuse").detail), fusermount.trimmingCharacters(in: .whitespacesAndNewlines))
        let pkgConfig = { (name: String) in try ArchiveMaker.run("/usr/bin/pkg-config", ["--modversion", name]).trimmingCharacters(in: .whitespacesAndNewlines) }
        XCTAssertEqual(try report.check("libarchive").detail, try pkgConfig("libarchive"))
        XCTAssertEqual(try report.check("libunarr").detail, try pkgConfig("libunarr"))
        // Debian's mupdf.pc says 1.19.0 for its 1.21.1 package: the package version is the truth.
        let mupdfPackage = try ArchiveMaker.run("/usr/bin/dpkg-query", ["-W", "-f", "${Version}", "libmupdf-dev"])
        XCTAssertTrue(mupdfPackage.hasPrefix(try report.check("mupdf").detail + "+"), mupdfPackage)
        XCTAssertEqual(try report.check("sqlite").detail + " ",
                       String(try CommandRunner.capture("/usr/bin/sqlite3", ["--version"]).stdout.prefix { $0 != " " }) + " ")
        let openssl = try CommandRunner.capture("/usr/bin/openssl", ["version"]).stdout
        XCTAssertTrue(openssl.contains("Library: " + (try report.check("openssl").detail)), openssl)
    }

    /// The parsers live in the worker executable alone: doctor finds it where `inkyfs` looks,
    /// and a missing one is a failure that says where it was looked for.
    func testTheWorkerExecutableIsFoundAndAMissingOneIsAFailureWithItsFix() throws {
        let report = try XCTUnwrap(try doctor(["--json"]).1)
        XCTAssertEqual(try report.check("worker").status, .ok)
        XCTAssertEqual(try report.check("worker").detail, CommandRunner.workerBinary.path)
        let missing = folder.appendingPathComponent("no-worker").path
        let (result, broken) = try doctor(["--json"], ["INKYFS_WORKER": missing])
        XCTAssertEqual(result.status, 1, "a missing worker fails doctor")
        let worker = try XCTUnwrap(broken).check("worker")
        XCTAssertEqual(worker.status, .failed)
        XCTAssertEqual(worker.detail, "\(missing) does not run")
        XCTAssertTrue(worker.fix?.hasPrefix("reinstall inkyfs: it needs inkyfs-worker at ") == true, worker.fix ?? "no fix")
        XCTAssertEqual(try XCTUnwrap(broken).check("libarchive").status, .failed)
    }

    /// `inkyfs serve` becomes the server executable: doctor finds it where `inkyfs serve` looks,
    /// and a missing one, or one of another release (which could read the options otherwise), is
    /// a failure that says where it was looked for.
    func testTheServeExecutableIsFoundAndAMissingOrForeignOneIsAFailureWithItsFix() throws {
        let report = try XCTUnwrap(try doctor(["--json"]).1)
        XCTAssertEqual(try report.check("serve").status, .ok)
        XCTAssertEqual(try report.check("serve").detail, CommandRunner.serveBinary.path)
        let missing = folder.appendingPathComponent("no-serve").path
        let (result, broken) = try doctor(["--json"], ["INKYFS_SERVE": missing])
        XCTAssertEqual(result.status, 1, "a missing server fails doctor")
        let serve = try XCTUnwrap(broken).check("serve")
        XCTAssertEqual(serve.status, .failed)
        XCTAssertEqual(serve.detail, "\(missing) does not run")
        XCTAssertTrue(serve.fix?.hasPrefix("reinstall inkyfs: `inkyfs serve` needs inkyfs-serve at ") == true, serve.fix ?? "no fix")
        XCTAssertEqual(try XCTUnwrap(broken).check("worker").status, .ok, "the mount's checks do not depend on the server")

        let foreign = folder.appendingPathComponent("old-serve")
        try "#!/bin/sh\necho inkyfs-serve 0.0.1\n".write(to: foreign, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: foreign.path)
        let old = try XCTUnwrap(try doctor(["--json"], ["INKYFS_SERVE": foreign.path]).1).check("serve")
        XCTAssertEqual(old.status, .failed)
        XCTAssertTrue(old.detail.hasPrefix("\(foreign.path) is inkyfs-serve 0.0.1, not of inkyfs "), old.detail)
    }

    func testTextIsOneLinePerCheckAndEachFailureEndsWithItsFix() throws {
        let (result, _) = try doctor([], ["INKYFS_DOCTOR_DEV_FUSE": folder.appendingPathComponent("no-fuse").path])
        XCTAssertEqual(result.status, 1)
        let lines = result.stdout.split(separator: "\n").filter { !$0.contains(" watching ") }
        XCTAssertEqual(lines.count, 14, result.stdout)
        let device = try XCTUnwrap(lines.first { $0.contains("dev-fuse") })
        XCTAssertTrue(device.hasPrefix("FAILED") && device.hasSuffix("fix: sudo modprobe fuse   (in a container: run it with --device /dev/fuse)"),
                      String(device))
        for line in lines where line.hasPrefix("FAILED") || line.hasPrefix("WARNING") { XCTAssertTrue(line.contains("  fix: "), String(line)) }
    }

    /// The vault folder must be private; the state folder must be a folder inkyfs can write.
    func testTheVaultFolderMustBePrivateAndTheStateFolderWritable() throws {
        let vault = folder.appendingPathComponent("data/inkyfs/vault")
        try FileManager.default.createDirectory(at: vault, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("state"), withIntermediateDirectories: true)
        try "not a folder".write(to: folder.appendingPathComponent("state/inkyfs"), atomically: true, encoding: .utf8)
        let (result, report) = try doctor(["--json"])
        XCTAssertEqual(result.status, 1)
        let open = try XCTUnwrap(report).check("vault")
        XCTAssertEqual(open.status, .warning, open.detail)
        XCTAssertEqual(open.fix, "chmod 700 \(vault.path)")
        let state = try XCTUnwrap(report).check("state")
        XCTAssertEqual(state.status, .failed, state.detail)
        XCTAssertTrue(state.detail.contains("is a file, not a folder"), state.detail)

        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: vault.path)
        try FileManager.default.removeItem(at: folder.appendingPathComponent("state/inkyfs"))
        let fixed = try XCTUnwrap(try doctor(["--json"]).1)
        XCTAssertEqual(try fixed.check("vault").status, .ok)
        XCTAssertEqual(try fixed.check("state").status, .ok)
    }

    /// allow_other needs user_allow_other in fuse.conf, except for root: run as nobody (as the
    /// test's own user when that is not root).
    func testAllowOtherAsAUserNeedsUserAllowOtherInFuseConf() throws {
        let conf = folder.appendingPathComponent("fuse.conf")
        try "# mount_max = 1000\n#user_allow_other\n".write(to: conf, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder.path)
        let user = getuid() == 0 ? ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] : []
        let asNobody = { (options: [String]) throws -> HealthCheck in
            let command = user + [CommandRunner.binaryForOtherUsers.path, "doctor", "--json"] + options
            let result = try CommandRunner.capture(command[0], Array(command.dropFirst()),
                                                   environment: ["INKYFS_DOCTOR_FUSE_CONF": conf.path, "XDG_STATE_HOME": "/tmp", "XDG_DATA_HOME": "/tmp"])
            return try JSONDecoder().decode(Report.self, from: Data(result.stdout.utf8)).check("fuse-conf")
        }
        XCTAssertEqual(try asNobody([]).status, .ok, "not asked for: not needed")
        let refused = try asNobody(["-o", "ro,allow_other"])
        XCTAssertEqual(refused.status, .failed, refused.detail)
        XCTAssertEqual(refused.fix, "echo user_allow_other | sudo tee -a \(conf.path)")
        try "# mount_max = 1000\nuser_allow_other\n".write(to: conf, atomically: true, encoding: .utf8)
        XCTAssertEqual(try asNobody(["-o", "allow_other"]).status, .ok)
    }

    /// A daemon killed with SIGKILL leaves "Transport endpoint is not connected": doctor names
    /// the mount and the command that clears it, and that command works.
    func testAStaleMountIsNamedWithTheCommandThatClearsIt() throws {
        let mount = try MountedLibrary(library: Corpus.fixtures)
        kill(mount.process.processIdentifier, SIGKILL)
        _ = mount.process.waitForExit()
        let (result, report) = try doctor(["--json"])
        XCTAssertEqual(result.status, 1)
        let mounts = try XCTUnwrap(report).check("mounts")
        XCTAssertEqual(mounts.status, .failed)
        XCTAssertTrue(mounts.detail.contains(mount.mountpoint.path), mounts.detail)
        let fix = try XCTUnwrap(mounts.fix?.split(separator: ";").first { $0.contains(mount.mountpoint.path) })
        XCTAssertEqual(try CommandRunner.capture("/bin/sh", ["-c", String(fix)]).status, 0)
        let after = try XCTUnwrap(try doctor(["--json"]).1).check("mounts")
        XCTAssertFalse(after.detail.contains(mount.mountpoint.path), after.detail)
    }

    /// A daemon that stops answering (here SIGSTOP; in life a stuck daemon, or one killed before
    /// it took its connection) leaves every request on its mount waiting for ever: doctor and
    /// status used to hang with them. They now give up on that mount after 2 s, name it, and say
    /// what clears it, down to the connection's abort file.
    func testAMountWhoseDaemonStoppedAnsweringIsNamedNotWaitedFor() throws {
        let mount = try MountedLibrary(library: Corpus.fixtures)
        let daemon = mount.process.processIdentifier
        XCTAssertEqual(kill(daemon, SIGSTOP), 0)
        defer { kill(daemon, SIGCONT) }
        // The connection's number as the kernel's mount table gives it (the minor of the mount's device).
        let mountinfo = try String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8)
        let line = try XCTUnwrap(mountinfo.split(separator: "\n").first { $0.split(separator: " ")[4] == mount.mountpoint.path })
        let connection = try XCTUnwrap(line.split(separator: " ")[2].split(separator: ":").last)
        // Without the bound, the commands wait for ever: the watchdog lets the daemon go on after
        // 60 s (which ends the wait), and the test fails saying so.
        let finished = DispatchSemaphore(value: 0), rescued = LockedBox(false)
        Thread.detachNewThread {
            guard finished.wait(timeout: .now() + 60) == .timedOut else { return }
            rescued.value = true
            kill(daemon, SIGCONT)
        }
        let (result, report) = try doctor(["--json"])
        XCTAssertEqual(result.status, 1, result.stderr)
        let mounts = try XCTUnwrap(report).check("mounts")
        XCTAssertEqual(mounts.status, .failed)
        XCTAssertTrue(mounts.detail.contains("not answering (daemon stopped or stuck): \(mount.mountpoint.path)"), mounts.detail)
        // Where the FUSE control folder is not mounted, the fix mounts it before the abort.
        let control = FileManager.default.fileExists(atPath: "/sys/fs/fuse/connections/\(connection)")
            ? "" : "sudo mount -t fusectl fusectl /sys/fs/fuse/connections; "
        XCTAssertTrue(mounts.fix?.contains("fusermount3 -u -z '\(mount.mountpoint.path)'; if that hangs too: " + control
                                           + "echo 1 | sudo tee /sys/fs/fuse/connections/\(connection)/abort") == true, mounts.fix ?? "")
        let status = try CommandRunner.inkyfs(["status"])
        XCTAssertTrue(status.stdout.contains("\(mount.mountpoint.path)  \(Corpus.fixtures.path)  daemon gone or not answering"), status.stdout)
        finished.signal()
        XCTAssertFalse(rescued.value, "doctor and status waited on the stopped daemon until the watchdog let it go on")
        kill(daemon, SIGCONT)
        XCTAssertEqual(try doctor(["--json"]).1?.check("mounts").status, .ok)
    }
}
