import Foundation
import InkyCore
import InkyStore
import InkyVault
import InkyWorker

/// The unlocked vault under the mount: `Vault/` mirrors the manifest's display paths, each comic
/// a directory of pages like the library's. Vault comics are keyed apart from library paths so
/// nothing about them reaches the state database (no index rows, no reading state). The vault
/// itself is the session's (`VaultSession`); what is here is the tree's part: names, nodes,
/// and what lock makes the tree forget before the keys are wiped.
extension LibraryFilesystem {
    /// What the library does when the vault opens (`VaultSession.whenUnlocked`, registered at init).
    func vaultUnlocked() {
        // A lookup racing the last lock can have put a vault comic back after lock dropped
        // them all, listed without its key ("not a comic archive"): kept, that failure
        // showed as ERROR.txt until the next remount. Every unlock starts from nothing.
        catalog.dropVaultComics()
    }

    /// What the library does at lock (`VaultSession.whenLocking`, registered at init), after the
    /// session stopped answering and dropped the vault's pages, before the keys are wiped: its
    /// comics' states go, and the kernel forgets every node and name of the vault.
    func vaultLocking(shown entries: [VaultEntry]) {
        // `Vault/` keeps its number across lock and unlock, so after an unlock the kernel can
        // bring its old directory entry back (a reader still holding a page open keeps it
        // alive) with the old names in it, each pointing at a number lock dropped: ENOENT for
        // that comic until its entry timed out. Each name is unhashed at lock instead.
        let shownNames = Array(Self.vaultChildren("", of: entries).keys) + MetadataViewKind.allCases.map(\.folderName)
        let states = catalog.dropVaultComics()
        // Nobody numbered them (no mount): nothing to forget.
        guard let observer = changeObserver else { return }
        // Every file of every vault comic listed, then the folders and comics, whose numbers go
        // with their names (`LibraryChangeObserver.vaultLocked`).
        observer.vaultLocked(shownNames: shownNames, files: states.flatMap { state in
            state.snapshot().map { Self.files(of: state.comic, $0) } ?? []
        })
    }

    /// The name of the folder the unlocked vault shows as under the mount root (`--vault-name`);
    /// nil when it is shown nowhere.
    public var vaultFolderName: String? { options.vaultName }

    /// For a fetch of `comic`'s pages starting now: what discards them on completion. A vault
    /// page fetched across a lock is (`VaultSession.pageCheck`); library comics keep theirs.
    func vaultPageCheck(for comic: ComicRef, path: String) -> @Sendable () -> ComicError? {
        guard comic.isVault else { return { nil } }
        return vault.pageCheck(path: path)
    }

    /// Notes use of a vault node (lookup, listing, open, read), for the idle lock.
    public func touchVault(_ node: Node) {
        guard node.isVault else { return }
        vault.touch()
    }

    /// Where a request reads `state`'s comic from: its library file, or its vault object with
    /// the object's key. A vault comic's fails (EIO) once the vault is locked.
    func source(of state: ComicState) throws(ComicError) -> ComicSource {
        guard case .vault(let name) = state.comic else { return .file(state.realPath) }
        guard let source = vault.source(name) else {
            throw .io(path: state.realPath, errno: EIO, detail: "the vault was locked while the comic was read")
        }
        return source
    }

    /// The children of a folder of the vault (nil when locked), named like the library's.
    func vaultChildren(_ folder: String) -> [String: Node]? {
        vault.entries.map { Self.vaultChildren(folder, of: $0) }
    }

    /// The children of a folder of the vault, named like the library's: a comic loses its
    /// extension unless that collides with a sibling, and a control character in a name added
    /// before they were refused shows as U+FFFD, as in the library.
    static func vaultChildren(_ folder: String, of entries: [VaultEntry]) -> [String: Node] {
        var candidates: [(name: String, display: String, node: Node)] = []
        var folders: Set<String> = []
        for entry in entries {
            let parts = entry.displayPath.split(separator: "/").map(String.init)
            guard let file = parts.last else { continue }
            let parent = parts.dropLast().joined(separator: "/")
            if parent == folder {
                let shown = ComicFiles.printable(file)
                candidates.append((shown, ComicFiles.displayStem(shown) ?? shown, .comic(.vault(entry.name))))
            } else if parent.hasPrefix(folder.isEmpty ? "" : folder + "/") || (folder.isEmpty && !parent.isEmpty) {
                let rest = folder.isEmpty ? parent : String(parent.dropFirst(folder.count + 1))
                if let first = rest.split(separator: "/").first { folders.insert(String(first)) }
            }
        }
        var uses: [String: Int] = [:]
        for name in folders { uses[ComicFiles.printable(name), default: 0] += 1 }
        for candidate in candidates { uses[candidate.display, default: 0] += 1 }
        var children: [String: Node] = [:]
        for name in folders { children[ComicFiles.printable(name)] = .vaultFolder(folder.isEmpty ? name : folder + "/" + name) }
        for candidate in candidates {
            children[uses[candidate.display]! > 1 ? candidate.name : candidate.display] = candidate.node
        }
        return children
    }
}
