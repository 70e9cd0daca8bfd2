import Foundation
import InkyCore
import InkyTestSupport
import XCTest

/// The mount's root is the library with the views' folders added (`MountComposition`): each
/// view's folder shows once, in its own slot of inode numbers, and a library folder of the same
/// name is behind it while the view shows (the vault's only while unlocked).
final class MountViewCompositionTests: XCTestCase {
    func testAViewsFolderHidesTheLibraryFolderOfItsNameAndHasItsOwnInodes() throws {
        let library = ArchiveMaker.temporaryDirectory("views")
        try FileManager.default.removeItem(at: library)
        try FileManager.default.copyItem(at: Corpus.fixtures, to: library)
        let state = ArchiveMaker.temporaryDirectory("views-state")
        defer {
            try? FileManager.default.removeItem(at: library)
            try? FileManager.default.removeItem(at: state)
        }
        let mounted = try MountedLibrary(library: library, arguments: ["--state", state.path])
        defer { mounted.unmount() }
        // Library folders named like the views, made while mounted (a mount refuses to start
        // over them): Continue Reading/ is always shown, Vault/ only while a vault is unlocked
        // (here never).
        for name in ["Continue Reading", "Vault"] {
            let folder = library.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try ArchiveMaker.zip(at: folder.appendingPathComponent("Hidden 01.cbz"), members: [("001.jpg", ArchiveMaker.noise(count: 900, seed: 7))])
        }
        var names: [String] = []
        let shown = Date().addingTimeInterval(10)
        while !names.contains("Vault"), Date() < shown {
            names = try ArchiveMaker.run("/bin/ls", ["-A", mounted.path("")]).split(separator: "\n").map(String.init)
            if !names.contains("Vault") { usleep(50_000) }
        }
        XCTAssertEqual(names.filter { $0 == "Continue Reading" }.count, 1, "\(names)")
        XCTAssertEqual(names.filter { $0 == "Vault" }.count, 1, "the library's Vault shows while no vault is unlocked")
        XCTAssertEqual(try ArchiveMaker.run("/bin/ls", ["-A", mounted.path("Vault")]), "Hidden 01\n")
        XCTAssertEqual(try ArchiveMaker.run("/bin/ls", ["-A", mounted.path("Continue Reading")]), "", "the view, not the library folder")

        func inode(_ path: String) throws -> UInt64 {
            try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: mounted.path(path))[.systemFileNumber] as? UInt64)
        }
        XCTAssertEqual(try inode("Continue Reading") >> 56, 1, "the first view's slot")
        XCTAssertEqual(try inode("Vault") >> 56, 0, "a library folder: the base tree's slot")
        XCTAssertEqual(try inode("Space Patrol/Space Patrol 001/001.jpg") >> 56, 0)

        // Reading pages puts their comic in Continue Reading/, as a link in the view's slot
        // that leads back into the library.
        _ = try readFile(mounted.path("Space Patrol/Space Patrol 001/001.jpg"))
        _ = try readFile(mounted.path("Space Patrol/Space Patrol 001/002.jpg"))
        let deadline = Date().addingTimeInterval(10)
        var links: [String] = []
        while links.isEmpty, Date() < deadline {
            links = try FileManager.default.contentsOfDirectory(atPath: mounted.path("Continue Reading"))
            if links.isEmpty { usleep(50_000) }
        }
        let link = try XCTUnwrap(links.first, "a comic in progress")
        XCTAssertEqual(try inode("Continue Reading/\(link)") >> 56, 1)
        XCTAssertEqual(try readFile(mounted.path("Continue Reading/\(link)/002.jpg")),
                       try readFile(mounted.path("Space Patrol/Space Patrol 001/002.jpg")))
        // find sees the tree without a loop or a name twice.
        let found = try ArchiveMaker.run("/usr/bin/find", [mounted.path("")]).split(separator: "\n")
        XCTAssertEqual(found.count, Set(found).count)
    }
}
