/// What an inode of the mount stands for. Paths are relative to the library root ("" is the
/// root itself). Page-level nodes carry the comic's generation: when an archive changes on disk
/// its pages get new nodes, so nothing cached for the old file can be mistaken for the new one.
public enum Node: Hashable, Sendable {
    case folder(String)
    case file(String)
    case comic(String)
    /// A symlink in the library: shown as a link, never followed by the daemon (`LinkTarget`).
    case link(String)
    case page(comic: String, generation: Int, index: Int)
    case comicInfo(comic: String, generation: Int)
    case errorText(comic: String, generation: Int)
    /// The virtual folder of comics in progress, and one link in it (to a comic's directory).
    case continueReading
    case continueLink(comic: String)
    /// A folder of the unlocked vault ("" is `Vault/` itself).
    case vaultFolder(String)

    var comicPath: String? {
        switch self {
        case .comic(let path), .page(let path, _, _), .comicInfo(let path, _), .errorText(let path, _): path
        case .folder, .file, .link, .continueReading, .continueLink, .vaultFolder: nil
        }
    }

    var generation: Int? {
        switch self {
        case .page(_, let generation, _), .comicInfo(_, let generation), .errorText(_, let generation): generation
        default: nil
        }
    }
}

public typealias NodeID = UInt64

/// Stable numbers for nodes, for the life of the mount. The root is always 1.
final class NodeTable: @unchecked Sendable {
    private let lock = NSLock()
    private var ids: [Node: NodeID] = [:]
    private var nodes: [NodeID: Node] = [:]
    private var next: NodeID = 2

    init(root: Node) {
        ids[root] = 1
        nodes[1] = root
    }

    func id(for node: Node) -> NodeID {
        lock.withLock {
            if let id = ids[node] { return id }
            let id = next
            next += 1
            ids[node] = id
            nodes[id] = node
            return id
        }
    }

    func node(_ id: NodeID) -> Node? {
        lock.withLock { nodes[id] }
    }

    func ids(where matches: (Node) -> Bool) -> [NodeID] {
        lock.withLock { ids.filter { matches($0.key) }.map(\.value) }
    }
}

import Foundation
