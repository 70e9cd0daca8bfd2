import Foundation
import InkyCore

/// The metadata views a mount can show at its root, each a read-only tree of links into the
/// library tree (`--views`).
public enum MetadataViewKind: String, CaseIterable, Sendable {
    case series, publishers, arcs, lists, recent

    /// The folder's name at the mount root.
    public var folderName: String {
        switch self {
        case .series: "By Series"
        case .publishers: "By Publisher"
        case .arcs: "Story Arcs"
        case .lists: "Reading Lists"
        case .recent: "Recently Added"
        }
    }
}

/// One library comic as the views see it: its metadata row and its path in the library, with
/// the names the views give it made once (a snapshot's records serve every view).
struct ComicRecord: Sendable {
    /// The metadata row's id: the number of the comic's links in every view.
    let id: Int64
    /// Relative to the library.
    let comic: String
    let modifiedNanoseconds: Int64
    let metadata: ComicMetadata
    /// What a link to the comic is called after its position: `Batman #12 (2012)`; `label` adds
    /// `comicSuffix` (".cbz" when comics are served as CBZ files: readers that go by the
    /// extension must see the link as the CBZ file it leads to).
    let title: String
    let comicSuffix: String
    var label: String { title + comicSuffix }

    init(id: Int64, comic: String, modifiedNanoseconds: Int64, metadata: ComicMetadata, comicSuffix: String = "") {
        self.id = id
        self.comic = comic
        self.modifiedNanoseconds = modifiedNanoseconds
        self.metadata = metadata
        self.comicSuffix = comicSuffix
        let series = metadata.series.flatMap { SafeName.make($0) }
        let number = metadata.number.flatMap { SafeName.make($0, maxBytes: 40) }.map { " #\($0)" } ?? ""
        title = (series ?? SafeName.make(Self.stem(of: comic)) ?? "Comic \(id)") + number + (metadata.year.map { " (\($0))" } ?? "")
    }

    /// The comic's file name without its extension.
    var fileStem: String { Self.stem(of: comic) }
    private static func stem(of path: String) -> String { ((path as NSString).lastPathComponent as NSString).deletingPathExtension }

    /// (year, month) to order by, undated last.
    var coverDate: (Int, Int) { (metadata.year ?? Int.max, metadata.month ?? 13) }
}

/// A view's tree: folders of links (`By Series/<Series>/<links>`) or links at its root
/// (`Recently Added/`). Numbers are local to the view's slot: kind in the top bits, then the
/// comic's metadata row id or a hash of the folder's name, so they are the same in every mount
/// and nothing is kept per inode.
public struct LinkTree: Sendable {
    /// Where a link leads.
    public enum Target: Sendable, Equatable {
        /// A comic's directory in the library tree, by its path in the library.
        case comic(String)
        /// A folder of another view (`By Publisher/` → `By Series/<Series>`), from the mount root.
        case viewFolder(String)
    }

    /// A link: its name, its number in the view and where it leads.
    public struct Link: Sendable {
        public var name: String
        public var local: UInt64
        public var target: Target
    }

    /// A folder of links: its name, its number in the view, its links (and their index by name).
    public struct Folder: Sendable {
        public var name: String
        public var local: UInt64
        public var links: [Link]
        public var byName: [String: Int]
        /// Plain files beside the links (a reading list's MISSING.txt).
        public var files: [(name: String, local: UInt64)] = []
    }

    static let folderKind: UInt64 = 1, comicKind: UInt64 = 2, folderLinkKind: UInt64 = 3, fileKind: UInt64 = 4
    static let kindShift: UInt64 = 52

    /// The view's folders, in order.
    public private(set) var folders: [Folder] = []
    /// Links at the view's root (`Recently Added/`), in order.
    public private(set) var rootLinks: [Link] = []
    private var folderByName: [String: Int] = [:]
    private var folderByLocal: [UInt64: Int] = [:]
    private var linkByLocal: [UInt64: Target] = [:]
    private var fileByLocal: [UInt64: [UInt8]] = [:]

    /// An empty tree (a view with nothing in it is not shown).
    public init() {}

    /// Whether the view has nothing to show.
    public var isEmpty: Bool { folders.isEmpty && rootLinks.isEmpty }

    /// A folder by its name, by its number; where a link leads; a plain file's bytes (by number).
    public func folder(named name: String) -> Folder? { folderByName[name].map { folders[$0] } }
    public func folder(local: UInt64) -> Folder? { folderByLocal[local].map { folders[$0] } }
    public func target(local: UInt64) -> Target? { linkByLocal[local] }
    public func file(local: UInt64) -> [UInt8]? { fileByLocal[local] }

    static func comicLocal(_ id: Int64) -> UInt64 { comicKind << kindShift | UInt64(id) & (1 << kindShift - 1) }

