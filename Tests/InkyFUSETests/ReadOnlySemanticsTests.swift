import Foundation
import InkyTestSupport
import XCTest

/// Every writing system call under the mount, one by one, on every kind of node, and the tools
/// that make them: each fails (EROFS, or the errno POSIX puts before it) and nothing changes, not
/// under the mount, not in the library, not in the vault. The mount is not `ro` (`rm` of a link in
/// `Continue Reading/` is the one write it takes: MountContinueReadingRemovalTests), so every
/// EROFS here is the daemon's own answer; the test runs as root, whom the modes let through to it.
final class ReadOnlySemanticsTests: XCTestCase {
    private struct Outcome {
        let call: String
        let target: String
        let expected: Int32
        let actual: Int32
    }

    func testEveryWritingCallFailsWithEROFSAndChangesNothing() throws {
        let fixture = try VaultMountFixture()
        try fixture.unlock()
        for page in ["001", "002"] { _ = try readFile(fixture.path("Space Patrol/Space Patrol 001/\(page).jpg")) } // a Continue Reading link to try too
        let linkDeadline = Date().addingTimeInterval(3)
        while (try? FileManager.default.contentsOfDirectory(atPath: fixture.path("Continue Reading")))?.isEmpty ?? true, Date() < linkDeadline {
            usleep(50_000)
        }
        let readingLink = "Continue Reading/01 - Space Patrol 001"
        XCTAssertNotNil(SystemCall.status(fixture.path(readingLink)), "a link to try")

        var outcomes: [Outcome] = []
        func expect(_ call: String, _ target: String, _ expected: Int32, _ actual: Int32) {
            outcomes.append(Outcome(call: call, target: target, expected: expected, actual: actual))
        }
        func check(_ call: String, _ target: String, _ actual: Int32) { expect(call, target, EROFS, actual) }
        func sibling(_ relative: String, _ name: String) -> String {
            fixture.path((relative as NSString).deletingLastPathComponent + "/" + name)
        }
        let noTimes: UnsafePointer<timespec>? = nil

        // The link first: reading every page for the snapshots finishes its comic, which then leaves Continue Reading.
        // Everything but unlink, which forgets the comic.
        check("rename", readingLink, SystemCall.errnoOf { rename(fixture.path(readingLink), fixture.path("Continue Reading/renamed")) })
        check("lchown", readingLink, SystemCall.errnoOf { lchown(fixture.path(readingLink), getuid(), getgid()) })
        check("utimensat(NOFOLLOW)", readingLink, SystemCall.errnoOf { utimensat(AT_FDCWD, fixture.path(readingLink), noTimes, AT_SYMLINK_NOFOLLOW) })
        // Linux keeps user.* attributes to files and directories, on any filesystem.
        expect("lsetxattr", readingLink, EPERM, SystemCall.errnoOf { SystemCall.lsetxattr(fixture.path(readingLink), "user.test", "x", 1, 0) })
        check("link(into Continue Reading)", readingLink, SystemCall.errnoOf { link(fixture.path("Space Patrol/cover.jpg"), fixture.path("Continue Reading/new")) })
        check("symlink(into Continue Reading)", readingLink, SystemCall.errnoOf { symlink("../Space Patrol", fixture.path("Continue Reading/new")) })

        // Reading changes Continue Reading (that is its purpose), so the comparison leaves its links out.
        func mountTree() -> [String: String] {
            TreeSnapshot.of(fixture.mount.mountpoint.path, includeTimes: false).filter { !$0.key.hasPrefix("Continue Reading/") }
        }
        let mountBefore = mountTree()
        let libraryBefore = TreeSnapshot.of(fixture.library.path, includeTimes: true)
        let vaultBefore = TreeSnapshot.of(fixture.vault.path, includeTimes: true)
        XCTAssertGreaterThan(mountBefore.count, 60, "the whole tree is compared")

        let files = ["Space Patrol/Space Patrol 001/001.jpg", "Space Patrol/cover.jpg", "Broken/Not A Comic/ERROR.txt",
                     "Vault/Secret Series/Moon Tales 01/001.jpg"]
        let directories = ["", "Space Patrol", "Space Patrol/Space Patrol 001", "Continue Reading", "Vault", "Vault/Secret Series",
                           "Vault/Secret Series/Moon Tales 01"]

        for file in files {
            let path = fixture.path(file)
            XCTAssertNotNil(SystemCall.status(path), file)
            for (name, flags) in [("O_WRONLY", O_WRONLY), ("O_RDWR", O_RDWR), ("O_RDONLY|O_TRUNC", O_RDONLY | O_TRUNC),
                                  ("O_WRONLY|O_TRUNC", O_WRONLY | O_TRUNC), ("O_WRONLY|O_APPEND", O_WRONLY | O_APPEND),
                                  ("O_WRONLY|O_CREAT", O_WRONLY | O_CREAT), ("O_RDWR|O_CREAT|O_TRUNC", O_RDWR | O_CREAT | O_TRUNC)] {
                check("open(\(name))", file, SystemCall.openErrno(path, flags))
            }
            // POSIX: O_CREAT|O_EXCL on an existing name is EEXIST whatever the filesystem.
            expect("open(O_RDONLY|O_CREAT|O_EXCL)", file, EEXIST, SystemCall.openErrno(path, O_RDONLY | O_CREAT | O_EXCL))
            check("truncate", file, SystemCall.errnoOf { truncate(path, 0) })
            check("unlink", file, SystemCall.errnoOf { unlink(path) })
            // rmdir of a file is ENOTDIR and renaming a file onto itself does nothing (POSIX:
            // success), whatever the filesystem: the kernel answers both without asking it.
            expect("rmdir", file, ENOTDIR, SystemCall.errnoOf { rmdir(path) })
            check("rename", file, SystemCall.errnoOf { rename(path, sibling(file, "renamed")) })
            expect("rename onto itself", file, 0, SystemCall.errnoOf { rename(path, path) })
            check("link", file, SystemCall.errnoOf { link(path, sibling(file, "hard link")) })
            check("chmod", file, SystemCall.errnoOf { chmod(path, 0o644) })
            check("chown", file, SystemCall.errnoOf { chown(path, getuid(), getgid()) })
            check("utimensat", file, SystemCall.errnoOf { utimensat(AT_FDCWD, path, noTimes, 0) })
            check("setxattr", file, SystemCall.errnoOf { SystemCall.setxattr(path, "user.test", "x", 1, 0) })
            check("setxattr(replace inkyfs)", file, SystemCall.errnoOf { SystemCall.setxattr(path, "user.inkyfs.archive", "x", 1, 0) })
            check("removexattr", file, SystemCall.errnoOf { SystemCall.removexattr(path, "user.inkyfs.archive") })
            XCTAssertEqual(access(path, R_OK), 0, file)
            // access(2) is the kernel's answer from the modes (default_permissions), the daemon
            // is not asked: they let root write, and every write above is refused all the same.
            expect("access(W_OK)", file, 0, SystemCall.errnoOf { access(path, W_OK) })

            // No writable descriptor can be had, so the descriptor calls get a read-only one:
            // write, pwrite and fallocate say EBADF and ftruncate EINVAL (the fd is not open for
            // writing, checked before the filesystem); the rest reach the read-only check.
            let fd = open(path, O_RDONLY)
            XCTAssertGreaterThanOrEqual(fd, 0, file)
            defer { close(fd) }
            expect("write", file, EBADF, SystemCall.errnoOf { write(fd, "x", 1) })
            expect("pwrite", file, EBADF, SystemCall.errnoOf { pwrite(fd, "x", 1, 0) })
            expect("fallocate", file, EBADF, SystemCall.errnoOf { SystemCall.fallocate(fd, 0, 0, 4096) })
            expect("ftruncate", file, EINVAL, SystemCall.errnoOf { ftruncate(fd, 0) })
            check("fchmod", file, SystemCall.errnoOf { fchmod(fd, 0o600) })
            check("fchown", file, SystemCall.errnoOf { fchown(fd, getuid(), getgid()) })
            check("futimens", file, SystemCall.errnoOf { futimens(fd, noTimes) })
            check("fsetxattr", file, SystemCall.errnoOf { SystemCall.fsetxattr(fd, "user.test", "x", 1, 0) })
            check("fremovexattr", file, SystemCall.errnoOf { SystemCall.fremovexattr(fd, "user.inkyfs.archive") })
        }

        for directory in directories {
            let path = directory.isEmpty ? fixture.mount.mountpoint.path : fixture.path(directory)
            let shown = directory.isEmpty ? "(root)" : directory
            XCTAssertNotNil(SystemCall.status(path), shown)
            // POSIX puts EISDIR before the read-only check for writing opens and truncate of a directory.
            expect("open(O_WRONLY)", shown, EISDIR, SystemCall.openErrno(path, O_WRONLY))
            expect("open(O_RDWR)", shown, EISDIR, SystemCall.openErrno(path, O_RDWR))
            expect("truncate", shown, EISDIR, SystemCall.errnoOf { truncate(path, 0) })
            check("open(new, O_WRONLY|O_CREAT)", shown, SystemCall.openErrno(path + "/new file", O_WRONLY | O_CREAT))
            check("open(new, O_RDONLY|O_CREAT)", shown, SystemCall.openErrno(path + "/new file", O_RDONLY | O_CREAT))
            check("open(O_TMPFILE)", shown, SystemCall.openErrno(path, O_RDWR | 0o20_200_000))
            check("mkdir", shown, SystemCall.errnoOf { mkdir(path + "/new folder", 0o755) })
            check("symlink", shown, SystemCall.errnoOf { symlink("001.jpg", path + "/new link") })
            check("mknod(fifo)", shown, SystemCall.errnoOf { mknod(path + "/new fifo", S_IFIFO | 0o644, 0) })
            check("mknod(file)", shown, SystemCall.errnoOf { mknod(path + "/new node", S_IFREG | 0o644, 0) })
            check("link(page into)", shown, SystemCall.errnoOf { link(fixture.path(files[0]), path + "/new hard link") })
            check("rename(page into)", shown, SystemCall.errnoOf { rename(fixture.path(files[0]), path + "/moved.jpg") })
            check("chmod", shown, SystemCall.errnoOf { chmod(path, 0o777) })
            check("chown", shown, SystemCall.errnoOf { chown(path, getuid(), getgid()) })
            check("utimensat", shown, SystemCall.errnoOf { utimensat(AT_FDCWD, path, noTimes, 0) })
            check("setxattr", shown, SystemCall.errnoOf { SystemCall.setxattr(path, "user.test", "x", 1, 0) })
            check("removexattr", shown, SystemCall.errnoOf { SystemCall.removexattr(path, "user.inkyfs.archive") })
            expect("access(W_OK)", shown, 0, SystemCall.errnoOf { access(path, W_OK) })
            // The mountpoint's own name belongs to the filesystem below: rmdir, rename and unlink
            // of it are that filesystem's business (EBUSY), not ours.
            guard !directory.isEmpty else { continue }
            check("rmdir", shown, SystemCall.errnoOf { rmdir(path) })
            // unlink of a directory is EISDIR on Linux, answered by the kernel.
            expect("unlink", shown, EISDIR, SystemCall.errnoOf { unlink(path) })
            check("rename", shown, SystemCall.errnoOf { rename(path, sibling(directory, "renamed")) })
        }

        // The tools people write with, as they run them: each says the filesystem is read-only.
        let page = fixture.path(files[0]), comic = fixture.path("Space Patrol/Space Patrol 001")
        let outside = fixture.folder.appendingPathComponent("outside.txt").path
        try "not for the mount\n".write(toFile: outside, atomically: true, encoding: .utf8)
        for command in [["/bin/rm", page], ["/bin/rm", "-r", comic], ["/bin/rm", "-rf", fixture.path("Vault/Secret Series")],
                        ["/usr/bin/touch", page], ["/usr/bin/touch", fixture.path("Space Patrol/new file")],
                        ["/bin/mkdir", fixture.path("Space Patrol/new folder")], ["/bin/mv", page, fixture.path("Space Patrol/moved.jpg")],
                        ["/bin/mv", comic, fixture.path("Moon Tales")], ["/bin/chmod", "600", page], ["/bin/chmod", "-R", "777", comic],
                        ["/bin/ln", page, fixture.path("Space Patrol/hard link")], ["/bin/ln", "-s", "x", fixture.path("Space Patrol/link")],
                        ["/bin/cp", outside, fixture.mount.mountpoint.path + "/"], ["/bin/cp", outside, page],
                        ["/usr/bin/truncate", "-s", "0", page], ["/usr/bin/setfattr", "-n", "user.test", "-v", "x", page]] {
            let run = try CommandRunner.capture(command[0], Array(command.dropFirst()))
            let said = run.stderr.split(separator: "\n")
            let shown = command.joined(separator: " ")
            XCTAssertNotEqual(run.status, 0, shown)
            XCTAssertFalse(said.isEmpty, shown)
            XCTAssertTrue(said.allSatisfy { $0.hasSuffix(": Read-only file system") }, "\(shown): \(run.stderr)")
        }

        let wrong = outcomes.filter { $0.expected != $0.actual }
        XCTAssertEqual(wrong.count, 0, wrong.map { "\($0.call) on \($0.target): \(ErrorNumber($0.actual)), expected \(ErrorNumber($0.expected))" }
            .joined(separator: "\n"))
        XCTAssertGreaterThan(outcomes.count, 250)
        print("read-only semantics: \(outcomes.count) writing calls, \(outcomes.filter { $0.actual == EROFS }.count) EROFS, "
              + "\(outcomes.filter { $0.actual != EROFS }.count) the errno POSIX puts first")

        // Nothing changed anywhere.
        XCTAssertEqual(mountTree(), mountBefore)
        XCTAssertEqual(TreeSnapshot.of(fixture.library.path, includeTimes: true), libraryBefore)
        XCTAssertEqual(TreeSnapshot.of(fixture.vault.path, includeTimes: true), vaultBefore)
        XCTAssertTrue(fixture.mount.isDaemonAlive, fixture.mount.logText)
    }
}
