import Foundation
import InkyTestSupport
import XCTest

/// The daemon's log read whole after unmount: every line has a time and a level, a comic that
/// cannot be opened is an error, libunarr's own notes (`- rar.c:65: Skipping directory entry`,
/// printed on a worker's stderr, which was the log) never appear raw, and the mount's line names
/// the settings that are not the defaults.
final class MountLogLevelsTests: XCTestCase {
    func testEveryLineHasALevelErrorsAreErrorsAndNoLibraryLineIsRaw() throws {
        try Corpus.skipUnlessPresent("real-comics")
        let library = ArchiveMaker.temporaryDirectory("log-library"), state = ArchiveMaker.temporaryDirectory("log-state")
        defer { for folder in [library, state] { try? FileManager.default.removeItem(at: folder) } }
        // t.cbr holds a folder entry libunarr reports on stderr; p.rar is encrypted: it cannot be opened.
        for name in ["t.cbr", "p.rar"] {
            try FileManager.default.copyItem(atPath: Corpus.path("real-comics/patool/" + name), toPath: library.appendingPathComponent(name).path)
        }
        let mounted = try MountedLibrary(library: library, arguments: ["--state", state.path, "--as", "cbz", "--device", "kobo-clara",
                                                                       "--fit", "600x800"])
        XCTAssertTrue(mounted.logSays("listed 2 comics ahead"), mounted.logText)
        let log = mounted.wholeLogAfterUnmount()

        XCTAssertFalse(log.contains("rar.c"), log)
        let lines = log.split(separator: "\n")
        for line in lines {
            let fields = line.split(separator: " ", maxSplits: 3)
            XCTAssertTrue(fields.count == 4 && fields[0].contains("T") && ["info", "warning", "error"].contains(fields[1]) && fields[2] == "inkyfs:",
                          "a line with a time and a level: \(line)")
        }
        let encrypted = library.appendingPathComponent("p.rar").path
        XCTAssertTrue(lines.contains { $0.contains(" error inkyfs: [inkyfs] cannot open \(encrypted): encrypted archives are not supported") }, log)
        let settings = try XCTUnwrap(lines.first { $0.contains("] mounted ") }?.components(separatedBy: "; not the defaults: ").last, log)
        for setting in ["--as cbz", "--fit 600x800", "--device kobo-clara"] { XCTAssertTrue(settings.contains(setting), "\(setting): \(settings)") }
    }
}
