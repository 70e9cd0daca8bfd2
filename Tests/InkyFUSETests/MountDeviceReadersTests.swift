import Foundation
import InkyTestSupport
import XCTest

/// The daemon's device readers through a real mount (shim.h, "CPU-local service"): each reader
/// thread runs on one CPU, so a request is answered on its requester's CPU; the worker
/// processes they spawn still get every CPU the daemon may use; a daemon held to one CPU reads
/// the device as libfuse does.
final class MountDeviceReadersTests: XCTestCase {
    private func threads(of pid: Int32) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []).map { "/proc/\(pid)/task/\($0)" }
    }

    /// A page of a comic, read through the kernel: its listing and the page need a worker.
    private func readAPage(_ mount: MountedLibrary) throws {
        let comic = mount.path("Moon Tales/Moon Tales 02")
        let page = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: comic).sorted().first { $0.hasSuffix(".jpg") })
        XCTAssertFalse(try readFile(comic + "/" + page).isEmpty)
    }

    func testReadersRunOnOneCPUEachAndTheWorkersTheySpawnOnAll() throws {
        let ownCPUs = try XCTUnwrap(allowedCPUs("/proc/self"))
        if cpuCount(ownCPUs) < 2 { throw XCTSkip("this machine gives the tests one CPU (\(ownCPUs)): nothing to pin") }
        // The two workers started at mount come from a thread of their own. A worker that crashes
        // listing Moon Tales 01 is replaced when the next comic is looked up, by the reader that
        // takes the lookup (no listing ahead, which would list it on another thread).
        let mount = try MountedLibrary(library: Corpus.fixtures, arguments: ["--no-list-ahead", "--workers", "2"],
                                       environment: ["INKYFS_TEST_WORKER_FAULT": "crash:Moon Tales 01"])
        let daemon = mount.process.processIdentifier
        let daemonCPUs = try XCTUnwrap(allowedCPUs("/proc/\(daemon)"))
        XCTAssertEqual(daemonCPUs, ownCPUs)
        XCTAssertTrue(mount.logSays("device readers: pinned over"), mount.logText)
        let warm = Set(mount.workerPIDs)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path("Moon Tales/Moon Tales 01")), ["ERROR.txt"])
        try readAPage(mount)
        XCTAssertFalse(Set(mount.workerPIDs).subtracting(warm).isEmpty, "a worker was spawned for a lookup")

        let pinned = threads(of: daemon).compactMap(allowedCPUs).filter { cpuCount($0) == 1 }
        XCTAssertFalse(pinned.isEmpty, "the readers that answered are each pinned to one CPU")
        XCTAssertTrue(waitUntil(10) { !mount.workerPIDs.isEmpty })
        for worker in mount.workerPIDs {
            XCTAssertEqual(allowedCPUs("/proc/\(worker)"), daemonCPUs,
                           "worker \(worker) may run on every CPU the daemon may, not only its spawning reader's")
        }
        XCTAssertEqual(mount.unmount(), 0)
    }

    func testADaemonHeldToOneCPUReadsTheDeviceAsLibfuseDoes() throws {
        let mount = try MountedLibrary(library: Corpus.fixtures, arguments: ["--no-list-ahead"],
                                       launcher: ["/usr/bin/taskset", "-c", "0"])
        XCTAssertTrue(mount.logSays("device readers: plain blocking reads"), mount.logText)
        try readAPage(mount)
        XCTAssertTrue(mount.isDaemonAlive)
        XCTAssertEqual(mount.unmount(), 0)
        XCTAssertFalse(MountedLibrary.isMounted(mount.mountpoint.path))
    }
}
