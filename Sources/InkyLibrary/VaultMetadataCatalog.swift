import Foundation
import InkyCore
import InkyVault
import Synchronization

/// The unlocked vault's comics as its own views see them (`Vault/By Series/`...): their tags,
/// read by the workers that list them (a vault object is listed with its key, as for reading),
/// and the views' trees made from them. All of it lives in this process's memory only: nothing
/// is stored in the state database or logged, and lock drops it with the vault's names.
public final class VaultMetadataCatalog: Sendable {
    /// The views shown, in order (never `Reading Lists/`: the vault holds no lists).
    public let kinds: [MetadataViewKind]
    private unowned let library: LibraryFilesystem
    private struct Made {
        /// The trees by view, made from the vault entries in `madeFrom`.
        var trees: [MetadataViewKind: LinkTree] = [:]
        var madeFrom: Set<String>?
        /// When the trees were made (ns since 1970): their folders' mtime.
        var stamp: Int64 = 0
        var making = false
        /// Moves at every lock: trees made from a vault since locked are thrown away.
        var epoch = 0
    }
    private let made = Mutex(Made())
    /// Called (off any request) when new trees replaced the old: the mount is told.
    public var changed: (@Sendable () -> Void)? {
        get { _changed.withLock { $0 } }
        set { _changed.withLock { $0 = newValue } }
    }
    private let _changed = Mutex<(@Sendable () -> Void)?>(nil)

    init(kinds: [MetadataViewKind], library: LibraryFilesystem) {
        // Reading lists come from `.cbl` files in the library, which the vault does not hold.
        self.kinds = kinds.filter { $0 != .lists }
        self.library = library
    }

    /// The current trees; when the vault's comics are not those they were made from, new ones
    /// are made in the background (listing a vault comic takes a worker's round trip).
    public func current() -> (trees: [MetadataViewKind: LinkTree], stamp: Int64) {
        guard let entries = library.vault.entries else {
            return ([:], 0)
        }
        let names = Set(entries.map(\.name))
        let start = made.withLock { made -> Int? in
            guard made.madeFrom != names, !made.making else { return nil }
            made.making = true
            return made.epoch
        }
        if let start { DispatchQueue.global(qos: .utility).async { [self] in make(entries, epoch: start) } }
        return made.withLock { ($0.trees, $0.stamp) }
    }

    /// Forgets everything (at lock, before the keys are wiped).
    func drop() {
        made.withLock { made in
            made.trees = [:]
            made.madeFrom = nil
            made.epoch += 1
            made.making = false
        }
    }

    private func make(_ entries: [VaultEntry], epoch started: Int) {
        let records = self.records(entries)
        let trees = Dictionary(uniqueKeysWithValues: kinds.map { kind in
            (kind, LinkTreeBuilder.build(kind, from: records, seriesViewName: MetadataViewKind.series.folderName))
        })
        let kept = made.withLock { made -> Bool in
            guard made.epoch == started else { return false }
            made.trees = trees
            made.madeFrom = Set(entries.map(\.name))
            made.stamp = Int64(Date().timeIntervalSince1970 * 1e9)
            made.making = false
            return true
        }
        if kept { changed?() }
    }

    /// One record per vault comic that lists: its tags, else what its own name says (the
    /// object's name is random hex); `comic` is its path under `Vault/` as the mount shows it.
    private func records(_ entries: [VaultEntry]) -> [ComicRecord] {
        var shown: [String: [ComicRef: String]] = [:]
        var records: [ComicRecord] = []
        for entry in entries {
            let comic = ComicRef.vault(entry.name)
            let folder = FolderIndex.folder(holding: entry.displayPath)
            if shown[folder] == nil {
                var names: [ComicRef: String] = [:]
                for (name, node) in library.vaultChildren(folder) ?? [:] { if case .comic(let ref) = node { names[ref] = name } }
                shown[folder] = names
            }
            guard let name = shown[folder]?[comic], case .success(let (_, snapshot)) = library.currentComic(comic),
                  case .success(let listing) = snapshot.listing, !listing.pages.isEmpty else { continue }
            let fromName = FileNameMetadata.parse(FolderIndex.name(of: entry.displayPath),
                                                  folder: folder.isEmpty ? nil : FolderIndex.name(of: folder))
            let metadata = listing.metadata?.filling(from: fromName) ?? fromName
            // Numbered by the object's random name: the same links while the comic stays.
            records.append(ComicRecord(id: Int64(LinkTree.hash(entry.name) >> 8), comic: folder.isEmpty ? name : folder + "/" + name,
                                       modifiedNanoseconds: Int64(entry.dateAdded.timeIntervalSince1970 * 1e9), metadata: metadata))
        }
        return records
    }
}
