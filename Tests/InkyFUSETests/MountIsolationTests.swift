import Foundation
import InkyArchive
import InkyTestSupport
import XCTest

/// A hostile archive costs only its own comic: crashing and hanging parsers are contained (the
/// whole shared corpus under a mount is MountHostileCorpusTests).
final class MountIsolationTests: XCTestCase {
    /// The daemon keeps glibc's per-thread malloc cache off (so wiping freed memory reaches every
    /// chunk after a vault unlock); its workers, which a lock ends, run with it on.
    func testTheDaemonRunsWithoutMallocsThreadCacheAndItsWorkersWithIt() throws {
        let mount = try MountedLibrary(library: Corpus.fixtures)
        XCTAssertFalse(try FileManager.default.contentsOfDirectory(atPath: mount.path("Space Patrol/Space Patrol 001")).isEmpty)
        let tunables = { (pid: Int32) -> String? in
            (try? readFile("/proc/\(pid)/environ")).map { String(decoding: $0, as: UTF8.self) }?
                .split(separator: "\0").first { $0.hasPrefix("GLIBC_TUNABLES=") }.map(String.init)
        }
        XCTAssertTrue(tunables(mount.process.processIdentifier)?.contains("glibc.malloc.tcache_count=0") == true,
                      "daemon: \(tunables(mount.process.processIdentifier) ?? "none")")
        XCTAssertFalse(mount.workerPIDs.isEmpty, "the listing started a worker")
        for worker in mount.workerPIDs {
            XCTAssertFalse(tunables(worker)?.contains("tcache_count") ?? false, "worker \(worker): \(tunables(worker) ?? "none")")
        }
    }

    func testACrashingParserShowsErrorTextAndEveryOtherComicKeepsWorking() throws {
        let mount = try MountedLibrary(library: Corpus.fixtures, environment: ["INKYFS_TEST_WORKER_FAULT": "crash:Moon Tales 01"])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path("Moon Tales/Moon Tales 01")), ["ERROR.txt"])
        let text = String(decoding: try readFile(mount.path("Moon Tales/Moon Tales 01/ERROR.txt")), as: UTF8.self)
        XCTAssertTrue(text.contains("parser failed") && text.contains("signal 11"), text)
        for _ in 0..<3 {
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path("Moon Tales/Moon Tales 02")).count, 6)
            XCTAssertEqual(try readFile(mount.path("Space Patrol/Space Patrol 001/001.jpg")).count, 37909)
        }
        XCTAssertTrue(mount.isDaemonAlive)
    }

    func testAWorkerDyingDuringAPageReadFailsTheReadAndMarksTheComic() throws {
        let mount = try MountedLibrary(library: Corpus.fixtures, environment: ["INKYFS_TEST_WORKER_FAULT": "crash-read:Moon Tales 02"])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path("Moon Tales/Moon Tales 02")).count, 6, "listing works")
        // The daemon answers the read in flight EIO; the kernel then reads the page again and,
        // the comic being marked broken (a new generation, ERROR.txt) by then, gets ESTALE. Either
        // is the right answer, never bytes and never another errno.
        let failed = readErrno(mount.path("Moon Tales/Moon Tales 02/001.jpg"))
        XCTAssertTrue([EIO, ESTALE].contains(failed), "EIO or ESTALE, never garbage: \(errnoName(failed))")
        XCTAssertTrue(mount.logSays("the worker crashed (signal 11)"), mount.logText)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path("Moon Tales/Moon Tales 02")), ["ERROR.txt"])
        XCTAssertEqual(try readFile(mount.path("Moon Tales/Moon Tales 01/010.jpg")).count, 37342, "other comics still read")
        XCTAssertTrue(mount.isDaemonAlive)
    }

    /// SIGKILL from outside (the OOM killer, an administrator) says nothing about the archive:
    /// the worker request in flight fails with EIO (the kernel may retry it once, through a new
    /// worker), the comic is not marked broken, the next read works.
    func testAWorkerKilledFromOutsideMidReadFailsThatReadOnly() throws {
        // Page reads are held while `hold` exists: the kill lands inside the read however loaded
        // the machine is (a fixed 3 s stall once ended before a loaded CI run's kill came).
        let hold = ArchiveMaker.temporaryDirectory("stall").appendingPathComponent("hold")
        FileManager.default.createFile(atPath: hold.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: hold.deletingLastPathComponent()) }
        // Nothing fetched ahead: pages 4-8 would stall on workers of their own, and a CI run at
        // load 10 found and killed only such a worker (whose failure no reader waits for, so
        // nothing was logged) while the read's own worker had not reached its stall yet.
        let mount = try MountedLibrary(library: Corpus.fixtures, arguments: ["--prefetch", "0"],
                                       environment: ["INKYFS_TEST_WORKER_FAULT": "stall-read:Moon Tales 02",
                                                     "INKYFS_TEST_WORKER_HOLD": hold.path])
        let page = mount.path("Moon Tales/Moon Tales 02/003.jpg")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path("Moon Tales/Moon Tales 02")).count, 6)
        // The page's entry as Python's tarfile reads it: not inkyfs's reader.
        let expected = try ReferenceArchive.member(try sourceAttribute(page), of: Corpus.fixture("Moon Tales/Moon Tales 02.cbt"))
        let result = LockedBox<Result<[UInt8], POSIXError>?>(nil)
        let reading = DispatchGroup()
        DispatchQueue.global().async(group: reading) {
            let fd = open(page, O_RDONLY)
            var buffer = [UInt8](repeating: 0, count: 1 << 20)
            let got = fd < 0 ? -1 : read(fd, &buffer, buffer.count)
            result.value = got < 0 ? .failure(POSIXError(POSIXErrorCode(rawValue: errno)!)) : .success(Array(buffer[0..<got]))
            if fd >= 0 { close(fd) }
        }
        // Killed once it is inside the read, not before (the read would simply go to another).
        var stalling: [Int32] = []
        XCTAssertTrue(waitUntil(20) { stalling = mount.workers(withThreadNamed: "inky-stall"); return !stalling.isEmpty },
                      "a worker stalls inside the page read")
        for worker in stalling { kill(worker, SIGKILL) }
        // The kernel may retry the read through a new worker: that one need not be held.
        try FileManager.default.removeItem(at: hold)
        mount.failingIfHung(after: 120, "the read whose worker was killed") { reading.wait() }
        switch result.value {
        case .failure(let error)?: XCTAssertEqual(error.code, .EIO, "the read in flight fails with EIO")
        case .success(let bytes)?: XCTAssertEqual(bytes, expected, "or the kernel's retry, through a new worker, gets the right bytes")
        case nil: XCTFail("no result")
        }
        XCTAssertTrue(mount.logSays("killed from outside (SIGKILL)"), mount.logText)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path("Moon Tales/Moon Tales 02")).count, 6, "not ERROR.txt")
        XCTAssertEqual(try readFile(page), expected, "the next read works")
        XCTAssertTrue(mount.isDaemonAlive)
    }

    func testAHangingParserIsKilledByTheWatchdogWhileOthersAreServed() throws {
        let timeout = 5.0
        let mount = try MountedLibrary(library: Corpus.fixtures, arguments: ["--worker-timeout", "\(Int(timeout))", "--no-list-ahead"],
                                       environment: ["INKYFS_TEST_WORKER_FAULT": "hang:Moon Tales 01"])
        let hanging = DispatchGroup()
        let started = Date()
        let status = LockedBox<Int32>(-1)
        // By hand: `mount.path` (URL.appendingPathComponent) would stat the path in this thread.
        let hangPath = mount.mountpoint.path + "/Moon Tales/Moon Tales 01/001.jpg"
        DispatchQueue.global().async(group: hanging) {
            var info = stat()
            status.value = stat(hangPath, &info) == 0 ? 0 : errno
        }
        // Once a worker is inside the hang (not after a guess at how long that takes), another
        // comic is served by another worker while the hang goes on: an order, not a speed.
        XCTAssertTrue(waitUntil(30) { !mount.workers(withThreadNamed: "inky-hang").isEmpty }, "a worker hangs listing Moon Tales 01 for the stat")
        XCTAssertEqual(try readFile(mount.path("Space Patrol/Space Patrol 002/010.jpg")).isEmpty, false)
        XCTAssertEqual(hanging.wait(timeout: .now()), .timedOut, "the other comic was served while the stat in the hanging one still waited")
        mount.failingIfHung(after: 120, "the hanging lookup, which the worker watchdog ends") { hanging.wait() }
        // The watchdog waits its whole timeout: never less (a slow parser is not killed early).
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), timeout * 0.95)
        XCTAssertEqual(errnoName(status.value), errnoName(ENOENT), "no page 001.jpg in a comic that shows ERROR.txt")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path("Moon Tales/Moon Tales 01")), ["ERROR.txt"])
        let text = String(decoding: try readFile(mount.path("Moon Tales/Moon Tales 01/ERROR.txt")), as: UTF8.self)
        XCTAssertTrue(text.contains("timed out"), text)
        XCTAssertTrue(mount.isDaemonAlive)
    }
}

