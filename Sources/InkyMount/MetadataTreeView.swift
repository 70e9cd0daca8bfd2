import Foundation
import InkyCore
import InkyLibrary
import InkyTree
import Synchronization

/// One metadata view at the mount root (`By Series/`, `By Publisher/`, `Story Arcs/`, `Recently
/// Added/`): folders of relative symlinks to the comics' directories in the library tree, so
/// progress and bookmarks stay one and `find`, `du` and `rsync -a` see every comic once. Its
/// root is asked of the index (`MetadataCatalog`) again whenever the metadata moved, a folder's
/// links when it is used (kept while in use, up to `folderBudget` links); shown only with
/// something in it.
final class MetadataTreeView: TreeView, Sendable {
    let kind: MetadataViewKind
    let name: String
    private let seriesViewName: String
    private let catalog: MetadataCatalog
    private let library: LibraryFilesystem
    /// Where the view is attached: set once, read by every request (never behind `state`,
    /// which a new tree's comparison holds).
    private let attachment = Mutex<(context: ViewContext?, slot: ViewSlot)>((nil, .base))
    private var slot: ViewSlot { attachment.withLock { $0.slot } }
    fileprivate struct State {
        /// The root's tree (By Series/'s and Story Arcs/' folders without their links) and keys.
        var root = MetadataViewRoot()
        /// Folders read with their links, by name; those in it are compared when the metadata
        /// moved, to tell the kernel what changed link by link.
        var folders: WeightedLRU<String, LinkTree.Folder>
        /// Folders read once (the kernel may hold their links) and since dropped from `folders`
        /// for the budget, with their digest then. When the metadata moves, one whose digest moved
        /// is forgotten whole; the others stay in the kernel's cache. (Telling the kernel to forget
        /// every folder dropped made each `ls -lR` of 100,000 comics' views ask for all of it again.)
        var unkept: [String: Int64] = [:]
        /// The kept folders' links by number: `ls -l` reads every link, which the index would answer
        /// one query each (4x the time of a walk of the views at 20,000 comics).
        var keptTargets: [UInt64: LinkTree.Target] = [:]
        var treeStamp: Int64 = -1
        /// The folder listed last, for the READDIRPLUS requests that go on listing it (the kernel
        /// asks for a few dozen entries at a time): each made every link's text of a folder of
        /// 20,000 links again. A comic moving in the library moves the metadata, and the stamp.
        var lastListing: (id: NodeID, stamp: Int64, entries: [DirectoryEntry], texts: [UInt64: String])?
        var listsGeneration = 0
        var shown: Bool?
        var rebuildQueued = false
    }
    private let state: Mutex<State>
    /// Links of the folders kept whole (`State.folders`).
    static let folderBudget = 10_000
    /// Where `Reading Lists/` finds its lists (nil for the other views).
    private let readingLists: ReadingListSource?
    /// The library's: until told where the watcher sees every change (the view tells the kernel
    /// what changed when it makes its tree again), `--tree-timeout` where it cannot.
    private var timeout: Double { library.treeTimeout }

    init(_ kind: MetadataViewKind, catalog: MetadataCatalog, library: LibraryFilesystem,
         seriesViewName: String = MetadataViewKind.series.folderName, readingLists: ReadingListSource? = nil,
         folderBudget: Int = MetadataTreeView.folderBudget) {
        state = Mutex(State(folders: WeightedLRU(budget: folderBudget, weight: { $0.links.count + 1 })))
        self.kind = kind
        self.readingLists = readingLists
        name = kind.folderName
        self.seriesViewName = seriesViewName
        self.catalog = catalog
        self.library = library
    }

    func attach(_ context: ViewContext) {
        attachment.withLock { $0 = (context, context.slot) }
        catalog.onCheck { [weak self] in self?.rebuild() }
        rebuildSoon()  // From the mount's start, so the root's first listing shows the view.
    }

    func waitForFirstContent(until deadline: DispatchTime) { _ = firstTree.wait(timeout: deadline) }

