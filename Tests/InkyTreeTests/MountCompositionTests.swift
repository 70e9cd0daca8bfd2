import InkyCore
import XCTest
@testable import InkyTree

/// The composition routes every request by its node's slot and owns only the root's listing:
/// a view's folder shows while the view says so, and hides a base entry of the same name.
final class MountCompositionTests: XCTestCase {
    func testTheRootListsTheBaseThenTheShownViewsAndHidesWhatTheyShadow() throws {
        let base = FolderTree(children: ["Comics": 10, "Shelf": 11, "notes": 12])
        let shelf = LinkView(name: "Shelf"), hidden = LinkView(name: "Hidden")
        hidden.shown = false
        let mount = MountComposition(sourcePath: "/library", base: base, views: [shelf, hidden])
        let names = try mount.directoryEntries(of: 1).get().map(\.name)
        XCTAssertEqual(names, ["Comics", "notes", "Shelf"], "the base's Shelf is behind the view's")
        let entry = try mount.lookup(parent: 1, name: "Shelf").get()
        XCTAssertEqual(ViewSlot(of: entry.id), ViewSlot(1))
        XCTAssertEqual(mount.parent(of: entry.id), 1)
        XCTAssertEqual(try mount.lookup(parent: 1, name: "Comics").get().id, 10)
        XCTAssertEqual(mount.lookup(parent: 1, name: "Hidden").map(\.id), .failure(.ENOENT), "a hidden view's name is the base's: none")
        let link = try mount.lookup(parent: entry.id, name: "first").get()
        XCTAssertEqual(try mount.readLink(link.id).get(), "../Comics/first")
        XCTAssertEqual(mount.readLink(10), .failure(.EINVAL), "base numbers go to the base")
        // The base counted its Shelf, the view counts its own: one too many is safe (find).
        XCTAssertEqual(try mount.attributes(of: 1).get().linkCount, 2 + 3 + 1, "the root counts the shown view's folder")
    }

    func testAViewThatStopsShowingAnswersNothingAndTellsTheKernel() throws {
        let view = LinkView(name: "Shelf")
        let mount = MountComposition(sourcePath: "/library", base: FolderTree(children: [:]), views: [view])
        let kernel = RecordingKernel()
        mount.kernelCache = kernel
        let root = try mount.lookup(parent: 1, name: "Shelf").get().id
        view.shown = false
        view.context?.shownChanged(appeared: false)
        XCTAssertEqual(kernel.entries, ["1/Shelf"])
        XCTAssertEqual(kernel.nodes, [1])
        XCTAssertEqual(mount.lookup(parent: root, name: "first").map(\.id), .failure(.ENOENT), "a name the kernel held finds nothing")
        XCTAssertEqual(try mount.directoryEntries(of: 1).get().map(\.name), [])
    }

    /// `unlink` reaches the view that holds the name, with its caller; the base tree, a view's
    /// folder at the root, and a view that takes no unlink are read-only.
    func testUnlinkGoesToTheViewThatHoldsTheNameAndIsReadOnlyElsewhere() throws {
        let shelf = LinkView(name: "Shelf", removable: true), other = LinkView(name: "Other")
        let mount = MountComposition(sourcePath: "/library", base: FolderTree(children: ["Comics": 10]), views: [shelf, other])
        let shelfRoot = try mount.lookup(parent: 1, name: "Shelf").get().id
        let otherRoot = try mount.lookup(parent: 1, name: "Other").get().id
        let caller = Caller(pid: 42, uid: 1000)
        XCTAssertEqual(mount.unlink(parent: 1, name: "Comics", caller: caller).map { "removed" }, .failure(.EROFS))
        XCTAssertEqual(mount.unlink(parent: 1, name: "Shelf", caller: caller).map { "removed" }, .failure(.EROFS), "a view's folder stays")
        XCTAssertEqual(mount.unlink(parent: otherRoot, name: "first", caller: caller).map { "removed" }, .failure(.EROFS))
        XCTAssertEqual(mount.unlink(parent: shelfRoot, name: "first", caller: caller).map { "removed" }, .success("removed"))
        XCTAssertEqual(shelf.removed, ["first by 1000"])
        shelf.shown = false
        XCTAssertEqual(mount.unlink(parent: shelfRoot, name: "first", caller: caller).map { "removed" }, .failure(.ENOENT), "a hidden view holds nothing")
        XCTAssertEqual(shelf.removed.count, 1)
    }
}

/// A base tree of one folder (the root, 1) of folders with fixed numbers.
private final class FolderTree: TreeView, @unchecked Sendable {
    let children: [String: NodeID]
    init(children: [String: NodeID]) { self.children = children }
    var name: String { "" }
    var isShown: Bool { true }
    func attach(_ context: ViewContext) {}
    func lookup(parent: NodeID, name: String) -> Result<NodeAttributes, Errno> {
        guard parent == 1, let id = children[name] else { return .failure(.ENOENT) }
        return attributes(of: id)
    }
    func attributes(of id: NodeID) -> Result<NodeAttributes, Errno> {
        .success(NodeAttributes(id: id, kind: .directory, size: 0, permissions: 0o555, modifiedNanoseconds: 0, entryTimeout: 1,
                                attributeTimeout: 1, linkCount: id == 1 ? 2 + children.count : 2))
    }
    func directoryEntries(of id: NodeID) -> Result<[DirectoryEntry], Errno> {
        .success(children.keys.sorted().map { DirectoryEntry(name: $0, id: children[$0]!, kind: .directory) })
    }
}

/// A view of one link, "first", to the base's Comics/first.
private final class LinkView: TreeView, @unchecked Sendable {
    let name: String
    var shown = true
    var context: ViewContext?
    let removable: Bool
    var removed: [String] = []
    init(name: String, removable: Bool = false) {
        self.name = name
        self.removable = removable
    }
    var isShown: Bool { shown }
    func attach(_ context: ViewContext) { self.context = context }
    private var slot: ViewSlot { context!.slot }
    func lookup(parent: NodeID, name: String) -> Result<NodeAttributes, Errno> {
        parent == slot.rootID && name == "first" ? attributes(of: slot.id(2)) : .failure(.ENOENT)
    }
    func attributes(of id: NodeID) -> Result<NodeAttributes, Errno> {
        .success(NodeAttributes(id: id, kind: id == slot.rootID ? .directory : .symlink, size: 0, permissions: 0o555,
                                modifiedNanoseconds: 0, entryTimeout: 0, attributeTimeout: 0))
    }
    func directoryEntries(of id: NodeID) -> Result<[DirectoryEntry], Errno> {
        .success([DirectoryEntry(name: "first", id: slot.id(2), kind: .symlink)])
    }
    func readLink(_ id: NodeID) -> Result<String, Errno> { id == slot.id(2) ? .success("../Comics/first") : .failure(.EINVAL) }
    func unlink(parent: NodeID, name: String, caller: Caller) -> Result<Void, Errno> {
        guard removable else { return .failure(.EROFS) }
        removed.append("\(name) by \(caller.uid)")
        return .success(())
    }
}

private final class RecordingKernel: KernelCacheInvalidating, @unchecked Sendable {
    var entries: [String] = []
    var nodes: [NodeID] = []
    func invalidateEntry(parent: NodeID, name: String) { entries.append("\(parent)/\(name)") }
    func invalidateNode(_ id: NodeID) { nodes.append(id) }
}
