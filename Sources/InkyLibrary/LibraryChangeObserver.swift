import InkyTree

/// What the library core tells a front end that keeps what it showed (a mount's kernel keeps
/// names, attributes, listings and page bytes): which names and nodes changed, by what they
/// stand for, never by number. Called from the core's own threads (the watcher's, background
/// work), never from inside a request about the node it names: the kernel may hold that
/// node's lock while it waits for the reply.
public protocol LibraryChangeObserver: Sendable {
    /// `names` in folder or comic directory `parent` may stand for something else now, or nothing.
    func namesChanged(_ names: [String], in parent: Node)
    /// `node`'s attributes, its listing or its bytes changed.
    func nodeChanged(_ node: Node)
    /// The vault locked: `shownNames` were the names in `Vault/`, `files` the files of its comics
    /// that were listed. Every node of the vault is gone, and no name of it may lead anywhere
    /// again, not even to a comic of the next unlock.
    func vaultLocked(shownNames: [String], files: [Node])
    /// These library comics are about to be listed in the background, each then handed over
    /// (`comicListed`): a front end that numbers them can do it for all of them in one go.
    func willList(_ comics: [ComicRef])
    /// A library comic was listed in the background, before anyone asked: its directory's entries
    /// under `stamp` (`ListingStamp`), handed over so a reply can be made of them now. `entries`
    /// makes them, numbered by the function it is given (`LibraryFilesystem.directoryEntries`);
    /// not called, it costs nothing.
    func comicListed(_ comic: ComicRef, stamp: ListingStamp,
                     entries: (_ numbered: ([Node]) -> [NodeID]) -> [DirectoryEntry])
}

extension LibraryChangeObserver {
    func nameChanged(_ name: String, in parent: Node) { namesChanged([name], in: parent) }
}
