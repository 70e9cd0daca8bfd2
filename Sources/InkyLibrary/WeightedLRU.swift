import Foundation
import InkyCore

/// Values kept least recently used first out once their weights pass a budget: a library of
/// 100,000 comics keeps in memory only the comics and folders in use, and what is dropped here
/// is read again from the index or the disk (no archive opened) when next needed.
public struct WeightedLRU<Key: Hashable, Value> {
    let budget: Int
    /// A value's weight when inserted; one whose weight grows later is weighed again with
    /// `reweigh` (a comic gets listed), and every value is weighed again before a trim.
    let weight: (Value) -> Int
    /// Entries that are never dropped for the budget.
    let pinned: (Key) -> Bool
    private var entries: [Key: (value: Value, lastUse: UInt64, weight: Int)] = [:]
    private var clock: UInt64 = 0
    /// The entries' weights as last weighed: trimming is looked at only when it passes
    /// `trimAbove`, not by weighing every entry (the catalog's lock is held meanwhile).
    private var total = 0
    private var trimAbove: Int

    /// Empty, keeping values up to `budget` (their weights summed); `pinned` entries are never dropped.
    public init(budget: Int, weight: @escaping (Value) -> Int, pinned: @escaping (Key) -> Bool = { _ in false }) {
        self.budget = budget
        self.weight = weight
        self.pinned = pinned
        trimAbove = budget
    }

    /// `key`'s value, now the one used last; set: `insert`.
    public subscript(key: Key) -> Value? {
        mutating get {
            guard let entry = entries[key] else { return nil }
            clock += 1
            entries[key]!.lastUse = clock
            return entry.value
        }
        set { insert(newValue, for: key) }
    }

    /// Sets the value for `key`; returns the values dropped for the budget, if any.
    @discardableResult
    public mutating func insert(_ value: Value?, for key: Key) -> [Value] {
        clock += 1
        total -= entries[key]?.weight ?? 0
        guard let value else {
            entries[key] = nil
            return []
        }
        let weighed = weight(value)
        entries[key] = (value, clock, weighed)
        total += weighed
        return total > trimAbove ? trim() : []
    }

    /// `key`'s value weighs what it weighs now; returns the values dropped for the budget.
    @discardableResult
    mutating func reweigh(_ key: Key) -> [Value] {
        guard let entry = entries[key] else { return [] }
        let weighed = weight(entry.value)
        entries[key]!.weight = weighed
        total += weighed - entry.weight
        return total > trimAbove ? trim() : []
    }

    /// Every value, leaving their order of use alone.
    public var values: [Value] { entries.values.map(\.value) }

    /// Removes `key`'s entry; returns its value.
    mutating func remove(_ key: Key) -> Value? {
        guard let entry = entries.removeValue(forKey: key) else { return nil }
        total -= entry.weight
        return entry.value
    }

    /// Removes the matching entries; returns their values.
    @discardableResult
    public mutating func removeAll(where shouldRemove: (Key) -> Bool) -> [Value] {
        let removed = entries.filter { shouldRemove($0.key) }
        for (key, entry) in removed {
            entries[key] = nil
            total -= entry.weight
        }
        return removed.values.map(\.value)
    }

    /// Drops the least recently used entries until the rest fits the budget again (to 75%, so
    /// trimming is rare: each trim weighs and sorts every entry, under its owner's lock;
    /// trimming to 90% made it 10% of a 20,000-comic listing's time). The value used last stays,
    /// even alone over the budget: dropped at once, a folder of 20,000 links was read again from
    /// the index for each of the hundreds of READDIRPLUS requests that list it. What pinned
    /// entries keep over the budget is looked at again only once a quarter budget more is added.
    private mutating func trim() -> [Value] {
        total = 0
        for key in entries.keys {
            let weighed = weight(entries[key]!.value)
            entries[key]!.weight = weighed
            total += weighed
        }
        var dropped: [Value] = []
        if total > budget {
            for (key, entry) in entries.sorted(by: { $0.value.lastUse < $1.value.lastUse }) where !pinned(key) && entry.lastUse != clock {
                if total <= budget * 3 / 4 { break }
                total -= entry.weight
                entries[key] = nil
                dropped.append(entry.value)
            }
        }
        trimAbove = max(budget, total + budget / 4)
        return dropped
    }
}

extension WeightedLRU where Key == ComicRef, Value == ComicState {
    /// Comic states under a budget of 100,000 pages (a few hundred bytes of listing each; a
    /// comic weighs one plus its pages). Vault comics stay until lock, which must find every one
    /// of them to make the kernel drop their pages.
    static func comicStates() -> Self { WeightedLRU(budget: 100_000, weight: \.weight, pinned: \.isVault) }
}

extension WeightedLRU where Key == String, Value == FolderIndex {
    /// Folder indexes under a budget of 12 MiB (`FolderIndex.bytes`: about 90 bytes a comic),
    /// which holds every folder of a library of about 130,000 comics. A walk of the library
    /// lists each folder again on a mount that is not `ro` (`FUSEParentRelisting`), and the
    /// views list the series' folders: an index let go is one more reading of its folder and an
    /// `lstat` of each of its comics. When they were kept as strings and dictionaries, 20,000
    /// names (6 MiB) thrashed on every walk of 20,000 comics.
    static func folderIndexes() -> Self { WeightedLRU(budget: 12 << 20, weight: \.bytes) }
}
