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
        guard process.contains(",") || process.contains("-") else { throw XCTSkip("one CPU only (\(process))") }
        let first = String(process.prefix { $0.isNumber })
        let result = Locked<[String]?>(nil)
        let pinned = DispatchSemaphore(value: 0), started = DispatchSemaphore(value: 0)
        let tid = Locked<String>("")
        Thread {
            tid.set((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self"))?
                .split(separator: "/").last.map(String.init) ?? "")
            started.signal()
            pinned.wait()
            result.set([Self.allowedCPUs()] + body())
        }.start()
        XCTAssertEqual(started.wait(timeout: .now() + 10), .success)
        let taskset = Process()
        taskset.executableURL = URL(fileURLWithPath: "/usr/bin/taskset")
        taskset.arguments = ["-p", "-c", first, tid.value]
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

private final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value { lock.withLock { stored } }
    func set(_ value: Value) { lock.withLock { stored = value } }
}