    /// Until the first tree is made the view is not shown, and that tree is made in the
    /// background: at 100,000 comics it takes seconds, which the mount root's first listing
    /// should not wait for. The view then appears (`shownChanged`).
    var isShown: Bool {
        let known = state.withLock { $0.shown }
        if known == nil { rebuildSoon() }
        return known ?? false
    }

    /// A lookup of the view's name waits for its first tree (at most `firstTreeWait`): `ls
    /// By Series/` right after a mount lists the series rather than failing.
    func isShownWhenLookedUp() -> Bool {
        if let known = state.withLock({ $0.shown }) { return known }
        rebuildSoon()
        _ = firstTree.wait(timeout: .now() + Self.firstTreeWait)
        return isShown
    }
    static let firstTreeWait = 5.0
    /// Left once, when the first tree is in place.
    private let firstTree: DispatchGroup = {
        let group = DispatchGroup()
        group.enter()
        return group
    }()

    /// The tree made last: a request never waits for one being made (nor for the index it is
    /// read from). A stale tree is served for the moments its successor takes; that one comes
    /// from the timer's check, or from here at once, and the kernel is told what changed.
    private func current() -> (tree: LinkTree, stamp: Int64) {
        let stamp = catalog.current().stamp
        let (made, madeStamp) = state.withLock { ($0.root.tree, $0.treeStamp) }
        if madeStamp != stamp { rebuildSoon() }
        return (made, max(0, madeStamp))
    }

    /// `rebuild()` in the background, once however many ask before it starts.
    private func rebuildSoon() {
        guard state.withLock({ state -> Bool in
            defer { state.rebuildQueued = true }
            return !state.rebuildQueued
        }) else { return }
        DispatchQueue.global(qos: .utility).async { [weak self] in self?.rebuild() }
    }
    /// One making at a time; taken by no request.
    private let building = Mutex(())

    /// Makes the tree for the catalog's current snapshot if it moved, reading the index with
    /// no lock a request takes (the folders kept are read again beside it), then puts it in
    /// place under `state` in one step; tells the kernel what changed and the mount when the
    /// view appears or goes.
    private func rebuild() {
        building.withLock { _ in rebuildOnce() }
    }

    private func rebuildOnce() {
        state.withLock { $0.rebuildQueued = false }
        let snapshot = catalog.current()
        let lists = readingLists?.current() ?? (lists: [], generation: 0)
        let (madeStamp, madeLists) = state.withLock { ($0.treeStamp, $0.listsGeneration) }
        guard madeStamp != snapshot.stamp || madeLists != lists.generation else { return }
        let kept = state.withLock { $0.folders.values }
        ViewBuildHold.wait()
        let started = ContinuousClock.now
        let made = catalog.root(kind, seriesViewName: seriesViewName, readingLists: lists.lists)
        let refreshed = refresh(kept, in: made)
        let (changes, wasShown, first) = state.withLock { state in
            var changes = state.treeStamp >= 0 ? made.tree.changes(since: state.root.tree) : LinkTreeChanges()
            changes.append(refreshed.changes)
            // A folder read while this tree was made was read for the old one: it goes too.
            let keptNames = Set(kept.map(\.name))
            changes.append(Self.forgetting(state.folders.removeAll { !keptNames.contains($0) }))
            state.folders.removeAll { _ in true }
            state.keptTargets.removeAll()
            // A folder not held whose comics moved goes whole: its name at the view's root (the
            // kernel drops what it holds under it), and its own attributes and listing.
            for (name, digest) in state.unkept where made.digests[name] != digest {
                state.unkept[name] = nil
                guard let old = state.root.tree.folder(named: name) else { continue }
                changes.nodes.append(old.local)
                changes.names.append((1, name))
            }
            var dropped: [LinkTree.Folder] = []
            for folder in refreshed.folders { dropped += state.keep(folder, digests: made.digests) }
            changes.append(Self.forgetting(dropped))
            state.root = made
            state.treeStamp = snapshot.stamp
            state.listsGeneration = lists.generation
            // Not shown before the first tree: appearing then is a change the kernel must hear of.
            let wasShown = state.shown ?? false
            let first = state.shown == nil
            state.shown = !made.tree.isEmpty
            return (changes, wasShown, first)
        }
        if first { firstTree.leave() }
        let shown = !made.tree.isEmpty
        if wasShown != shown {  // On a large library: when the views are ready.
            let took = (ContinuousClock.now - started).components, milliseconds = took.seconds * 1000 + took.attoseconds / 1_000_000_000_000_000
            library.logger(shown ? "\(name)/ shown, made in \(milliseconds) ms" : "\(name)/ hidden: nothing in it")
        }
        tell(changes, shown: wasShown != shown ? shown : nil)
    }

