import Foundation
import InkyTestSupport
import XCTest

/// The workers of a root mount are not root: they run as nobody, with no supplementary groups and
/// no capability at all, and open no file of the library: the daemon passes each comic (each page
/// of a folder comic) as a descriptor, and Landlock lets them read the system's libraries only.
/// Nothing a parser taken over by a hostile archive does is done as root, and it cannot open the
/// library's 0600 comics. Checked on the real workers of a real mount: their /proc status, every
/// thread of them, and calls injected with gdb; the private comics, in every format, read through
/// the mount byte for byte.
final class MountWorkerPrivilegeTests: XCTestCase {
    private var library: URL!
    private var scratch: URL!
    private var images: [URL] = []
    private let nobody: (uid: UInt32, gid: UInt32) = {
        guard let entry = getpwnam("nobody") else { return (65534, 65534) }
        return (entry.pointee.pw_uid, entry.pointee.pw_gid)
    }()

    override func setUpWithError() throws {
        try XCTSkipUnless(getuid() == 0, "a root mount's workers: needs root")
        library = ArchiveMaker.temporaryDirectory("privilege-lib")
        scratch = ArchiveMaker.temporaryDirectory("privilege-scratch")
        images = try PDFMaker.pageImages(in: scratch, kinds: ["jpeg-rgb", "png-rgb"])
        let privateFolder = library.appendingPathComponent("Private")
        try FileManager.default.createDirectory(at: privateFolder, withIntermediateDirectories: true)
        try ArchiveMaker.zip(at: privateFolder.appendingPathComponent("Issue.cbz"), members: [("p1.jpg", try readFile(images[0].path)),
                                                                                           ("p2.png", try readFile(images[1].path))],
                             compression: "deflated")
        try PDFMaker.imagePDF(at: library.appendingPathComponent("Book.pdf"), images: images)
        try Self.writeStoredRAR4(at: library.appendingPathComponent("Old.cbr"), members: [("a.jpg", images[0]), ("b.png", images[1])])
        // A solid LZMA2 7z (liblzma's reader), and a folder of loose images (a descriptor per page).
        let staged = scratch.appendingPathComponent("staged")
        try FileManager.default.createDirectory(at: staged, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: images[0], to: staged.appendingPathComponent("p1.jpg"))
        try FileManager.default.copyItem(at: images[1], to: staged.appendingPathComponent("p2.png"))
        _ = try ArchiveMaker.run("/usr/bin/7z", ["a", "-bd", "-ms=on", library.appendingPathComponent("Solid.cb7").path, "p1.jpg", "p2.png"], in: staged)
        let loose = privateFolder.appendingPathComponent("Loose")
        try FileManager.default.copyItem(at: staged, to: loose)
        // Root's and no one else's: nobody, without any capability, can open none of them.
        for path in ["Private/Issue.cbz", "Book.pdf", "Old.cbr", "Solid.cb7", "Private/Loose/p1.jpg", "Private/Loose/p2.png"] {
            XCTAssertEqual(chmod(library.appendingPathComponent(path).path, 0o600), 0)
        }
        XCTAssertEqual(chmod(loose.path, 0o700), 0)
        XCTAssertEqual(chmod(privateFolder.path, 0o700), 0)
        XCTAssertEqual(chmod(library.path, 0o700), 0)
    }

    override func tearDown() {
        if let library { try? FileManager.default.removeItem(at: library) }
        if let scratch { try? FileManager.default.removeItem(at: scratch) }
    }

    /// A stored RAR 4 archive (read with libunarr; Debian has no `rar`): the marker, a main header,
    /// one file header (with the member's CRC-32) and its bytes per member, the end of archive. Each
    /// header starts with the low 16 bits of the CRC-32 of the rest of it.
    private static func writeStoredRAR4(at url: URL, members: [(String, URL)]) throws {
        try ArchiveMaker.python("""
            import struct, sys, zlib
            def block(kind, flags, body):
                rest = struct.pack('<BHH', kind, flags, 7 + len(body)) + body
                return struct.pack('<H', zlib.crc32(rest) & 0xffff) + rest
            with open(sys.argv[1], 'wb') as out:
                out.write(b'Rar!\\x1a\\x07\\x00')
                out.write(block(0x73, 0, bytes(6)))
                for name, path in zip(sys.argv[2::2], sys.argv[3::2]):
                    data, encoded = open(path, 'rb').read(), name.encode()
                    # packed and unpacked size, host Unix, CRC, DOS time 2020-01-01, version 2.9, stored, name, mode
                    body = struct.pack('<IIBIIBBHI', len(data), len(data), 3, zlib.crc32(data), 0x50210000, 29, 0x30,
                                       len(encoded), 0o100644) + encoded
                    out.write(block(0x74, 0x8000, body) + data)
                out.write(block(0x7b, 0, b''))
            """, arguments: [url.path] + members.flatMap { [$0.0, $0.1.path] })
    }

