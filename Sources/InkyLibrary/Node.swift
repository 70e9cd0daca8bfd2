import Foundation
import InkyCore
import InkyTree

/// Which comic: a file of the library, or an object of the unlocked vault. Typed, so nothing
/// keyed by library paths (the index, reading state, logs of paths) can be handed a vault comic.
public enum ComicRef: Hashable, Sendable {
    /// A comic file, by its path relative to the library root ("" when the library is one comic).
    case library(String)
    /// A vault object, by its file name in `objects/`: random hex, never the comic's name.
    case vault(String)

    var isVault: Bool { if case .vault = self { true } else { false } }

    /// The library-relative path, nil for a vault object.
    var libraryPath: String? { if case .library(let path) = self { path } else { nil } }
}

/// A node of the library core's tree and the vault's, by what it stands for: the core's requests
/// take and give these, never numbers (a mount numbers them: InkyMount's `NodeTable`; the views
/// that number their own nodes, like `Continue Reading/`, are not here). Paths are relative to the library root ("" is the
/// root itself). Page-level nodes carry the comic's generation: when an archive changes on disk
/// its pages get new numbers, so nothing cached for the old file can be mistaken for the new one.
public enum Node: Hashable, Sendable {
    case folder(String)
    case file(String)
    case comic(ComicRef)
    /// A symlink in the library: shown as a link, never followed by the daemon (`LibraryLinks`).
    case link(String)
    case page(comic: ComicRef, generation: Int, index: Int)
    case comicInfo(comic: ComicRef, generation: Int)
    case errorText(comic: ComicRef, generation: Int)
    /// A comic served whole as one synthesized CBZ file (`--as cbz`): a library comic only.
    case comicFile(comic: ComicRef, generation: Int)
    /// A series folder's `folder.jpg`: the cover of its first comic (`LibraryCovers`).
    case folderCover(String)
    /// A series folder's `.directory`, for KDE's folder picture.
    case folderDesktop(String)
    /// A folder of the unlocked vault's `folder.jpg` and `.directory`, by its display path:
    /// covers kept in memory only (`VaultCovers`).
    case vaultFolderCover(String)
    case vaultFolderDesktop(String)
    /// A comic directory's `.directory`: its icon is the first page.
    case comicDesktop(comic: ComicRef, generation: Int)
    /// A folder of the unlocked vault ("" is `Vault/` itself), by its display path.
    case vaultFolder(String)

    var comic: ComicRef? {
        switch self {
        case .comic(let comic), .page(let comic, _, _), .comicInfo(let comic, _), .errorText(let comic, _), .comicFile(let comic, _),
             .comicDesktop(let comic, _): comic
        case .folder, .file, .link, .vaultFolder, .folderCover, .folderDesktop, .vaultFolderCover, .vaultFolderDesktop: nil
        }
    }

    /// The library path whose number this node's inode number carries (`NodeTable`).
    public var libraryPathNumbered: String? {
        switch self {
        case .folder(let path), .file(let path), .link(let path), .folderCover(let path), .folderDesktop(let path): path
        default: if case .library(let path)? = comic { path } else { nil }
        }
    }

    var generation: Int? {
        switch self {
        case .page(_, let generation, _), .comicInfo(_, let generation), .errorText(_, let generation), .comicFile(_, let generation),
             .comicDesktop(_, let generation): generation
        default: nil
        }
    }

    /// A node of `Vault/`: dropped, with its number, at lock.
    public var isVault: Bool {
        switch self {
        case .vaultFolder, .vaultFolderCover, .vaultFolderDesktop: return true
        default: break
        }
        return comic?.isVault ?? false
    }
}