    /// Tells the kernel what to forget (and the mount that the view appeared, `shown` true, or
    /// went, false).
    private func tell(_ forget: LinkTreeChanges, shown: Bool? = nil) {
        let context = attachment.withLock { $0.context }
        guard let context, shown != nil || !forget.isEmpty else { return }
        // Never from inside a request: the kernel may hold the folder's lock for it.
        DispatchQueue.global(qos: .utility).async {
            if let shown { context.shownChanged(appeared: shown) }
            context.namesChanged(forget.names)
            context.nodesChanged(forget.nodes)
        }
    }

    /// The folders read before, read again for the new root (no lock held): what changed in
    /// them, and those still there to keep.
    private func refresh(_ kept: [LinkTree.Folder], in made: MetadataViewRoot) -> (changes: LinkTreeChanges, folders: [LinkTree.Folder]) {
        var before = LinkTree(), after = LinkTree(), now: [LinkTree.Folder] = []
        for old in kept {
            before.addBuilt(old)
            guard let shell = made.tree.folder(named: old.name), let keys = made.keys[old.name],
                  var read = catalog.folder(old.name, keys: keys, seriesViewName: seriesViewName) else { continue }
            read.local = shell.local
            after.addBuilt(read)
            now.append(read)
        }
        var changes = after.changes(since: before)
        changes.nodes.removeAll { $0 == 1 } // the root's own changes are the root tree's
        changes.names.removeAll { $0.parent == 1 }
        return (changes, now)
    }

    /// A folder with its links: read from the index for By Series/ and Story Arcs/ (with no
    /// lock held: a request for another folder of the view does not wait for it).
    private func folder(local: UInt64) -> LinkTree.Folder? {
        let found = state.withLock { state -> (shell: LinkTree.Folder, keys: MetadataFolderKeys?, stamp: Int64, kept: LinkTree.Folder?)? in
            guard let shell = state.root.tree.folder(local: local) else { return nil }
            guard let keys = state.root.keys[shell.name] else { return (shell, nil, state.treeStamp, nil) }
            return (shell, keys, state.treeStamp, state.folders[shell.name])
        }
        guard let found else { return nil }
        if let kept = found.kept { return kept }
        guard let keys = found.keys else { return found.shell }
        guard var read = catalog.folder(found.shell.name, keys: keys, seriesViewName: seriesViewName) else { return found.shell }
        read.local = found.shell.local
        // Kept only if no new tree came meanwhile (the new one reads its own).
        let dropped = state.withLock { $0.treeStamp == found.stamp ? $0.keep(read, digests: $0.root.digests) : [] }
        tell(Self.forgetting(dropped.filter { $0.local != local }))
        return read
    }

    /// What the kernel must forget of folders no longer kept: their listings and names.
    private static func forgetting(_ dropped: [LinkTree.Folder]) -> LinkTreeChanges {
        var forget = LinkTreeChanges()
        for folder in dropped {
            forget.nodes.append(folder.local)
            forget.names += folder.links.map { (folder.local, $0.name) }
        }
        return forget
    }

    /// Where a link leads: from the root's tree, else (a comic in a folder read on demand) its row.
    private func target(local: UInt64, in tree: LinkTree) -> LinkTree.Target? {
        tree.target(local: local) ?? state.withLock { $0.keptTargets[local] } ?? catalog.comicTarget(local: local)
    }

    private func directoryAttributes(_ id: NodeID, stamp: Int64, subfolders: Int) -> NodeAttributes {
        // The mounting user's, as Continue Reading/ is: under allow_other another user would read
        // series, arcs, publishers, reading lists and paths of comics they may not read.
        NodeAttributes(id: id, kind: .directory, size: 0, permissions: 0o500, modifiedNanoseconds: stamp,
                       entryTimeout: timeout, attributeTimeout: timeout, linkCount: 2 + subfolders)
    }

