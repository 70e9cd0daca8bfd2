/// A comic file of the library, by its absolute path: what the index and the reading state are
/// keyed by. The mounted library makes one only for a library comic (`ComicRef.library`), never
/// for a vault object, so the store's API cannot be handed a vault comic: the type says so, no
/// check at each call site has to.
public struct LibraryFile: Hashable, Sendable, CustomStringConvertible {
    public let path: String

    public init(path: String) { self.path = path }

    public var description: String { path }
}
