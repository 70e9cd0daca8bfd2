import Foundation
import InkyTestSupport
import XCTest

/// The command line's first word, bare `inkyfs`, and how errors end: a mistake on the command
/// line is a usage error (64, with the usage), anything else says what went wrong on one line
/// and exits with its own documented status.
final class CommandWordsTests: XCTestCase {
    func testAnUnknownWordIsAnUnknownCommandWithTheNearestOne() throws {
        let result = try CommandRunner.inkyfs(["umount", "/tmp/mnt"])
        XCTAssertEqual(result.status, 64)
        XCTAssertEqual(result.stdout, "")
        XCTAssertTrue(result.stderr.hasPrefix("inkyfs: 'umount' is not an inkyfs command, nor a library folder here. Did you mean 'unmount'?\n"
                                              + "Commands: mount, unmount, status, vault,"), result.stderr)
        let far = try CommandRunner.inkyfs(["frobnicate"])
        XCTAssertEqual(far.status, 64)
        XCTAssertFalse(far.stderr.contains("Did you mean"), far.stderr)
        // A path that exists is still a library: mount is the default command (mount.fuse3's form).
        let folder = ArchiveMaker.temporaryDirectory("words")
        defer { try? FileManager.default.removeItem(at: folder) }
        let library = try CommandRunner.inkyfs(["status-of-nothing"], environment: [:])
        XCTAssertTrue(library.stderr.contains("Did you mean 'status'?") || library.stderr.contains("is not an inkyfs command"), library.stderr)
        let mount = try CommandRunner.capture(CommandRunner.binary.path, [".", folder.appendingPathComponent("missing").path], in: folder)
        XCTAssertEqual(mount.status, 2, mount.stderr)
        XCTAssertTrue(mount.stderr.contains("does not exist"), mount.stderr)
    }

    func testBareInkyfsPrintsTheOverviewAndHelpDocumentsEveryExitStatus() throws {
        let bare = try CommandRunner.inkyfs([])
        XCTAssertEqual(bare.status, 0)
        XCTAssertEqual(bare.stderr, "")
        XCTAssertTrue(bare.stdout.hasPrefix("OVERVIEW: Mount a comic library"), bare.stdout)
        let help = try CommandRunner.inkyfs(["--help"])
        XCTAssertEqual(help.stdout, bare.stdout)
        let table = help.stdout.components(separatedBy: "Exit status:\n").last?.components(separatedBy: "\n\n").first ?? ""
        XCTAssertEqual(table.split(separator: "\n").map { String($0.prefix(12)) },
                       ["  0   done", "  1   done, ", "  2   nothin", "  3   libfus", "  4   no ink", "  5   the mo", "  64  a wron"], help.stdout)
    }

    /// Every mount setting that has a default says it, those read through a size or duration
    /// parser too (ArgumentParser shows defaults only for the values it parses itself).
    func testHelpMountShowsEveryDefaultAndTheOverviewNamesPDF() throws {
        let help = try CommandRunner.inkyfs(["help", "mount"]).stdout.replacingOccurrences(of: "\n ", with: " ")
            .replacingOccurrences(of: #" +"#, with: " ", options: .regularExpression)
        for shown in ["e.g. 512M. (default: 256M)", "-o cover_cache_size= in fstab. (default: 500M)", "page_cache_size= in fstab. (default: 2G)",
                      "(default: 15m)", "(default: 128M)", "(default: 4G)", "(default: 5)", "(default: 4)", "default: folders)"] {
            XCTAssertTrue(help.contains(shown), "\(shown) in:\n\(help)")
        }
        let overview = try CommandRunner.inkyfs(["--help"]).stdout.replacingOccurrences(of: #"\s+"#, with: " ", options: .regularExpression)
        XCTAssertTrue(overview.contains("(CBZ/ZIP, CBR/RAR, CB7/7z, CBT/TAR) and every PDF appears as a folder of its pages"), overview)
    }

    func testRuntimeErrorsEndWithoutTheUsageAndWithTheirOwnStatus() throws {
        let missing = "/nonexistent-\(UUID().uuidString)"
        let unmount = try CommandRunner.inkyfs(["unmount", missing])
        XCTAssertEqual(unmount.status, 4)
        XCTAssertTrue(unmount.stderr.hasPrefix("inkyfs: \(missing) is not an inkyfs mount: nothing is mounted there"), unmount.stderr)
        XCTAssertEqual(unmount.stderr.split(separator: "\n").count, 1, unmount.stderr)
        let proc = try CommandRunner.inkyfs(["unmount", "/proc"])
        XCTAssertEqual(proc.status, 4)
        XCTAssertTrue(proc.stderr.hasPrefix("inkyfs: /proc is not an inkyfs mount: it is a proc mount, not inkyfs's"), proc.stderr)
        let scan = try CommandRunner.inkyfs(["scan", missing])
        XCTAssertEqual(scan.status, 2)
        XCTAssertFalse(scan.stderr.contains("Usage"), scan.stderr)
        // A wrong value is a usage error: 64, with the usage.
        let size = try CommandRunner.inkyfs(["mount", "--cache-size", "12", "/tmp", missing])
        XCTAssertEqual(size.status, 64)
        XCTAssertTrue(size.stderr.contains("'12' would be 12 bytes: give a unit, like 12M or 12G"), size.stderr)
        XCTAssertTrue(size.stderr.contains("Usage:"), size.stderr)
        let fstabSize = try CommandRunner.inkyfs(["mount", "-o", "cache_size=12", "/tmp", missing])
        XCTAssertEqual(fstabSize.status, 64, fstabSize.stderr)
        XCTAssertEqual(try CommandRunner.inkyfs(["mount", "--cache-size", "2097152", "/tmp", missing]).status, 2,
                       "plainly bytes is a size; the missing mountpoint is what stops it")
    }
}
