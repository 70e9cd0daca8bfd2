import Foundation
import InkyTestSupport
import XCTest

/// The server and a mount of the same library, sharing one state folder: progress made in one
/// shows in the other, both ways.
final class ServeBesideMountTests: XCTestCase {
    func testProgressMadeInEitherShowsInTheOther() throws {
        let state = ArchiveMaker.temporaryDirectory("shared-state", removedAtExit: true)
        let mount = try MountedLibrary(library: Corpus.fixtures, arguments: ["--state", state.path])
        defer { mount.unmount() }
        let server = try ServedLibrary(library: Corpus.fixtures, state: state)
        defer { XCTAssertEqual(server.stop(), 0, server.logText) }
        let continuing = mount.mountpoint.appendingPathComponent("Continue Reading").path

        // Page 3 streamed by the server, alone: a one-off, as a page read alone in the mount is.
        let moonTales = "/opds/comic/page?path=Moon%20Tales/Moon%20Tales%2001.cb7"
        XCTAssertEqual(try server.get(moonTales + "&page=2&width=200").status, 200)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: continuing), [])
        XCTAssertEqual(try XCTUnwrap(FeedReader(try server.get("/opds/continue").body)).entries.count, 0)
        // Page 2 too: being read, and the mount's Continue Reading/ leads to the comic.
        XCTAssertEqual(try server.get(moonTales + "&page=1&width=200").status, 200)
        XCTAssertTrue(waitUntil(10) {
            (try? FileManager.default.contentsOfDirectory(atPath: continuing))?.contains("01 - Moon Tales 01") ?? false
        }, "\(String(describing: try? FileManager.default.contentsOfDirectory(atPath: continuing)))")

        // Pages read through the mount: the server's Continue Reading has that comic first, at the last one.
        _ = try readFile(mount.mountpoint.appendingPathComponent("Space Patrol/Space Patrol 001/001.jpg").path)
        _ = try readFile(mount.mountpoint.appendingPathComponent("Space Patrol/Space Patrol 001/002.jpg").path)
        var titles: [String] = []
        XCTAssertTrue(waitUntil(10) {
            titles = (try? server.get("/opds/continue")).flatMap { FeedReader($0.body) }?.entries.map(\.title) ?? []
            return titles.first == "Space Patrol #1: First Contact"
        }, "\(titles)")
        let feed = try XCTUnwrap(FeedReader(try server.get("/opds/continue").body))
        XCTAssertEqual(feed.entries.first?.link("http://vaemendis.net/opds-pse/stream")?.attributes["pse:lastRead"], "1")
        XCTAssertEqual(Array(titles.dropFirst()), ["Moon Tales #1"])
    }
}