    /// Adds a folder of links (names made unique by the caller), in the order given.
    mutating func addFolder(_ name: String, links: [(name: String, target: Target, local: UInt64)],
                            files: [(name: String, bytes: [UInt8])] = []) {
        var local = Self.folderKind << Self.kindShift | Self.hash(name)
        while folderByLocal[local] != nil { local += 1 } // a 48-bit collision: the next free number
        var folder = Folder(name: name, local: local, links: [], byName: [:])
        for (index, file) in files.enumerated() {
            let fileLocal = Self.fileKind << Self.kindShift | (local & (1 << 44 - 1)) << 4 | UInt64(index & 15)
            folder.files.append((file.name, fileLocal))
            fileByLocal[fileLocal] = file.bytes
        }
        for link in links where folder.byName[link.name] == nil {
            folder.byName[link.name] = folder.links.count
            folder.links.append(Link(name: link.name, local: link.local, target: link.target))
            linkByLocal[link.local] = link.target
        }
        folderByName[name] = folders.count
        folderByLocal[local] = folders.count
        folders.append(folder)
    }

    /// Adds a folder made elsewhere, with its number (a view's folder read on demand).
    public mutating func addBuilt(_ folder: Folder) {
        for link in folder.links { linkByLocal[link.local] = link.target }
        folderByName[folder.name] = folders.count
        folderByLocal[folder.local] = folders.count
        folders.append(folder)
    }

    mutating func addRootLinks(_ links: [(name: String, target: Target, local: UInt64)]) {
        for link in links {
            rootLinks.append(Link(name: link.name, local: link.local, target: link.target))
            linkByLocal[link.local] = link.target
        }
    }

    static func folderLinkLocal(_ name: String) -> UInt64 { folderLinkKind << kindShift | hash(name) }

    /// FNV-1a of the name, 48 bits.
    static func hash(_ name: String) -> UInt64 {
        var value: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in name.utf8 { value = (value ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return value & (1 << 48 - 1)
    }

    /// `001 Batman #1`: a position padded so that `LC_ALL=C ls` lists the links in this order;
    /// links that would read alike say which file each is (`DistinctTitles`).
    static func numbered(_ records: [ComicRecord]) -> [(name: String, target: Target, local: UInt64)] {
        let width = max(3, String(records.count).count)
        let titles = DistinctTitles.make(records, room: nameMaxBytes - width - 1)
        return records.enumerated().map { index, record in
            let position = String(index + 1)
            let name = String(repeating: "0", count: width - position.count) + position + " " + titles[index] + record.comicSuffix
            return (name, .comic(record.comic), comicLocal(record.id))
        }
    }

    /// NAME_MAX: the bytes a link's name may take.
    static let nameMaxBytes = 255
}

/// What the kernel must forget when a view's tree is made again: listings (nodes, by local
/// number; 1 is the view's root) and names gone from a folder.
public struct LinkTreeChanges: Equatable, Sendable {
    public var nodes: [UInt64] = []
    public var names: [(parent: UInt64, name: String)] = []

    /// Nothing to forget.
    public init() {}

    /// Whether there is nothing to tell the kernel.
    public var isEmpty: Bool { nodes.isEmpty && names.isEmpty }

    /// Adds `other`'s changes (a node told once).
    public mutating func append(_ other: LinkTreeChanges) {
        nodes += other.nodes.filter { !nodes.contains($0) }
        names += other.names
    }

    public static func == (lhs: LinkTreeChanges, rhs: LinkTreeChanges) -> Bool {
        lhs.nodes == rhs.nodes && lhs.names.map(\.parent) == rhs.names.map(\.parent) && lhs.names.map(\.name) == rhs.names.map(\.name)
    }
}

extension LinkTree {
    /// What the kernel must forget of `old` now that this tree replaces it.
    public func changes(since old: LinkTree) -> LinkTreeChanges {
        var changes = LinkTreeChanges()
        func compare(_ before: [Link], _ after: [Link], in parent: UInt64) {
            guard before.map(\.name) != after.map(\.name) || before.map(\.local) != after.map(\.local) else { return }
            changes.nodes.append(parent)
            let kept = Set(after.map(\.name))
            for link in before where !kept.contains(link.name) { changes.names.append((parent, link.name)) }
        }
        compare(old.rootLinks, rootLinks, in: 1)
        if old.folders.map(\.name) != folders.map(\.name), !changes.nodes.contains(1) { changes.nodes.append(1) }
        for folder in old.folders {
            guard let now = self.folder(named: folder.name) else {
                changes.names.append((1, folder.name))
                changes.nodes.append(folder.local)
                continue
            }
            compare(folder.links, now.links, in: folder.local)
            if folder.files.map(\.name) != now.files.map(\.name) || folder.files.map({ old.file(local: $0.local) }) != now.files.map({ file(local: $0.local) }),
               !changes.nodes.contains(folder.local) {
                changes.nodes.append(folder.local)
            }
        }
        return changes
    }
}