    private func linkAttributes(_ id: NodeID, target: String, stamp: Int64) -> NodeAttributes {
        NodeAttributes(id: id, kind: .symlink, size: Int64(target.utf8.count), permissions: 0o777, modifiedNanoseconds: stamp,
                       entryTimeout: timeout, attributeTimeout: timeout)
    }

    /// The link's text: relative, from where the link is to the comic's directory (the base
    /// tree's names) or to another view's folder. nil for a comic no longer in the library.
    private func text(of target: LinkTree.Target, depth: Int) -> String? {
        let up = String(repeating: "../", count: depth)
        switch target {
        case .comic(let comic): return library.displayPath(of: comic).map { up + $0 }
        case .viewFolder(let path): return up + path
        }
    }

    func lookup(parent: NodeID, name: String) -> Result<NodeAttributes, Errno> {
        let (tree, stamp) = current()
        let local = slot.local(parent)
        if parent == slot.rootID {
            if let folder = tree.folder(named: name) {
                return .success(directoryAttributes(slot.id(folder.local), stamp: stamp, subfolders: 0))
            }
            guard let link = tree.rootLinks.first(where: { $0.name == name }), let text = text(of: link.target, depth: 1) else { return .failure(.ENOENT) }
            return .success(linkAttributes(slot.id(link.local), target: text, stamp: stamp))
        }
        guard let folder = self.folder(local: local) else { return .failure(self.target(local: local, in: tree) == nil ? .ENOENT : .ENOTDIR) }
        if let file = folder.files.first(where: { $0.name == name }), let bytes = tree.file(local: file.local) {
            return .success(fileAttributes(slot.id(file.local), size: bytes.count, stamp: stamp))
        }
        guard let index = folder.byName[name], let text = text(of: folder.links[index].target, depth: 2) else { return .failure(.ENOENT) }
        return .success(linkAttributes(slot.id(folder.links[index].local), target: text, stamp: stamp))
    }

    func attributes(of id: NodeID) -> Result<NodeAttributes, Errno> {
        let (tree, stamp) = current()
        if id == slot.rootID { return .success(directoryAttributes(id, stamp: stamp, subfolders: tree.folders.count)) }
        let local = slot.local(id)
        if tree.folder(local: local) != nil { return .success(directoryAttributes(id, stamp: stamp, subfolders: 0)) }
        if let bytes = tree.file(local: local) { return .success(fileAttributes(id, size: bytes.count, stamp: stamp)) }
        guard let target = self.target(local: local, in: tree), let text = text(of: target, depth: depth(of: local, in: tree)) else {
            return .failure(.ENOENT)
        }
        return .success(linkAttributes(id, target: text, stamp: stamp))
    }

    func directoryEntries(of id: NodeID) -> Result<[DirectoryEntry], Errno> {
        let (tree, stamp) = current()
        let links: [LinkTree.Link], depth: Int
        var files: [DirectoryEntry] = []
        if id == slot.rootID {
            let folders = tree.folders.map { folder in
                DirectoryEntry(name: folder.name, id: slot.id(folder.local), kind: .directory,
                               attributes: directoryAttributes(slot.id(folder.local), stamp: stamp, subfolders: 0))
            }
            guard tree.folders.isEmpty else { return .success(folders) }
            (links, depth) = (tree.rootLinks, 1)
        } else {
            if let kept = state.withLock({ $0.lastListing }), kept.id == id, kept.stamp == stamp { return .success(kept.entries) }
            guard let folder = self.folder(local: slot.local(id)) else { return .failure(.ENOTDIR) }
            (links, depth) = (folder.links, 2)
            files = folder.files.map { file in
                DirectoryEntry(name: file.name, id: slot.id(file.local), kind: .regularFile,
                               attributes: fileAttributes(slot.id(file.local), size: tree.file(local: file.local)?.count ?? 0, stamp: stamp))
            }
        }
        // A comic gone from the library since it was indexed is left out (no dangling link).
        var shown: [UInt64: String] = [:]
        let entries = files + zip(links, texts(of: links, depth: depth)).compactMap { link, text -> DirectoryEntry? in
            guard let text else { return nil }
            shown[link.local] = text
            return DirectoryEntry(name: link.name, id: slot.id(link.local), kind: .symlink,
                                  attributes: linkAttributes(slot.id(link.local), target: text, stamp: stamp))
        }
        // `ls -l` reads every link of the folder it just listed: its texts are kept with the
        // listing (each made afresh looked the comic's library folder up again).
        if id != slot.rootID { state.withLock { $0.lastListing = (id, stamp, entries, shown) } }
        return .success(entries)
    }

