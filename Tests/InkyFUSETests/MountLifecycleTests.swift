import Foundation
import InkyCore
import InkyTestSupport
import XCTest

/// Mounting and unmounting as a user does it: background daemon, clean exits, clear errors.
final class MountLifecycleTests: XCTestCase {
    private func daemonPIDs(for mountpoint: String) -> [Int32] {
        let output = (try? ArchiveMaker.run("/usr/bin/pgrep", ["-f", "--", "inkyfs mount .* \(mountpoint)"])) ?? ""
        return output.split(separator: "\n").compactMap { Int32($0) }
    }

    func testDaemonModeReturnsWhenMountedAndUnmountLeavesNothingBehind() throws {
        try MountedLibrary.skipUnlessFUSEOpens()
        let mountpoint = ArchiveMaker.temporaryDirectory("mnt")
        defer {
            _ = try? ArchiveMaker.run("/usr/bin/fusermount3", ["-u", "-z", mountpoint.path])
            try? FileManager.default.removeItem(at: mountpoint)
        }
        let state = ArchiveMaker.temporaryDirectory("state")
        defer { try? FileManager.default.removeItem(at: state) }
        let mounted = try CommandRunner.inkyfs(["mount", Corpus.fixtures.path, mountpoint.path], environment: ["XDG_STATE_HOME": state.path])
        XCTAssertEqual(mounted.status, 0, mounted.stderr)
        XCTAssertTrue(MountedLibrary.isMounted(mountpoint.path), "mount returns only once the mount answers")
        // Its six pages; by default (covers on) also a `.directory` that gives file managers its
        // icon, read by its name and not listed.
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mountpoint.appendingPathComponent("Moon Tales/Moon Tales 02").path).sorted(),
                       ["001.jpg", "002.jpg", "003.jpg", "004.jpg", "005.jpg", "006.jpg"])
        XCTAssertNotNil(FileManager.default.contents(atPath: mountpoint.appendingPathComponent("Moon Tales/Moon Tales 02/.directory").path))
        let daemons = daemonPIDs(for: mountpoint.path)
        XCTAssertEqual(daemons.count, 1)
        // This daemon's own workers: counting every worker on the machine raced other tests' exits.
        let workers = MountedLibrary.childPIDs(of: try XCTUnwrap(daemons.first))
        XCTAssertFalse(workers.isEmpty, "pages were parsed by workers")
        let logs = try FileManager.default.contentsOfDirectory(atPath: state.appendingPathComponent("inkyfs").path).filter { $0.hasSuffix(".log") }
        XCTAssertEqual(logs.count, 1, "the daemon logs under $XDG_STATE_HOME/inkyfs")

        let unmounted = try CommandRunner.inkyfs(["unmount", mountpoint.path])
        XCTAssertEqual(unmounted.status, 0, unmounted.stderr)
        let deadline = Date().addingTimeInterval(10)
        // A live worker still has its command line (a zombie's is empty, a reused pid's differs).
        let alive = { workers.filter { ((try? String(contentsOfFile: "/proc/\($0)/cmdline", encoding: .utf8)) ?? "").contains("inkyfs-worker") } }
        while (!daemonPIDs(for: mountpoint.path).isEmpty || !alive().isEmpty) && Date() < deadline { usleep(50_000) }
        XCTAssertEqual(daemonPIDs(for: mountpoint.path), [], "the daemon exits")
        XCTAssertEqual(alive(), [], "its workers exit with it")
        XCTAssertFalse(MountedLibrary.isMounted(mountpoint.path))
        let log = try String(contentsOfFile: state.appendingPathComponent("inkyfs/\(logs[0])").path, encoding: .utf8)
        XCTAssertTrue(log.contains("unmounted"), log)
    }

    /// The tests' unmount waits for a busy mount to be free, so it must also fail, naming the
    /// holder, when the mount never is: here this test process holds a page open.
    func testAnUnmountThatStaysBusyFailsNamingWhatHoldsIt() throws {
        let mounted = try MountedLibrary(library: Corpus.fixtures)
        defer { mounted.unmount() }
        let page = try XCTUnwrap(FileHandle(forReadingAtPath: mounted.path("Space Patrol/Space Patrol 001/001.jpg")))
        defer { try? page.close() }
        XCTAssertThrowsError(try mounted.unmountOnceFree(within: 1)) {
            let failure = $0 as? MountedLibrary.UnmountFailure
            XCTAssertTrue(failure?.failure.stderr.contains("busy") == true, "\($0)")
            let name = (try? String(contentsOfFile: "/proc/self/comm", encoding: .utf8))?.trimmingCharacters(in: .newlines) ?? "?"
            XCTAssertEqual(failure?.holders, [MountHolders.Holder(pid: getpid(), name: name, how: "an open file")], "\($0)")
        }
        XCTAssertTrue(mounted.isDaemonAlive, "still mounted, still serving")
    }

    func testPlainFusermountAndSigtermAreCleanExits() throws {
        let first = try MountedLibrary(library: Corpus.fixtures)
        _ = try FileManager.default.contentsOfDirectory(atPath: first.path("Space Patrol/Space Patrol 001"))
        try first.unmountOnceFree()
        XCTAssertEqual(first.process.waitForExit(), 0)

        let second = try MountedLibrary(library: Corpus.fixtures)
        kill(second.process.processIdentifier, SIGTERM)
        XCTAssertEqual(second.process.waitForExit(), 0, "SIGTERM unmounts and exits 0: \(second.logText)")
        XCTAssertFalse(MountedLibrary.isMounted(second.mountpoint.path))
    }

    func testStartupErrorsSayWhatToDo() throws {
        let empty = ArchiveMaker.temporaryDirectory("mnt")
        defer { try? FileManager.default.removeItem(at: empty) }
        let missingMountpoint = try CommandRunner.inkyfs(["mount", Corpus.fixtures.path, "/nonexistent/mnt"])
        XCTAssertEqual(missingMountpoint.status, 2)
        XCTAssertTrue(missingMountpoint.stderr.contains("does not exist") && missingMountpoint.stderr.contains("mkdir -p"), missingMountpoint.stderr)

        let missingLibrary = try CommandRunner.inkyfs(["mount", "/nonexistent/library", empty.path])
        XCTAssertEqual(missingLibrary.status, 2)
        XCTAssertTrue(missingLibrary.stderr.contains("library /nonexistent/library does not exist"), missingLibrary.stderr)

        let occupied = ArchiveMaker.temporaryDirectory("mnt")
        defer { try? FileManager.default.removeItem(at: occupied) }
        XCTAssertTrue(FileManager.default.createFile(atPath: occupied.appendingPathComponent("file").path, contents: Data()))
        let notEmpty = try CommandRunner.inkyfs(["mount", Corpus.fixtures.path, occupied.path])
        XCTAssertEqual(notEmpty.status, 2)
        XCTAssertTrue(notEmpty.stderr.contains("not empty") && notEmpty.stderr.contains("-o nonempty"), notEmpty.stderr)
        let usage = try CommandRunner.inkyfs(["mount", "--window", "many", Corpus.fixtures.path, occupied.path])
        XCTAssertEqual(usage.status, 64, usage.stderr)
        XCTAssertTrue(usage.stderr.contains("The value 'many' is invalid for '--window <window>'"), usage.stderr)
        // A background mount's daemon starts while the command line is parsed: refused or mistyped,
        // the command has ended it before it returns.
        XCTAssertEqual(daemonPIDs(for: "/nonexistent/mnt"), [], "no daemon left by the refused mount")
        XCTAssertEqual(daemonPIDs(for: occupied.path), [], "no daemon left by the refused or mistyped mounts")
        let allowed = try MountedLibrary(library: Corpus.fixtures, arguments: ["-o", "nonempty"])
        XCTAssertTrue(allowed.isDaemonAlive)
        allowed.unmount()
    }

    func testStaleMountOfAKilledDaemonIsExplainedAndClearedWithForce() throws {
        let killed = try MountedLibrary(library: Corpus.fixtures)
        let mountpoint = killed.mountpoint.path
        kill(killed.process.processIdentifier, SIGKILL)
        _ = killed.process.waitForExit()
        // statvfs, as the mount's checks do: stat may be answered from the root's attributes,
        // which the kernel holds once the daemon, as it starts, has stat'ed its own root.
        var info = statvfs()
        XCTAssertEqual(statvfs(mountpoint, &info), -1)
        XCTAssertEqual(errno, ENOTCONN, "a killed daemon leaves a dead mount")

        let refused = try CommandRunner.inkyfs(["mount", "--foreground", Corpus.fixtures.path, mountpoint])
        XCTAssertEqual(refused.status, 2)
        XCTAssertTrue(refused.stderr.contains("Transport endpoint is not connected") && refused.stderr.contains("--force"), refused.stderr)

        let state = ArchiveMaker.temporaryDirectory("state")
        defer { try? FileManager.default.removeItem(at: state) }
        let forced = try CommandRunner.inkyfs(["mount", "--force", Corpus.fixtures.path, mountpoint], environment: ["XDG_STATE_HOME": state.path])
        XCTAssertEqual(forced.status, 0, forced.stderr)
        XCTAssertTrue(forced.stderr.contains("inkyfs: cleared the stale mount on \(mountpoint) left by a daemon that died (--force)\n"), forced.stderr)
        // The cover is made in the background after the first listing: it appears by itself.
        let series = mountpoint + "/Moon Tales"
        let deadline = Date().addingTimeInterval(30)
        while !((try? FileManager.default.contentsOfDirectory(atPath: series)) ?? []).contains("folder.jpg"), Date() < deadline {
            usleep(20_000)
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: series).sorted(),
                       ["Moon Tales 01", "Moon Tales 02", "folder.jpg"], "a series folder, with its cover by default")
        XCTAssertEqual(try CommandRunner.inkyfs(["unmount", mountpoint]).status, 0)
    }

    /// The other way out the message offers: its exact fusermount3 command, then a plain mount.
    func testTheSuggestedCommandClearsTheStaleMountOfAKilledDaemon() throws {
        let killed = try MountedLibrary(library: Corpus.fixtures)
        let mountpoint = killed.mountpoint.path
        _ = try readFile(killed.path("Moon Tales/Moon Tales 01/001.jpg"))
        kill(killed.process.processIdentifier, SIGKILL)
        _ = killed.process.waitForExit()
        let refused = try CommandRunner.inkyfs(["mount", Corpus.fixtures.path, mountpoint])
        XCTAssertEqual(refused.status, 2)
        let suggestion = try XCTUnwrap(refused.stderr.firstMatch(of: /run: (fusermount3 -u -z \S+)/)?.1, refused.stderr)
        XCTAssertEqual(suggestion, "fusermount3 -u -z \(mountpoint)")
        let words = suggestion.split(separator: " ").map(String.init)
        try ArchiveMaker.run("/usr/bin/" + words[0], Array(words.dropFirst()))
        let state = ArchiveMaker.temporaryDirectory("state")
        defer { try? FileManager.default.removeItem(at: state) }
        let mounted = try CommandRunner.inkyfs(["mount", Corpus.fixtures.path, mountpoint], environment: ["XDG_STATE_HOME": state.path])
        XCTAssertEqual(mounted.status, 0, mounted.stderr)
        XCTAssertEqual(try readFile(mountpoint + "/Moon Tales/Moon Tales 01/001.jpg").count, 35199)
        XCTAssertEqual(try CommandRunner.inkyfs(["unmount", mountpoint]).status, 0)
    }

    /// The form mount.fuse3 uses for a `fuse.inkyfs` line in /etc/fstab: no subcommand, options
    /// after -o, including mount(8)'s own words and inkyfs settings.
    func testTheFstabFormMountsThroughMountFuse3ReadOnly() throws {
        let scratch = try ScratchMount()
        defer { scratch.remove() }
        let mountpoint = scratch.mountpoint, state = scratch.state
        let path = CommandRunner.binary.deletingLastPathComponent().path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let result = try CommandRunner.capture("/sbin/mount.fuse3", [Corpus.fixtures.path, mountpoint.path, "-t", "inkyfs",
                                                                    "-o", "rw,noatime,nofail,cache_size=64M,window=3"],
                                               environment: ["PATH": path, "XDG_STATE_HOME": state.path])
        XCTAssertEqual(result.status, 0, result.stderr)
        let mounts = try XCTUnwrap(ProcFile.read("/proc/self/mounts"))
        let line = try XCTUnwrap(mounts.split(separator: "\n").first { $0.contains(" \(mountpoint.path) ") })
        XCTAssertTrue(line.contains("fuse.inkyfs"), String(line))
        XCTAssertTrue(line.contains("nosuid") && line.contains("nodev") && line.contains("default_permissions"), String(line))
        // Not `ro` (the kernel would refuse `rm` in Continue Reading/ too): the daemon refuses writes.
        XCTAssertEqual(SystemCall.errnoOf { mkdir(mountpoint.path + "/new", 0o755) }, EROFS, "read-only whatever fstab says")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mountpoint.path + "/Moon Tales/Moon Tales 02").filter { $0.hasSuffix(".jpg") }.count, 6)
        XCTAssertEqual(try CommandRunner.inkyfs(["unmount", mountpoint.path]).status, 0)
        let bad = try CommandRunner.inkyfs([Corpus.fixtures.path, mountpoint.path, "-o", "window=many"])
        XCTAssertNotEqual(bad.status, 0)
        // An -o setting is its flag (`window=` is `--window`): refused as the flag is, naming it.
        XCTAssertEqual(bad.status, 64, bad.stderr)
        XCTAssertTrue(bad.stderr.contains("The value 'many' is invalid for '--window <window>'"), bad.stderr)
    }

    /// An fstab line with inkyfs settings, as `mount -a` runs it: mount(8) → mount.fuse3 → inkyfs.
    /// mount(8) runs its helpers without PATH (a `fuse.inkyfs` line finds /usr/local/bin/inkyfs
    /// from scripts/install), so the test names the built binary in the `fuse` type's
    /// PROGRAM#SOURCE form, which mount.fuse3 runs exactly as it runs `inkyfs` for fuse.inkyfs.
    /// The settings must be the ones the daemon runs with, not just accepted.
    func testAnFstabLineWithInkyfsSettingsMountsThroughMount8() throws {
        // mount(8) takes a source and options from the command line from root alone; users mount only lines of /etc/fstab marked `user`.
        guard getuid() == 0 else { throw XCTSkip("needs root: mount(8) takes a line that is not in /etc/fstab from root only") }
        let scratch = try ScratchMount()
        defer { scratch.remove() }
        let mountpoint = scratch.mountpoint, state = scratch.state
        let result = try CommandRunner.capture("/usr/bin/mount", ["-t", "fuse", "-o", "defaults,nofail,x-systemd.automount,cache_size=512M,window=7",
                                                                  CommandRunner.binary.path + "#" + Corpus.fixtures.path, mountpoint.path],
                                               environment: ["XDG_STATE_HOME": state.path])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(MountedLibrary.isMounted(mountpoint.path), "mount returns once mounted")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mountpoint.path + "/Moon Tales/Moon Tales 02").filter { $0.hasSuffix(".jpg") }.count, 6)
        let logs = try FileManager.default.contentsOfDirectory(atPath: state.path + "/inkyfs").filter { $0.hasSuffix(".log") }
        let log = try String(contentsOfFile: state.path + "/inkyfs/" + XCTUnwrap(logs.first), encoding: .utf8)
        XCTAssertTrue(log.contains("(cache 512 MiB, window 7, prefetch 5, workers 4)"), "the -o settings are the daemon's: \(log)")

        let unmounted = try CommandRunner.capture("/usr/bin/umount", [mountpoint.path])
        XCTAssertEqual(unmounted.status, 0, unmounted.stderr)
        XCTAssertFalse(MountedLibrary.isMounted(mountpoint.path))
        let deadline = Date().addingTimeInterval(10)
        // mount.fuse3 runs `inkyfs SOURCE MOUNTPOINT -o …`: no `mount` word to look for.
        let daemon = { ((try? ArchiveMaker.run("/usr/bin/pgrep", ["-f", "--", "/inkyfs .*\(mountpoint.path)"])) ?? "").split(separator: "\n") }
        while !daemon().isEmpty && Date() < deadline { usleep(50_000) }
        XCTAssertEqual(daemon(), [], "umount ends the daemon")
    }
}
