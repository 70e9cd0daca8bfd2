import Foundation
import InkyCore
import InkyLibrary
import InkyTree
import Synchronization

/// `Continue Reading/`: one link per comic in progress, most recent first, to the comic's
/// directory in the library tree. A link's number is its comic's path number (the library's,
/// kept in the state database), so the view keeps nothing per inode. The folder is the mounting
/// user's alone (0700): its link names tell what they read. Its write bit is there for the one
/// write the mount accepts, `rm` of a link, which forgets that comic's reading state: the kernel
/// (`default_permissions`) lets only the mounting user write in it, and root, whom `unlink` refuses.
final class ContinueReadingView: TreeView, Sendable {
    let name: String
    private let library: LibraryFilesystem
    /// The mount's numbers of library paths, which the links' numbers are made of.
    private let numbers: any NumberedLibraryTree
    private let attached = Mutex(ViewSlot.base)
    private var slot: ViewSlot { attached.withLock { $0 } }

    init(name: String, library: LibraryFilesystem, numbers: any NumberedLibraryTree) {
        self.name = name
        self.library = library
        self.numbers = numbers
    }

    var isShown: Bool { true }

    func attach(_ context: ViewContext) { attached.withLock { $0 = context.slot } }

    private func id(of comic: String) -> NodeID { slot.id(UInt64(numbers.pathNumber(comic)) + 1) }

    private func comic(of id: NodeID) -> String? {
        let local = slot.local(id)
        guard local > 1, local - 1 <= UInt64(UInt32.max) else { return nil }
        return numbers.libraryPath(UInt32(local - 1))
    }

    func lookup(parent: NodeID, name: String) -> Result<NodeAttributes, Errno> {
        guard parent == slot.rootID else { return .failure(.ENOTDIR) }
        guard let comic = library.continueReadingLinks().first(where: { $0.name == name })?.comic else { return .failure(.ENOENT) }
        return attributes(of: id(of: comic))
    }

    func attributes(of id: NodeID) -> Result<NodeAttributes, Errno> {
        let now = Int64(Date().timeIntervalSince1970 * 1e9)
        if id == slot.rootID {
            return .success(NodeAttributes(id: id, kind: .directory, size: 0, permissions: 0o700, modifiedNanoseconds: now,
                                           entryTimeout: 0, attributeTimeout: 0, linkCount: 2))
        }
        guard let comic = comic(of: id), let target = library.linkTarget(comic) else { return .failure(.ENOENT) }
        return .success(NodeAttributes(id: id, kind: .symlink, size: Int64(target.utf8.count), permissions: 0o777,
                                       modifiedNanoseconds: now, entryTimeout: 0, attributeTimeout: 0))
    }

    func directoryEntries(of id: NodeID) -> Result<[DirectoryEntry], Errno> {
        guard id == slot.rootID else { return .failure(.ENOTDIR) }
        return .success(library.continueReadingLinks().map { link in
            DirectoryEntry(name: link.name, id: self.id(of: link.comic), kind: .symlink)
        })
    }

    func readLink(_ id: NodeID) -> Result<String, Errno> {
        guard let comic = comic(of: id), let target = library.linkTarget(comic) else { return .failure(.EINVAL) }
        return .success(target)
    }

    func open(_ id: NodeID) -> Result<OpenedFile, Errno> { .failure(id == slot.rootID ? .EISDIR : .ELOOP) }

    /// `rm` of a link forgets its comic, as `inkyfs progress forget` does. The reading state is
    /// the mounting user's: root, whom the folder's mode does not stop, is refused as any other
    /// user is. The listing is made anew at each request, so the link is gone from the next one.
    func unlink(parent: NodeID, name: String, caller: Caller) -> Result<Void, Errno> {
        guard parent == slot.rootID else { return .failure(.ENOTDIR) }
        guard caller.uid == getuid() else { return .failure(.EACCES) }
        guard let comic = library.continueReadingLinks().first(where: { $0.name == name })?.comic else { return .failure(.ENOENT) }
        return library.forgetReading(comic)
    }
}
