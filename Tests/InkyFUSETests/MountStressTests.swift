import Foundation
import InkyArchive
import InkyCore
import InkyTestSupport
import XCTest

/// Many readers at once, random comics, pages, offsets and sizes: every byte must be right.
final class MountStressTests: XCTestCase {
    private final class Tally: @unchecked Sendable {
        let lock = NSLock()
        var reads = 0, bytes = 0
        var failures: [String] = []
        func record(_ count: Int) { lock.withLock { reads += 1; bytes += count } }
        func fail(_ message: String) { lock.withLock { if failures.count < 20 { failures.append(message) } } }
    }

    func testEightReadersOfRandomPagesGetExactBytesWithBoundedMemory() throws {
        let comicFiles = ["Space Patrol/Space Patrol 001.cbz", "Space Patrol/Space Patrol 002.cbz", "Moon Tales/Moon Tales 01.cb7",
                          "Moon Tales/Moon Tales 02.cbt", "Real/Captain Science 001.cbr", "Broken/Really A Zip.cbr"]
        var expected: [(path: String, bytes: [UInt8])] = []
        let cacheBudget = 8 << 20 // smaller than the library, so eviction and refetching happen
        let mount = try MountedLibrary(library: Corpus.fixtures, arguments: ["--cache-size", "\(cacheBudget)"])
        // The expected bytes are each page's entry as Python, 7-Zip or bsdtar extract it, not
        // what inkyfs's own reader makes of it.
        for file in comicFiles {
            let directory = (file as NSString).deletingPathExtension
            let names = try FileManager.default.contentsOfDirectory(atPath: mount.path(directory)).filter { !$0.hasPrefix(".") }
            XCTAssertFalse(names.isEmpty, file)
            for name in names {
                let path = mount.path("\(directory)/\(name)")
                expected.append((path, try ReferenceArchive.member(try sourceAttribute(path), of: Corpus.fixture(file))))
            }
        }
        let tally = Tally()
        let pages = expected
        // A number of reads, not a number of seconds: how many a machine manages in 20 s is
        // scripts/bench's business. A hang fails the test (and unmounts) instead of stalling it.
        let readsPerThread = 2_000
        mount.failingIfHung(after: 600, "8 threads of \(readsPerThread) random reads") {
            DispatchQueue.concurrentPerform(iterations: 8) { thread in
                var random = SystemRandomNumberGenerator()
                for _ in 0..<readsPerThread {
                    let (path, bytes) = pages[Int.random(in: 0..<pages.count, using: &random)]
                    let offset = Int.random(in: 0..<bytes.count, using: &random)
                    let length = Int.random(in: 1...max(1, min(200_000, bytes.count - offset)), using: &random)
                    guard let handle = FileHandle(forReadingAtPath: path) else { tally.fail("open \(path)"); continue }
                    do {
                        try handle.seek(toOffset: UInt64(offset))
                        let data = try handle.read(upToCount: length) ?? Data()
                        try handle.close()
                        if [UInt8](data) != Array(bytes[offset..<offset + length]) {
                            tally.fail("thread \(thread): wrong bytes in \(path) at \(offset)+\(length)")
                        }
                        tally.record(data.count)
                    } catch {
                        tally.fail("thread \(thread): \(path): \(error)")
                    }
                }
            }
        }
        XCTAssertEqual(tally.failures, [])
        XCTAssertEqual(tally.reads, 8 * readsPerThread, "every read came back")
        print("stress: \(tally.reads) reads, \(tally.bytes >> 20) MiB by 8 threads")
        XCTAssertTrue(mount.isDaemonAlive)
        let peak = try peakRSS(of: mount.process.processIdentifier)
        XCTAssertLessThan(peak, cacheBudget + (64 << 20), "daemon peak RSS \(peak >> 20) MiB")
    }

    func testABigComicReadEndToEndStaysWithinTheBudget() throws {
        let library = ArchiveMaker.temporaryDirectory("big")
        defer { try? FileManager.default.removeItem(at: library) }
        // 96 pages of 2.5 MiB (240 MiB), stored, against a 32 MiB cache budget.
        try ArchiveMaker.python("""
            import os, sys, zipfile, random
            random.seed(7)
            with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_STORED) as z:
                for i in range(96):
                    z.writestr(f"p{i:03}.jpg", random.randbytes(2_500_000 + i))
            """, arguments: [library.appendingPathComponent("Big.cbz").path])
        let budget = 32 << 20
        let mount = try MountedLibrary(library: library, arguments: ["--cache-size", "\(budget)"])
        let names = try FileManager.default.contentsOfDirectory(atPath: mount.path("Big")).sorted()
        XCTAssertEqual(names.count, 96)
        var total = 0
        for name in names { total += try readFile(mount.path("Big/\(name)")).count }
        XCTAssertEqual(total, (0..<96).reduce(0) { $0 + 2_500_000 + $1 })
        let peak = try peakRSS(of: mount.process.processIdentifier)
        print("big comic: \(total >> 20) MiB read, daemon peak RSS \(peak >> 20) MiB with a \(budget >> 20) MiB budget")
        XCTAssertLessThan(peak, budget + (64 << 20))
    }

    private func peakRSS(of pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try XCTUnwrap(status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") })
        return (Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) * 1024
    }
}
