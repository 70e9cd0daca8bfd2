import ArgumentParser
import InkyCore

@main
struct Inkyfs: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inkyfs",
        abstract: "Mount a comic library as folders of page images.",
        discussion: """
            Every comic archive (CBZ/ZIP, CBR/RAR, CB7/7z, CBT/TAR) appears as a folder of its \
            pages, 001.jpg, 002.png, ... in reading order, so any image viewer can page through it.

            Examples:
              inkyfs mount ~/Comics ~/mnt   mount the library; `inkyfs unmount ~/mnt` to stop
              inkyfs scan ~/Comics          list every comic and its page count
              inkyfs pages "Issue 1.cbz"    show one comic's pages in reading order
            """,
        version: InkyfsVersion.text,
        subcommands: [MountCommand.self, UnmountCommand.self, VaultCommand.self, IndexCommand.self, ProgressCommand.self, BookmarkCommand.self,
                      ScanCommand.self, PagesCommand.self, DoctorCommand.self, DuplicatesCommand.self],
        // `inkyfs SOURCE MOUNTPOINT -o OPTIONS` is how mount.fuse3 runs a fuse.inkyfs fstab line.
        defaultSubcommand: MountCommand.self
    )
}
