import InkyCore

/// Page ordering and naming of arbitrary member-name lists: the input is split at NUL bytes
/// into names (any bytes, so invalid UTF-8 too, as libarchive may hand us), each becoming a
/// file entry, and listed the way every archive reader lists. Checked beyond "no crash":
/// the order is a strict total order, the names are safe, and they sort as reading order.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzPageOrder(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    let names = bytes.split(separator: 0, omittingEmptySubsequences: false).prefix(2_000)
        .map { String(decoding: $0, as: UTF8.self) }
    let entries = names.enumerated().map { index, name in
        ArchiveEntry(index: index, path: name, kind: .file, declaredSize: Int64(index + 1), isEncrypted: false)
    }
    checkOrder(names)
    let listing: ComicListing
    do {
        listing = try ComicListing.build(path: "fuzz", format: .zip, entries: entries, isSolid: false, limits: .default)
    } catch {
        return 0
    }
    checkListing(listing, entryCount: entries.count)
    return 0
}

/// The comparison must be a strict weak order or `sorted` can misbehave: irreflexive,
/// antisymmetric, and transitive over consecutive triples of the sorted list.
private func checkOrder(_ names: [String]) {
    let sample = Array(names.prefix(64))
    let keys = zip(sample, NaturalOrder.sortKeys(for: sample)).map { Named(name: $0, key: $1) }
    for key in keys {
        precondition(NaturalOrder.compare(key.key, key.key) == .orderedSame, "compare(a, a) != same")
    }
    for (a, b) in zip(keys, keys.dropFirst()) {
        let forward = NaturalOrder.compare(a.key, b.key), backward = NaturalOrder.compare(b.key, a.key)
        precondition(forward.rawValue == -backward.rawValue, "compare is not antisymmetric")
    }
    let sorted = keys.sorted { NaturalOrder.compare($0.key, $1.key) == .orderedAscending }
    for index in sorted.indices.dropLast(2) {
        let (a, b, c) = (sorted[index], sorted[index + 1], sorted[index + 2])
        precondition(NaturalOrder.compare(a.key, b.key) != .orderedDescending, "sorted output out of order")
        if NaturalOrder.compare(a.key, b.key) == .orderedAscending, NaturalOrder.compare(b.key, c.key) == .orderedAscending {
            precondition(NaturalOrder.compare(a.key, c.key) == .orderedAscending,
                         "compare is not transitive: \(a.name) < \(b.name) < \(c.name)")
        }
    }
}

private struct Named {
    let name: String
    let key: NaturalOrder.SortKey
}

private func checkListing(_ listing: ComicListing, entryCount: Int) {
    precondition(listing.pages.count + listing.skipped.count + (listing.comicInfo == nil ? 0 : 1) <= entryCount)
    var seen = Set<String>()
    for (number, page) in listing.pages.enumerated() {
        precondition(page.number == number, "page numbers are not 0..<count")
        precondition(seen.insert(page.name).inserted, "two pages share the name \(page.name)")
        precondition(!page.name.isEmpty && page.name != "." && page.name != "..", "unusable page name")
        precondition(!page.name.contains("/"), "page name with '/': \(page.name)")
        precondition(!page.name.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F },
                     "page name with a control character")
        precondition(page.name.utf8.count <= 255, "page name longer than NAME_MAX")
    }
    // Names are zero-padded so a plain byte-wise sort in any viewer is the reading order.
    let byteOrder = listing.pages.map(\.name).sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
    precondition(byteOrder == listing.pages.map(\.name), "byte order of page names is not reading order")
}
