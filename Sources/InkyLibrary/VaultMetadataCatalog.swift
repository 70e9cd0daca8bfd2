import Foundation
import InkyCore
import InkyVault

/// The unlocked vault's comics as its own views see them (`Vault/By Series/`...): their tags,
/// read by the workers that list them (a vault object is listed with its key, as for reading),
/// and the views' trees made from them. All of it lives in this process's memory only: nothing
/// is stored in the state database or logged, and lock drops it with the vault's names.
final class VaultMetadataCatalog: @unchecked Sendable {
    let kinds: [MetadataViewKind]
    private unowned let library: LibraryFilesystem
    private let lock = NSLock()
    /// The trees by view, made from the vault entries in `madeFrom`.
    private var trees: [MetadataViewKind: LinkTree] = [:]
    private var madeFrom: Set<String>?
    /// When the trees were made (ns since 1970): their folders' mtime.
    private(set) var stamp: Int64 = 0
    private var making = false
    /// Moves at every lock: trees made from a vault since locked are thrown away.
    private var epoch = 0
    /// Called (off any request) when new trees replaced the old: the mount is told.
    var changed: (@Sendable () -> Void)?

    init(kinds: [MetadataViewKind], library: LibraryFilesystem) {
        // Reading lists come from `.cbl` files in the library, which the vault does not hold.
        self.kinds = kinds.filter { $0 != .lists }
        self.library = library
    }

    /// The current trees; when the vault's comics are not those they were made from, new ones
    /// are made in the background (listing a vault comic takes a worker's round trip).
    func current() -> (trees: [MetadataViewKind: LinkTree], stamp: Int64) {
        guard let vault = library.lock.withLock({ library.unlockedVault }), let entries = try? vault.entries else {
            return ([:], 0)
        }
        let names = Set(entries.map(\.name))
        let start = lock.withLock { () -> Int? in
            guard madeFrom != names, !making else { return nil }
            making = true
            return epoch
        }
        if let start { DispatchQueue.global(qos: .utility).async { [self] in make(entries, epoch: start) } }
        return lock.withLock { (trees, stamp) }
    }

    /// Forgets everything (at lock, before the keys are wiped).
    func drop() {
        lock.withLock {
            trees = [:]
            madeFrom = nil
            epoch += 1
            making = false
        }
    }

    private func make(_ entries: [VaultEntry], epoch started: Int) {
        let records = self.records(entries)
        let made = Dictionary(uniqueKeysWithValues: kinds.map { kind in
            (kind, LinkTreeBuilder.build(kind, from: records, seriesViewName: MetadataViewKind.series.folderName))
        })
        let kept = lock.withLock { () -> Bool in
            guard epoch == started else { return false }
            trees = made
            madeFrom = Set(entries.map(\.name))
            stamp = Int64(Date().timeIntervalSince1970 * 1e9)
            making = false
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
            let folder = (entry.displayPath as NSString).deletingLastPathComponent
            if shown[folder] == nil {
                var names: [ComicRef: String] = [:]
                for (name, node) in library.vaultChildren(folder) ?? [:] { if case .comic(let ref) = node { names[ref] = name } }
                shown[folder] = names
            }
            guard let name = shown[folder]?[comic], case .success(let (_, snapshot)) = library.currentComic(comic),
                  case .success(let listing) = snapshot.listing, !listing.pages.isEmpty else { continue }
            let fromName = FileNameMetadata.parse((entry.displayPath as NSString).lastPathComponent)
            let metadata = listing.metadata?.filling(from: fromName) ?? fromName
            // Numbered by the object's random name: the same links while the comic stays.
            records.append(ComicRecord(id: Int64(LinkTree.hash(entry.name) >> 8), comic: folder.isEmpty ? name : folder + "/" + name,
                                       modifiedNanoseconds: Int64(entry.dateAdded.timeIntervalSince1970 * 1e9), metadata: metadata))
        }
        return records
    }
}
