import Foundation
import InkyTestSupport
import XCTest

/// `inkyfs status`: this user's running mounts, one line each, and the same in JSON; another
/// user sees none of them there nor in `doctor`.
final class MountStatusTests: XCTestCase {
    struct Mount: Decodable, Equatable {
        var mountpoint: String
        var library: String
        var pid: Int32?
        var settings: [String]
        var vault: String
        var vaultLocksIn: Double?
        var alive: Bool
    }

    func testEachMountIsOneLineWithItsPidSettingsAndVault() throws {
        let fixture = try VaultMountFixture(mountArguments: ["--as", "cbz", "--vault-idle", "10m", "-o", "allow_other"])
        let mount = fixture.mount!
        let pid = mount.process.processIdentifier
        func status() throws -> (line: String, json: Mount) {
            let text = try CommandRunner.inkyfs(["status"], environment: fixture.environment)
            XCTAssertEqual(text.status, 0, text.stderr)
            // Other mounts of this uid (other tests') may be listed too: this one's line only.
            let line = try XCTUnwrap(text.stdout.split(separator: "\n").first { $0.hasPrefix(mount.mountpoint.path + "  ") }, text.stdout)
            let json = try CommandRunner.inkyfs(["status", "--json"], environment: fixture.environment)
            let mounts = try JSONDecoder().decode([Mount].self, from: Data(json.stdout.utf8))
            return (String(line), try XCTUnwrap(mounts.first { $0.mountpoint == mount.mountpoint.path }))
        }
        let settings = ["--as cbz", "--no-covers", "--views none", "--vault \(fixture.vault.path)", "--vault-idle 600",
                        "--state \(fixture.state.path)", "-o allow_other"]
        // The log line at mount names them too.
        XCTAssertTrue(mount.logSays("; not the defaults: " + settings.joined(separator: " ")), mount.logText)
        let locked = try status()
        XCTAssertEqual(locked.line, ([mount.mountpoint.path, fixture.library.path, "pid \(pid)", "vault locked"] + settings)
            .joined(separator: "  "))
        XCTAssertEqual(locked.json, Mount(mountpoint: mount.mountpoint.path, library: fixture.library.path, pid: pid, settings: settings,
                                          vault: "locked", vaultLocksIn: nil, alive: true))

        try fixture.unlock()
        let unlocked = try status()
        XCTAssertTrue(unlocked.line.contains("  pid \(pid)  vault unlocked, locks itself in 9m ") || unlocked.line.contains("in 10m 0s"),
                      unlocked.line)
        let locksIn = try XCTUnwrap(unlocked.json.vaultLocksIn)
        XCTAssertTrue(locksIn > 500 && locksIn <= 600, "\(locksIn)")
        XCTAssertEqual(unlocked.json.vault, "unlocked")
    }

    /// An fstab line sets any of mount's options by its flag's name (`_` for `-`), flags by 0 or 1:
    /// the mount runs with exactly what the same flags give. `continue_name`, `vault_idle` and
    /// `max_pages` were never in a hand-kept list of -o words; they work because the names come
    /// from the flags' definitions.
    func testEveryMountOptionIsAnFstabSettingByItsFlagsName() throws {
        let state = ArchiveMaker.temporaryDirectory("fstab-state")
        defer { try? FileManager.default.removeItem(at: state) }
        let fstab = try MountedLibrary(library: Corpus.fixtures, arguments: [
            "--state", state.path, "-o",
            "continue_name=Now Reading,vault_idle=5m,max_pages=900,covers=0,grayscale=1,split_spreads=0,views=series,arcs,noatime,x-systemd.automount",
        ])
        let line = "; not the defaults: --no-covers --continue-name Now Reading --views series,arcs --vault-idle 300 --state \(state.path) "
            + "--grayscale --no-split-spreads --max-pages 900 -o noatime"
        XCTAssertTrue(fstab.logSays(line), fstab.logText)
        XCTAssertTrue(try FileManager.default.contentsOfDirectory(atPath: fstab.path("")).contains("Now Reading"))
        _ = fstab.unmount()
        // A flag's value is checked as the flag checks it, and named as given.
        for (option, message) in [("grayscale=2", "-o grayscale=2: 0 or 1"), ("max_pages", "-o max_pages needs a value"),
                                  ("cache_size=12", "'12' would be 12 bytes: give a unit"), ("window=x", "'x' is invalid for '--window")] {
            let refused = try CommandRunner.inkyfs(["mount", "-o", option, Corpus.fixtures.path, state.path])
            XCTAssertEqual(refused.status, 64, refused.stderr)
            XCTAssertTrue(refused.stderr.contains(message), refused.stderr)
            XCTAssertTrue(refused.stderr.contains("Usage: inkyfs mount"), refused.stderr)
        }
    }

    func testAnotherUserSeesNoneOfThisUsersMounts() throws {
        guard getuid() == 0 else { throw XCTSkip("needs root to run a command as nobody") }
        let mount = try MountedLibrary(library: Corpus.fixtures)
        let asNobody = { (arguments: [String]) throws -> CommandRunner.Result in
            try CommandRunner.capture("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", CommandRunner.binaryForOtherUsers.path]
                                      + arguments, environment: ["XDG_RUNTIME_DIR": "/nonexistent", "XDG_STATE_HOME": "/tmp", "XDG_DATA_HOME": "/tmp"])
        }
        let status = try asNobody(["status"])
        XCTAssertEqual(status.status, 4, status.stderr)
        XCTAssertEqual(status.stdout, "no inkyfs mount of yours is running (mount one with: inkyfs mount LIBRARY MOUNTPOINT)\n")
        let doctor = try asNobody(["doctor"])
        XCTAssertFalse(doctor.stdout.contains(mount.mountpoint.path), doctor.stdout)
        XCTAssertTrue(doctor.stdout.contains("mounts       no inkyfs mounts"), doctor.stdout)
        // The mounting user does see it.
        let own = try CommandRunner.inkyfs(["doctor"])
        XCTAssertTrue(own.stdout.contains(mount.mountpoint.path), own.stdout)
    }
}
