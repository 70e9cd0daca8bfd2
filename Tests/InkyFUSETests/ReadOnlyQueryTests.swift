import Foundation
import InkyTestSupport
import XCTest

/// What a read-only filesystem answers as POSIX says: link counts of directories, `.` and `..`,
/// inode numbers that stay, readlink, extended attributes, statfs, access and seek.
final class ReadOnlyQueryTests: XCTestCase {
    /// Every directory under the mount, relative paths ("" is the root).
    private func directories(under root: String) -> [String] {
        var found = [""]
        var index = 0
        while index < found.count {
            let relative = found[index]
            index += 1
            let path = relative.isEmpty ? root : root + "/" + relative
            for name in ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted() {
                let child = relative.isEmpty ? name : relative + "/" + name
                if let info = SystemCall.status(root + "/" + child), info.st_mode & S_IFMT == S_IFDIR { found.append(child) }
            }
        }
        return found
    }

    func testDirectoryLinkCountsDotEntriesAndInodesStayAcrossLookupsAndCacheDrops() throws {
        let fixture = try VaultMountFixture()
        try fixture.unlock()
        let root = fixture.mount.mountpoint.path
        let folders = directories(under: root)
        XCTAssertTrue(folders.contains("Vault/Secret Series/Moon Tales 01"), "the vault is walked too")
        XCTAssertGreaterThan(folders.count, 15)

        var inodes: [String: UInt64] = [:]
        for folder in folders {
            let path = folder.isEmpty ? root : root + "/" + folder
            let info = try XCTUnwrap(SystemCall.status(path), folder)
            let entries = SystemCall.directoryEntries(path)
            // `.` and `..` come first, as every POSIX directory has them; `.` is the directory itself.
            XCTAssertEqual(entries.prefix(2).map(\.name), [".", ".."], folder)
            XCTAssertEqual(entries.first?.inode, UInt64(info.st_ino), "'.' of \(folder)")
            if !folder.isEmpty {
                let parent = try XCTUnwrap(SystemCall.status(path + "/.."))
                XCTAssertEqual(entries.dropFirst().first?.inode, UInt64(parent.st_ino), "'..' of \(folder)")
                XCTAssertEqual(parent.st_ino, SystemCall.status((path as NSString).deletingLastPathComponent)?.st_ino, folder)
            }
            // st_nlink: 2 + the number of subdirectories, each of which names this one `..`.
            let subdirectories = entries.dropFirst(2).filter { entry in
                SystemCall.status(path + "/" + entry.name).map { $0.st_mode & S_IFMT == S_IFDIR } ?? false
            }
            XCTAssertEqual(Int(info.st_nlink), 2 + subdirectories.count, "st_nlink of \(folder.isEmpty ? "the root" : folder)")
            for entry in entries.dropFirst(2) {
                let child = try XCTUnwrap(SystemCall.status(path + "/" + entry.name), entry.name)
                XCTAssertEqual(UInt64(child.st_ino), entry.inode, "d_ino and st_ino of \(folder)/\(entry.name)")
                if child.st_mode & S_IFMT == S_IFREG { XCTAssertEqual(child.st_nlink, 1) }
                inodes[folder.isEmpty ? entry.name : folder + "/" + entry.name] = UInt64(child.st_ino)
            }
        }
        XCTAssertEqual(Set(inodes.values).count, inodes.count, "every node its own inode number")
        XCTAssertEqual(SystemCall.status(root)?.st_ino, 1, "the root is inode 1")

        func currentInodes() -> [String: UInt64] {
            inodes.keys.reduce(into: [:]) { result, relative in
                result[relative] = SystemCall.status(root + "/" + relative).map { UInt64($0.st_ino) }
            }
        }
        XCTAssertEqual(currentInodes(), inodes, "the same numbers on a second lookup")
        // The kernel forgets its dentries and inodes (FUSE forget); the numbers must not move.
        try "2\n".write(toFile: "/proc/sys/vm/drop_caches", atomically: false, encoding: .utf8)
        XCTAssertEqual(currentInodes(), inodes, "the same numbers after the kernel dropped its caches")
        XCTAssertTrue(fixture.mount.isDaemonAlive)
    }

