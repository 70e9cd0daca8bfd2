import Foundation
import InkyArchive
import InkyCore
import InkyTestSupport
import Synchronization
import XCTest
@testable import InkyLibrary
import InkyTree
import InkyWorker

/// The resume run over an in-process backend that records every request: a reader reading a solid
/// comic page after page, each read asked as soon as the one before is answered (as the kernel
/// does), never makes the decoder go back, whatever the pages written ahead for the disk.
final class ResumeRunTests: XCTestCase {
    /// Parses in this process and notes the entries of each request, in order.
    final class RecordingBackend: ComicBackend {
        let requests = Mutex<[[PageSource]]>([])

        func list(_ source: ComicSource, limits: ComicLimits) throws(ComicError) -> (ComicListing, FileIdentity) {
            let path = source.path
            let identity = try FileIdentity.of(path).mapError { ComicError.io(path: path, errno: $0.code, detail: "\($0)") }.get()
            return (try ComicOpener.open(path, limits: limits).listing, identity)
        }

        func read(_ source: ComicSource, identity: FileIdentity, entries: [EntryRequest], limits: ComicLimits,
                  deliver: (PageSource, Result<[UInt8], ComicError>) -> Void) throws(ComicError) {
            let path = source.path
            requests.withLock { $0.append(entries.map(\.source)) }
            let reader = try ComicOpener.open(path, limits: limits)
            for entry in entries {
                do throws(ComicError) { deliver(entry.source, .success(try reader.readPage(entry.page))) } catch { deliver(entry.source, .failure(error)) }
            }
        }

        func comicInfo(_ source: ComicSource, identity: FileIdentity, limits: ComicLimits) throws(ComicError) -> [UInt8]? { nil }
    }

    /// The library, and the folder of the pages kept.
    private let folders = [ArchiveMaker.temporaryDirectory("resume-run"), ArchiveMaker.temporaryDirectory("resume-run-cache")]

    override func tearDown() {
        for folder in folders { try? FileManager.default.removeItem(at: folder) }
    }

    func testReadingASolidComicInOrderNeverTakesTheDecoderBack() throws {
        let (library, cache) = (folders[0], folders[1])
        let count = 80
        let pages = (1...count).map { (String(format: "%03d.png", $0), GeneratedComic.page($0)) }
        try GeneratedComic.write(pages, as: .sevenZipSolid, to: library.appendingPathComponent("Long.cb7"))
        var options = MountOptions()
        options.resumePages = ResumePages(sharing: ConvertedPageCache(directory: cache.path, capacity: 1 << 30))
        let backend = RecordingBackend()
        let filesystem = LibraryFilesystem(library: library.path, options: options, backend: backend)
        let directory = try filesystem.lookup("Long", in: filesystem.rootNode).get().node
        let pageNodes = try (1...count).map { try filesystem.lookup(String(format: "%03d.png", $0), in: directory).get().node }

        let read = Mutex<[[UInt8]]>([])
        let done = DispatchSemaphore(value: 0)
        // Each read is asked on a thread of its own as soon as the one before is answered; the
        // answer to an even page returns only once the next read was asked: what the kernel may do,
        // made certain, so whatever the daemon does after answering that page comes after the next
        // read. (Not after every page: nested, the reads would all run backwards.)
        @Sendable func readPage(_ index: Int) {
            guard index < count else {
                done.signal()
                return
            }
            filesystem.read(pageNodes[index], offset: 0, size: 1 << 20, descriptor: nil) { result in
                read.withLock { $0.append((try? result.get()).map(Array.init) ?? []) }
                let asked = DispatchSemaphore(value: 0)
                Thread {
                    readPage(index + 1)
                    asked.signal()
                }.start()
                if index % 2 == 0 { asked.wait() }
            }
        }
        readPage(0)
        XCTAssertEqual(done.wait(timeout: .now() + 60), .success)
        XCTAssertEqual(read.withLock { $0 }, pages.map(\.1))

        let requests = backend.requests.withLock { $0 }
        let restarts = zip(requests, requests.dropFirst()).filter { before, after in after.first! <= before.last! }
        XCTAssertEqual(restarts.count, 0, "requests: \(requests.map { $0.map(\.entry) })")
    }
}
