import XCTest
@testable import InkyWorker

/// Where a root mount's workers may become nobody: only where the kernel decides who reads with
/// capabilities. A library on (or with, beneath it) a FUSE, NFS or SMB mount keeps them root, as
/// a nobody worker would find its root-only comics closed there.
final class PrivilegeDropFilesystemTests: XCTestCase {
    /// Lines as the kernel writes them (proc(5)): the mount point is field 5, the type follows "-".
    private let mountinfo = """
        22 1 259:1 / / rw,relatime shared:1 - ext4 /dev/root rw
        30 22 0:27 / /tmp rw,nosuid shared:5 - tmpfs tmpfs rw
        41 22 0:40 / /srv/comics rw,relatime shared:9 - xfs /dev/sdb1 rw
        42 41 0:41 / /srv/comics/remote\\040share rw,nosuid - fuse.sshfs host:/c rw,user_id=0,group_id=0
        43 22 0:42 / /mnt/nas rw,relatime - nfs4 nas:/export rw
        44 22 0:43 / /mnt/stacked rw - fuse.rclone remote: rw
        45 44 0:44 / /mnt/stacked rw - ext4 /dev/sdc1 rw
        """

    func testLocalFilesystemsLetWorkersDropRootAndOthersDoNot() {
        XCTAssertEqual(PrivilegeDrop.filesystemsNeedingRoot(for: ["/tmp/lib"], mountinfo: mountinfo), [], "tmpfs")
        XCTAssertEqual(PrivilegeDrop.filesystemsNeedingRoot(for: ["/home/me/Comics"], mountinfo: mountinfo), [], "on /: ext4")
        XCTAssertEqual(PrivilegeDrop.filesystemsNeedingRoot(for: ["/srv/comics"], mountinfo: mountinfo), ["fuse.sshfs"],
                       "xfs, but an sshfs mount beneath it (its name unescaped)")
        XCTAssertEqual(PrivilegeDrop.filesystemsNeedingRoot(for: ["/srv/comics/remote share/x"], mountinfo: mountinfo), ["fuse.sshfs"])
        XCTAssertEqual(PrivilegeDrop.filesystemsNeedingRoot(for: ["/srv/comicsx"], mountinfo: mountinfo), [], "a name that merely starts alike")
        XCTAssertEqual(PrivilegeDrop.filesystemsNeedingRoot(for: ["/tmp/lib", "/mnt/nas/vault/objects"], mountinfo: mountinfo), ["nfs4"],
                       "the vault's objects count as the library does")
        XCTAssertEqual(PrivilegeDrop.filesystemsNeedingRoot(for: ["/mnt/stacked/lib"], mountinfo: mountinfo), [],
                       "of two mounts on one point the later one is what is seen")
    }
}