    func testReadlinkXattrsStatfsAccessAndSeekBehaveAsPOSIXSays() throws {
        let fixture = try VaultMountFixture()
        let page = fixture.path("Space Patrol/Space Patrol 001/001.jpg")
        let comic = fixture.path("Space Patrol/Space Patrol 001")
        let pageBytes = try readFile(page)
        _ = try readFile(fixture.path("Space Patrol/Space Patrol 001/002.jpg")) // two pages: a comic in progress

        // readlink: EINVAL on anything but a link; a Continue Reading link names its comic.
        var target = [CChar](repeating: 0, count: 4096)
        for path in [page, comic, fixture.mount.mountpoint.path, fixture.path("Space Patrol/cover.jpg")] {
            XCTAssertEqual(SystemCall.errnoOf { readlink(path, &target, target.count) }, EINVAL, path)
        }
        let linkDeadline = Date().addingTimeInterval(3)
        var links: [String] = []
        while links.isEmpty, Date() < linkDeadline {
            links = (try? FileManager.default.contentsOfDirectory(atPath: fixture.path("Continue Reading"))) ?? []
            usleep(50_000)
        }
        XCTAssertEqual(links, ["01 - Space Patrol 001"])
        let length = readlink(fixture.path("Continue Reading/01 - Space Patrol 001"), &target, target.count)
        XCTAssertEqual(String(decoding: target[0..<max(0, length)].map { UInt8(bitPattern: $0) }, as: UTF8.self), "../Space Patrol/Space Patrol 001")

        // Extended attributes: the archive behind a comic and its pages, the entry behind a page.
        let archive = fixture.library.appendingPathComponent("Space Patrol/Space Patrol 001.cbz").path
        XCTAssertEqual(SystemCall.extendedAttributeNames(page), .success(["user.inkyfs.archive", "user.inkyfs.source"]))
        XCTAssertEqual(SystemCall.extendedAttributeNames(comic), .success(["user.inkyfs.archive"]))
        XCTAssertEqual(SystemCall.extendedAttributeNames(fixture.mount.mountpoint.path), .success([]))
        XCTAssertEqual(SystemCall.extendedAttribute(comic, "user.inkyfs.archive"), .success(Array(archive.utf8)))
        XCTAssertEqual(SystemCall.extendedAttribute(page, "user.inkyfs.archive"), .success(Array(archive.utf8)))
        guard case .success(let source) = SystemCall.extendedAttribute(page, "user.inkyfs.source") else { return XCTFail("no source") }
        XCTAssertFalse(source.isEmpty)
        XCTAssertEqual(SystemCall.extendedAttribute(page, "user.inkyfs.missing"), .failure(ErrorNumber(ENODATA)))
        XCTAssertEqual(SystemCall.extendedAttribute(fixture.mount.mountpoint.path, "user.inkyfs.archive"), .failure(ErrorNumber(ENODATA)))
        XCTAssertEqual(SystemCall.extendedAttribute(page, "user.inkyfs.archive", capacity: 3), .failure(ErrorNumber(ERANGE)))
        XCTAssertEqual(SystemCall.getxattr(page, "user.inkyfs.archive", nil, 0), archive.utf8.count, "size query")

        // statfs: nosuid, nodev, names up to 255 bytes. Not ST_RDONLY: the kernel sets it from the
        // mount's flags alone (FUSE's statfs reply carries none), and the mount is not `ro`, for
        // `rm` in Continue Reading/; the daemon refuses every other write itself.
        var volume = statvfs()
        XCTAssertEqual(statvfs(fixture.mount.mountpoint.path, &volume), 0)
        XCTAssertEqual(volume.f_flag & UInt(ST_RDONLY), 0, "ST_RDONLY")
        XCTAssertNotEqual(volume.f_flag & UInt(ST_NOSUID), 0, "ST_NOSUID")
        XCTAssertNotEqual(volume.f_flag & 4, 0, "ST_NODEV") // 4: a GNU name Glibc's Swift module leaves out
        XCTAssertEqual(volume.f_namemax, 255)
        XCTAssertGreaterThan(volume.f_bsize, 0)

        // access: readable, pages not executable, directories searchable. Writable is the kernel's
        // answer from the modes (default_permissions; the daemon is not asked): no write bit for
        // anyone, which root passes; the write itself is refused (EROFS: ReadOnlySemanticsTests).
        XCTAssertEqual(access(page, R_OK), 0)
        XCTAssertEqual(SystemCall.errnoOf { access(page, X_OK) }, EACCES)
        XCTAssertEqual(access(comic, R_OK | X_OK), 0)
        XCTAssertEqual(SystemCall.status(page).map { $0.st_mode & 0o222 }, 0, "no write bit")
        XCTAssertEqual(SystemCall.status(comic).map { $0.st_mode & 0o222 }, 0, "no write bit")
        XCTAssertEqual(SystemCall.openErrno(page, O_WRONLY), EROFS)

        // lseek on a page: SEEK_END is its size, it is all data and no hole, reads past the end are empty.
        let fd = open(page, O_RDONLY)
        XCTAssertGreaterThanOrEqual(fd, 0)
        defer { close(fd) }
        let seekData: Int32 = 3, seekHole: Int32 = 4 // GNU names Glibc's Swift module leaves out
        XCTAssertEqual(lseek(fd, 0, SEEK_END), off_t(pageBytes.count))
        XCTAssertEqual(lseek(fd, -10, SEEK_END), off_t(pageBytes.count - 10))
        var tail = [UInt8](repeating: 0, count: 64)
        XCTAssertEqual(read(fd, &tail, tail.count), 10)
        XCTAssertEqual(Array(tail[0..<10]), Array(pageBytes.suffix(10)))
        XCTAssertEqual(lseek(fd, 0, seekData), 0)
        XCTAssertEqual(lseek(fd, 100, seekData), 100)
        XCTAssertEqual(lseek(fd, 0, seekHole), off_t(pageBytes.count))
        XCTAssertEqual(SystemCall.errnoOf { Int(lseek(fd, off_t(pageBytes.count), seekData)) }, ENXIO)
        XCTAssertEqual(SystemCall.errnoOf { Int(lseek(fd, -1, SEEK_SET)) }, EINVAL)
        XCTAssertEqual(lseek(fd, off_t(pageBytes.count + 4096), SEEK_SET), off_t(pageBytes.count + 4096))
        XCTAssertEqual(read(fd, &tail, tail.count), 0, "end of file past the end")
        XCTAssertEqual(pread(fd, &tail, 16, 0), 16)
        XCTAssertEqual(Array(tail[0..<16]), Array(pageBytes.prefix(16)))
    }
}