    /// The calls (C expressions of int or long) made inside `pid` by gdb: each result, or -errno when it is -1.
    private func inject(_ pid: Int32, _ calls: [String]) throws -> [Int] {
        let commands = calls.flatMap { ["-ex", "print (long)(\($0))", "-ex", "print *((int *(*)(void))__errno_location)()"] }
        let result = try CommandRunner.capture("/usr/bin/gdb", ["-nx", "-batch", "-p", String(pid)] + commands)
        let values = result.stdout.split(separator: "\n").filter { $0.hasPrefix("$") }
            .compactMap { $0.split(separator: "=").last.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) } }
        XCTAssertEqual(values.count, calls.count * 2, result.stdout + result.stderr)
        return stride(from: 0, to: values.count - 1, by: 2).map { values[$0] == -1 ? -values[$0 + 1] : values[$0] }
    }

    /// `Field:` lines of every thread of `pid`, by thread: a capability set is each thread's own.
    private func threadStatus(_ pid: Int32, _ fields: [String]) -> [String] {
        let tasks = "/proc/\(pid)/task"
        return ((try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? []).sorted().flatMap { task in
            let status = (try? String(contentsOfFile: "\(tasks)/\(task)/status", encoding: .utf8)) ?? ""
            return status.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { line in fields.contains { line.hasPrefix($0 + ":") } }
        }
    }

    /// Whether the mount has workers and every one serves. A worker the pool is still starting has
    /// dropped nothing yet: waited for until it is under seccomp, the last step of a start.
    private func waitForServingWorkers(of mount: MountedLibrary) -> Bool {
        waitUntil(10) {
            let workers = mount.workerPIDs
            return !workers.isEmpty && workers.allSatisfy { self.threadStatus($0, ["Seccomp"]).first == "Seccomp:\t2" }
        }
    }

    func testARootMountsWorkersAreNobodyWithNoCapability() throws {
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: "/usr/bin/gdb"), "needs gdb")
        let mount = try MountedLibrary(library: library)
        XCTAssertFalse(try readFile(mount.path("Private/Issue/001.jpg")).isEmpty)
        XCTAssertTrue(waitForServingWorkers(of: mount))
        let worker = try XCTUnwrap(mount.workerPIDs.first)
        let fields = ["Uid", "Gid", "Groups", "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs", "Seccomp"]
        let ids = { (id: UInt32) in Array(repeating: String(id), count: 4).joined(separator: "\t") }
        let expected = ["Uid:\t" + ids(nobody.uid), "Gid:\t" + ids(nobody.gid), "Groups:",
                        "CapInh:\t0000000000000000", "CapPrm:\t0000000000000000", "CapEff:\t0000000000000000",
                        "CapBnd:\t0000000000000000", "CapAmb:\t0000000000000000", "NoNewPrivs:\t1", "Seccomp:\t2"]
        for pid in mount.workerPIDs {
            let threads = threadStatus(pid, fields)
            XCTAssertGreaterThanOrEqual(threads.count / fields.count, 2, "the serving thread and the orphan watch at least: \(threads)")
            XCTAssertEqual(threads, Array(Array(repeating: expected, count: threads.count / fields.count).joined()),
                           "every thread: nobody, no groups, no capability in any set")
        }

        let comic = library.appendingPathComponent("Private/Issue.cbz").path
        let secret = scratch.appendingPathComponent("root-only.txt").path
        try "root's\n".write(toFile: secret, atomically: true, encoding: .utf8)
        XCTAssertEqual(chmod(secret, 0o600), 0)
        let results = try inject(worker, [
            "((int (*)(void))getuid)()",
            // The library's 0600 comic, which the worker read a moment ago through the daemon's
            // descriptor, does not open by name (root's CAP_DAC_READ_SEARCH opened it).
            "((int (*)(const char *, int))open)(\"\(comic)\", 0)",
            // A file anyone may read, outside the system's libraries: Landlock alone refuses it.
            "((int (*)(const char *, int))open)(\"/etc/passwd\", 0)",
            // access() checks for the real uid with no capability (kernel: only a real uid of 0
            // keeps them there), so it tells nobody from root: root gets 0.
            "((int (*)(const char *, int))access)(\"\(comic)\", 4)",
            // Writable for the effective ids? Root's CAP_DAC_OVERRIDE said yes; nobody's no.
            "((int (*)(int, const char *, int, int))faccessat)(-100, \"\(comic)\", 2, 0x200)",
            // A root-owned 0600 file outside the library: Landlock.
            "((int (*)(const char *, int))open)(\"\(secret)\", 0)",
            // Calls only root could make: setuid(0), kill(1, 0), chown (raw: glibc's setuid would
            // signal every thread). Seccomp refuses them before the kernel's own checks would.
            "((long (*)(long, ...))syscall)(105, 0)",
            "((long (*)(long, ...))syscall)(62, 1, 0)",
            "((long (*)(long, ...))syscall)(92, \"\(comic)\", 0, 0)",
        ])
        XCTAssertEqual(results.count, 9)
        guard results.count == 9 else { return }
        XCTAssertEqual(results[0], Int(nobody.uid), "getuid")
        let refused: [Int32] = [EACCES, EACCES, EACCES, EACCES, EACCES, EPERM, EPERM, EPERM]
        XCTAssertEqual(Array(results[1...]), refused.map { -Int($0) },
                       "open of the private comic, of /etc/passwd, access, W_OK for the effective ids, a root file outside, setuid(0), kill(1, 0), chown: \(results)")
        XCTAssertTrue(mount.isDaemonAlive)
        XCTAssertEqual(mount.unmount(), 0)
    }

    func testARootMountReadsItsPrivateComicsByteForByteAsNobody() throws {
        let mount = try MountedLibrary(library: library)
        let comic = library.appendingPathComponent("Private/Issue.cbz").path
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path("Private/Issue")).sorted(), ["001.jpg", "002.png"])
        XCTAssertEqual(try readFile(mount.path("Private/Issue/001.jpg")), try ReferenceArchive.member("p1.jpg", of: comic), "Python's zipfile")
        XCTAssertEqual(try readFile(mount.path("Private/Issue/002.png")), try ReferenceArchive.member("p2.png", of: comic))
        // MuPDF reads through the passed descriptor, libunarr a mapping of it.
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path("Book")).sorted(), ["001.jpg", "002.png"])
        XCTAssertEqual(try readFile(mount.path("Book/001.jpg")), try readFile(images[0].path), "MuPDF: the embedded image")
        XCTAssertEqual(try readFile(mount.path("Book/002.png")), try readFile(images[1].path))
        let rar = library.appendingPathComponent("Old.cbr").path
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path("Old")).sorted(), ["001.jpg", "002.png"])
        XCTAssertEqual(try readFile(mount.path("Old/001.jpg")), try ReferenceArchive.member("a.jpg", of: rar), "libunarr, against bsdtar")
        XCTAssertEqual(try readFile(mount.path("Old/002.png")), try ReferenceArchive.member("b.png", of: rar))
        let sevenZip = library.appendingPathComponent("Solid.cb7").path
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path("Solid")).sorted(), ["001.jpg", "002.png"])
        XCTAssertEqual(try readFile(mount.path("Solid/001.jpg")), try ReferenceArchive.member("p1.jpg", of: sevenZip), "liblzma, against 7z")
        XCTAssertEqual(try readFile(mount.path("Solid/002.png")), try ReferenceArchive.member("p2.png", of: sevenZip))
        XCTAssertTrue(waitForServingWorkers(of: mount))
        for worker in mount.workerPIDs {
            XCTAssertEqual(threadStatus(worker, ["Uid"]).first, "Uid:\t" + Array(repeating: String(nobody.uid), count: 4).joined(separator: "\t"),
                           "these reads were a nobody's")
        }
        XCTAssertEqual(mount.unmount(), 0)
    }

    /// A folder of loose images is a comic served as a CBZ: the worker lists it and reads each page
    /// from a descriptor the daemon opened for it (the folder and its images are root's alone).
    func testARootMountServesAPrivateFolderComicAsNobody() throws {
        let mount = try MountedLibrary(library: library, arguments: ["--as", "cbz", "--no-list-ahead", "--no-continue"])
        let cbz = mount.path("Private/Loose.cbz")
        let names = try ArchiveMaker.run("/usr/bin/python3", ["-c", "import sys, zipfile; print(*zipfile.ZipFile(sys.argv[1]).namelist())", cbz])
        let members = names.split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        XCTAssertEqual(members.count, 2, names)
        guard members.count == 2 else { return }
        let originals = ["p1.jpg", "p2.png"].map { library.appendingPathComponent("Private/Loose/" + $0).path }
        for (member, original) in zip(members, originals) {
            XCTAssertEqual(try ReferenceArchive.member(member, of: cbz), try readFile(original), "Python's zipfile, \(member)")
        }
        XCTAssertTrue(waitForServingWorkers(of: mount))
        XCTAssertFalse(mount.workerPIDs.isEmpty)
        for worker in mount.workerPIDs {
            XCTAssertEqual(Set(threadStatus(worker, ["Uid", "CapPrm"])), ["Uid:\t" + Array(repeating: String(nobody.uid), count: 4).joined(separator: "\t"),
                                                                         "CapPrm:\t0000000000000000"], "these reads were a nobody's, every thread")
        }
        XCTAssertEqual(mount.unmount(), 0)
    }

    /// On a FUSE filesystem root mounted without allow_other, only root may look: a nobody worker
    /// would read nothing there, so the workers stay root and the log says why.
    func testOnAFUSELibraryOfRootsTheWorkersStayRootAndStillRead() throws {
        let disk = try FaultFS(source: library)
        let mount = try MountedLibrary(library: disk.mountpoint)
        let comic = library.appendingPathComponent("Private/Issue.cbz").path
        XCTAssertEqual(try readFile(mount.path("Private/Issue/001.jpg")), try ReferenceArchive.member("p1.jpg", of: comic))
        XCTAssertTrue(mount.logSays("workers run as root: the library (or the vault) lies on fuse"), mount.logText)
        XCTAssertTrue(waitForServingWorkers(of: mount))
        for worker in mount.workerPIDs {
            XCTAssertEqual(threadStatus(worker, ["Uid"]).first, "Uid:\t0\t0\t0\t0")
        }
        XCTAssertEqual(mount.unmount(), 0)
    }
}