    /// `text(of:depth:)` for a whole folder of links: each library folder they lead into is
    /// indexed once, not searched once per link (a series of 10,000 comics in one folder).
    private func texts(of links: [LinkTree.Link], depth: Int) -> [String?] {
        let up = String(repeating: "../", count: depth)
        var shown: [String: [String: String]] = [:]
        return links.map { link in
            guard case .comic(let comic) = link.target else { return text(of: link.target, depth: depth) }
            let folder = LibraryFilesystem.folder(holding: comic)
            if shown[folder] == nil { shown[folder] = library.comicNames(in: folder) }
            return shown[folder]?[comic].map { up + (folder.isEmpty ? $0 : folder + "/" + $0) }
        }
    }

    func parent(of id: NodeID) -> NodeID { id == slot.rootID ? 1 : slot.rootID }

    func readLink(_ id: NodeID) -> Result<String, Errno> {
        let (tree, stamp) = current()
        let local = slot.local(id)
        if let listed = state.withLock({ $0.lastListing }), listed.stamp == stamp, let text = listed.texts[local] { return .success(text) }
        guard let target = self.target(local: local, in: tree), let text = text(of: target, depth: depth(of: local, in: tree)) else {
            return .failure(.EINVAL)
        }
        return .success(text)
    }

    func open(_ id: NodeID) -> Result<OpenedFile, Errno> {
        if current().tree.file(local: slot.local(id)) != nil { return .success(OpenedFile(keepCache: false, descriptor: nil)) }
        return .failure(tree(containsFolder: id) ? .EISDIR : .ELOOP)
    }

    func read(_ id: NodeID, offset: Int64, size: Int, descriptor: Int32?,
              completion: @escaping @Sendable (Result<ArraySlice<UInt8>, Errno>) -> Void) {
        guard let bytes = current().tree.file(local: slot.local(id)) else { return completion(.failure(.EISDIR)) }
        let start = Int(clamping: max(0, min(offset, Int64(bytes.count))))
        completion(.success(bytes[start..<min(bytes.count, start + max(0, size))]))
    }

    private func fileAttributes(_ id: NodeID, size: Int, stamp: Int64) -> NodeAttributes {
        NodeAttributes(id: id, kind: .regularFile, size: Int64(size), permissions: 0o400, modifiedNanoseconds: stamp,
                       entryTimeout: timeout, attributeTimeout: timeout)
    }

    private func tree(containsFolder id: NodeID) -> Bool {
        id == slot.rootID || current().tree.folder(local: slot.local(id)) != nil
    }

    /// Links at the root are one folder down from the mount root, the others two.
    private func depth(of local: UInt64, in tree: LinkTree) -> Int {
        tree.rootLinks.contains { $0.local == local } ? 1 : 2
    }
}

private extension MetadataTreeView.State {
    /// Keeps a folder read; those dropped for the budget are remembered by their digest in
    /// `digests` (the tree's the folder was read for). Returns the dropped ones with no digest,
    /// which the kernel must forget now.
    mutating func keep(_ folder: LinkTree.Folder, digests: [String: Int64]) -> [LinkTree.Folder] {
        let dropped = folders.insert(folder, for: folder.name)
        unkept[folder.name] = nil
        for link in folder.links { keptTargets[link.local] = link.target }
        var forget: [LinkTree.Folder] = []
        for old in dropped {
            for link in old.links { keptTargets[link.local] = nil }
            if let digest = digests[old.name] { unkept[old.name] = digest } else { forget.append(old) }
        }
        return forget
    }
}