/// Workers live exactly as long as the daemon: not shorter (they were once tied to the short-lived
/// thread that spawned them), not longer (a killed daemon leaves none behind).
final class WorkerLifetimeTests: XCTestCase {
    private func workers(of daemon: Int32) -> [Int32] {
        ((try? ArchiveMaker.run("/usr/bin/pgrep", ["-P", "\(daemon)", "-f", "inkyfs-worker"])) ?? "").split(separator: "\n").compactMap { Int32($0) }
    }

    func testWorkersOutliveTheThreadsThatStartedThem() throws {
        // Without listing ahead, which takes up to every worker as soon as the mount is up.
        let mount = try MountedLibrary(library: Corpus.fixtures, arguments: ["--no-list-ahead"])
        // Warmed up in the background once the mount is up: on a loaded machine that takes a while.
        waitUntil(20) { workers(of: mount.process.processIdentifier).count >= 2 }
        let warmed = workers(of: mount.process.processIdentifier)
        XCTAssertEqual(warmed.count, 2, "two workers warmed up at mount")
        // Dispatch threads that started them end after a few idle seconds: this sleep lets time
        // pass, it waits for no event.
        Thread.sleep(forTimeInterval: 8)
        XCTAssertEqual(workers(of: mount.process.processIdentifier), warmed, "the same workers are still there")
        let page = try readFile(mount.path("Moon Tales/Moon Tales 01/010.jpg"))
        XCTAssertEqual(page.count, 37342)
    }

    func testAKilledDaemonLeavesNoWorkers() throws {
        let mount = try MountedLibrary(library: Corpus.fixtures)
        _ = try readFile(mount.path("Moon Tales/Moon Tales 01/001.jpg"))
        let started = workers(of: mount.process.processIdentifier)
        XCTAssertFalse(started.isEmpty)
        kill(mount.process.processIdentifier, SIGKILL)
        _ = mount.process.waitForExit()
        waitUntil(10) { !started.contains(where: { kill($0, 0) == 0 }) }
        XCTAssertFalse(started.contains(where: { kill($0, 0) == 0 }), "workers exit when their daemon is gone")
    }
}
