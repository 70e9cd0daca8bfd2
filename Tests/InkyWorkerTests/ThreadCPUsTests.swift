import Foundation
import InkyTestSupport
@testable import InkyWorker
import XCTest

/// A thread pinned to one CPU (as the FUSE device readers are) gets back every CPU the process
/// may use: for good (background work), or around one call (spawning a worker).
final class ThreadCPUsTests: XCTestCase {
    private static func allowedCPUs(_ proc: String = "/proc/thread-self") -> String {
        InkyTestSupport.allowedCPUs(proc) ?? ""
    }

    /// Runs `body` on a new thread pinned to the process's first CPU by taskset(1), the way a
    /// FUSE reader pins itself; returns what `body` saw.
    private func onPinnedThread(_ body: @escaping @Sendable () -> [String]) throws -> [String] {
        let process = Self.allowedCPUs("/proc/self")
        guard cpuCount(process) > 1 else { throw XCTSkip("one CPU only (\(process))") }
        let first = String(process.prefix { $0.isNumber })
        let result = LockedBox<[String]?>(nil)
        let pinned = DispatchSemaphore(value: 0), started = DispatchSemaphore(value: 0)
        let tid = LockedBox<Int32?>(nil)
        Thread {
            tid.value = currentThreadID()
            started.signal()
            pinned.wait()
            result.value = [Self.allowedCPUs()] + body()
        }.start()
        XCTAssertEqual(started.wait(timeout: .now() + 10), .success)
        let taskset = Process()
        taskset.executableURL = URL(fileURLWithPath: "/usr/bin/taskset")
        taskset.arguments = ["-p", "-c", first, String(try XCTUnwrap(tid.value))]
        taskset.standardOutput = FileHandle.nullDevice
        try taskset.run()
        taskset.waitUntilExit()
        XCTAssertEqual(taskset.terminationStatus, 0)
        pinned.signal()
        XCTAssertTrue(waitUntil(10) { result.value != nil })
        let seen = try XCTUnwrap(result.value)
        XCTAssertEqual(seen.first, first, "the thread was pinned")
        return Array(seen.dropFirst())
    }

    func testWideningForGoodGivesThePinnedThreadTheProcesssCPUs() throws {
        let seen = try onPinnedThread {
            ThreadCPUs.widenToProcess()
            return [Self.allowedCPUs()]
        }
        XCTAssertEqual(seen, [Self.allowedCPUs("/proc/self")])
    }

    func testWideningAroundACallPutsThePinBack() throws {
        let seen = try onPinnedThread {
            let inside = ThreadCPUs.widened { Self.allowedCPUs() }
            return [inside, Self.allowedCPUs()]
        }
        let process = Self.allowedCPUs("/proc/self")
        XCTAssertEqual(seen, [process, String(process.prefix { $0.isNumber })])
    }
}
