import CFuse3
import CInkyFuseDevice
import Foundation
import InkyTestSupport
import XCTest

/// The device readers (shim.h, "CPU-local service") on a pipe standing in for /dev/fuse: a
/// reader pins itself to one CPU, waits in poll(2) while the device is empty and returns what
/// arrives, never EAGAIN (libfuse's loop would end the session on it). Through a real mount,
/// and the workers the readers spawn, in MountDeviceReadersTests.
final class FUSEDeviceReadersTests: XCTestCase {
    /// A reader on its own thread, as libfuse's workers are: its thread id, and what it read.
    private final class Reader: @unchecked Sendable {
        private let lock = NSLock()
        private var _tid: Int32 = 0
        private var _result: (got: Int, bytes: [UInt8], errno: Int32)?
        var tid: Int32 { lock.withLock { _tid } }
        var result: (got: Int, bytes: [UInt8], errno: Int32)? { lock.withLock { _result } }

        private let readers: UnsafeMutablePointer<inky_device_readers>

        init(fd: Int32, readers: UnsafeMutablePointer<inky_device_readers>) {
            self.readers = readers
            Thread { [self] in
                let tid = currentThreadID() ?? -1
                lock.withLock { _tid = tid }
                var buffer = [UInt8](repeating: 0, count: 64)
                let got = inky_device_read(fd, &buffer, buffer.count, self.readers)
                let error = errno
                lock.withLock { _result = (got, Array(buffer[0..<max(got, 0)]), error) }
            }.start()
        }

        /// The kernel's view of the thread: whether it sleeps in poll(2), on which CPUs it may run.
        var waitsInPoll: Bool {
            tid != 0 && ((try? String(contentsOfFile: "/proc/self/task/\(tid)/wchan", encoding: .utf8)) ?? "").contains("poll")
        }
        func allowedCPUs() -> String? { InkyTestSupport.allowedCPUs("/proc/self/task/\(tid)") }
    }

    /// C memory, as FUSEContext's: the reader threads hold its address.
    private let readers = UnsafeMutablePointer<inky_device_readers>.allocate(capacity: 1)

    /// Freed once the pipes are closed, which wakes any reader still waiting: a reader in poll(2)
    /// no longer touches it.
    deinit { readers.deallocate() }

    private func device() throws -> (read: Int32, write: Int32) {
        var ends: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&ends), 0)
        addTeardownBlock { close(ends[0]); close(ends[1]) }
        let cpus = inky_device_readers_begin(readers, ends[0])
        if cpus == 0 {
            throw XCTSkip("this process may run on one CPU only: the readers stay plain blocking reads")
        }
        XCTAssertEqual(Int(cpus), cpuCount(allowedCPUs() ?? ""), "the readers spread over the CPUs this process may use")
        XCTAssertNotEqual(fcntl(ends[0], F_GETFL) & O_NONBLOCK, 0, "the device is made non-blocking")
        return (ends[0], ends[1])
    }

    func testAReaderWaitsInPollOnItsOwnCPUAndReturnsWhatArrives() throws {
        let device = try device()
        let reader = Reader(fd: device.read, readers: readers)
        XCTAssertTrue(waitUntil(10) { reader.waitsInPoll },
                      "the reader found the device empty and waits in poll(2), not spinning on EAGAIN")
        let cpus = try XCTUnwrap(reader.allowedCPUs())
        XCTAssertEqual(cpuCount(cpus), 1, "the reader is pinned to one CPU: \(cpus)")
        let request: [UInt8] = [1, 2, 3, 4, 5]
        XCTAssertEqual(write(device.write, request, request.count), request.count)
        XCTAssertTrue(waitUntil(10) { reader.result != nil })
        XCTAssertEqual(reader.result?.got, request.count)
        XCTAssertEqual(reader.result?.bytes, request)
    }

    /// The kernel ends a session by failing the read (ENODEV), after waking the pollers: here the
    /// pipe's end wakes the reader and its read's answer (0, end of file) comes back as it is.
    func testTheDevicesEndReachesAWaitingReader() throws {
        let device = try device()
        let reader = Reader(fd: device.read, readers: readers)
        XCTAssertTrue(waitUntil(10) { reader.waitsInPoll })
        close(device.write)
        XCTAssertTrue(waitUntil(10) { reader.result != nil }, "the end wakes the reader")
        XCTAssertEqual(reader.result?.got, 0)
    }

    func testReadersTakeTheCPUsInTurn() throws {
        let device = try device()
        let first = Reader(fd: device.read, readers: readers)
        XCTAssertTrue(waitUntil(10) { first.waitsInPoll })
        let second = Reader(fd: device.read, readers: readers)
        XCTAssertTrue(waitUntil(10) { second.waitsInPoll })
        XCTAssertNotEqual(first.allowedCPUs(), second.allowedCPUs(), "two readers, two CPUs")
        let one: [UInt8] = [9]
        XCTAssertEqual(write(device.write, one, 1), 1)
        XCTAssertTrue(waitUntil(10) { first.result != nil || second.result != nil })
        XCTAssertEqual(write(device.write, one, 1), 1)
        XCTAssertTrue(waitUntil(10) { first.result != nil && second.result != nil },
                      "the one that found the device empty after the other took the first byte waits again")
        XCTAssertEqual([first.result?.got, second.result?.got], [1, 1])
    }
}
