import Foundation
import InkyTestSupport
import XCTest

/// A library someone else can write into (docs/security.md): files and folders others may
/// not read, symlinks out of it (to /etc/shadow, into a 0700 "home"), one to a comic inside it,
/// link loops, a link to its parent and a FIFO. Every secret carries a marker that must never
/// come out of the mount for a user who cannot read it in the library.
struct HostileLibraryFixture {
    let folder = ArchiveMaker.temporaryDirectory("hostile")
    var library: URL { folder.appendingPathComponent("lib") }
    /// A stand-in for another user's home: 0700, root's, with a 0600 file and a 0600 comic.
    var home: URL { folder.appendingPathComponent("home") }
    let markers = (notes: "NOTES-" + UUID().uuidString, hidden: "HIDDEN-" + UUID().uuidString,
                   secret: "SECRET-" + UUID().uuidString, home: "HOME-" + UUID().uuidString,
                   outside: "OUTSIDE-" + UUID().uuidString)
    /// The readable comic's first page, as the library holds it.
    static let readablePage = ("Series/Issue 001/001.jpg", 37909)

    init(withLinks: Bool = true) throws {
        let manager = FileManager.default
        for sub in ["lib/Series", "lib/Private", "lib/Open", "home"] {
            try manager.createDirectory(at: folder.appendingPathComponent(sub), withIntermediateDirectories: true)
        }
        try manager.copyItem(atPath: Corpus.fixture("Space Patrol/Space Patrol 001.cbz"), toPath: path("Series/Issue 001.cbz"))
        try Self.comic(at: path("Private/Hidden 001.cbz"), marker: markers.hidden)
        try Self.comic(at: path("Secret 001.cbz"), marker: markers.secret)
        try Self.comic(at: home.appendingPathComponent("outside.cbz").path, marker: markers.outside)
        try Data(markers.notes.utf8).write(to: library.appendingPathComponent("notes.txt"))
        try Data(markers.home.utf8).write(to: home.appendingPathComponent("diary.txt"))
        for (relative, mode) in [("notes.txt", 0o600), ("Secret 001.cbz", 0o600), ("Private", 0o700)] {
            try manager.setAttributes([.posixPermissions: mode], ofItemAtPath: path(relative))
        }
        for file in ["home/diary.txt", "home/outside.cbz"] {
            try manager.setAttributes([.posixPermissions: 0o600], ofItemAtPath: folder.appendingPathComponent(file).path)
        }
        try manager.setAttributes([.posixPermissions: 0o700], ofItemAtPath: home.path)
        guard withLinks else { return }
        try addLinks([("shadowlink", "/etc/shadow"), ("homelink", home.appendingPathComponent("diary.txt").path),
                      ("homecomic.cbz", home.appendingPathComponent("outside.cbz").path), ("fav.cbz", "Series/Issue 001.cbz"),
                      ("loop", "."), ("Open/up", ".."), ("parent", ".."), ("Series/absolute", library.path)])
        guard mkfifo(path("fifo"), 0o644) == 0 else { throw CocoaError(.fileWriteUnknown) }
    }

    func path(_ relative: String) -> String { library.appendingPathComponent(relative).path }

    func addLinks(_ links: [(String, String)]) throws {
        for (name, target) in links { try FileManager.default.createSymbolicLink(atPath: path(name), withDestinationPath: target) }
    }

    func remove() { try? FileManager.default.removeItem(at: folder) }

    /// Every marker, and /etc/shadow's whole text: none may appear in what a user reads.
    var secrets: [String] {
        let shadow = (try? String(contentsOfFile: "/etc/shadow", encoding: .utf8)) ?? ""
        return [markers.notes, markers.hidden, markers.secret, markers.home, markers.outside] + (shadow.isEmpty ? [] : [shadow])
    }

    /// A comic of `pages` pages (one unless said) whose page bytes carry `marker`.
    static func comic(at path: String, marker: String, pages: Int = 1) throws {
        let page: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0] + Array(repeating: Array(marker.utf8), count: 20).flatMap { $0 }
        try ArchiveMaker.zip(at: URL(fileURLWithPath: path), members: (1...pages).map { (String(format: "%03d.jpg", $0), page) })
    }

    /// How long `MountedLibrary` takes to come up on `library`.
    static func timeToMount(_ library: URL, _ arguments: [String]) throws -> (MountedLibrary, Double) {
        let started = Date()
        let mount = try MountedLibrary(library: library, arguments: arguments)
        return (mount, Date().timeIntervalSince(started))
    }

    /// The inotify watches the daemon holds (its fdinfo lists one line per watch).
    static func inotifyWatches(of pid: Int32) -> Int {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
        return fds.reduce(0) { count, fd in
            guard (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)")) == "anon_inode:inotify",
                  let info = try? String(contentsOfFile: "/proc/\(pid)/fdinfo/\(fd)", encoding: .utf8) else { return count }
            return count + info.split(separator: "\n").count { $0.hasPrefix("inotify wd:") }
        }
    }
}
