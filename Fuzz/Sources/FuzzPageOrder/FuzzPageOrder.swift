import InkyCore

/// Page ordering and naming of arbitrary member-name lists: the input is split at NUL bytes
/// into names (any bytes, so invalid UTF-8 too, as libarchive may hand us), each becoming a
/// file entry, and listed the way every archive reader lists. Checked beyond "no crash":
/// the order is a strict total order, the names are safe, and they sort as reading order;
/// and plain numbers built from the same input read in numeric order (`checkPlainNumbers`).
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzPageOrder(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    let names = bytes.split(separator: 0, omittingEmptySubsequences: false).prefix(2_000)
        .map { String(decoding: $0, as: UTF8.self) }
    let entries = names.enumerated().map { index, name in
        ArchiveEntry(index: index, path: name, kind: .file, declaredSize: Int64(index + 1), isEncrypted: false)
    }
    checkOrder(names)
    checkPlainNumbers(bytes)
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

/// A plain numeric sequence reads in numeric order whatever its padding (docs/reading-order.md):
/// from the input, a run start...start+count-1 with each number padded by 0-3 zeros the input
/// chooses, or (first byte odd) any set of numbers written without leading zeros, gaps allowed;
/// in the input's order, as "N.png" or "page_N.jpg". Any set with any padding is not asserted:
/// "03", "0405", "06" is a list of plain numbers and also, by the rule, a spread.
private func checkPlainNumbers(_ bytes: [UInt8]) {
    guard bytes.count >= 4 else { return }
    let contiguous = bytes[0] & 1 == 0
    let prefix = bytes[1] & 1 == 0 ? "" : "page_"
    let ext = bytes[1] & 2 == 0 ? ".png" : ".jpg"
    let start = Int(bytes[2]) * 40 + Int(bytes[3])
    let body = bytes.dropFirst(4).prefix(600)
    var values: [Int] = []
    if contiguous {
        values = Array(start..<(start + body.count))
    } else {
        // Pairs of bytes as numbers, with gaps; no duplicates.
        var seen = Set<Int>()
        for pair in stride(from: body.startIndex, to: body.endIndex - 1, by: 2) {
            let value = Int(body[pair]) << 8 | Int(body[pair + 1])
            if seen.insert(value).inserted { values.append(value) }
        }
    }
    guard !values.isEmpty else { return }
    let names = values.enumerated().map { index, value in
        let zeros = contiguous ? Int(body[body.startIndex + index] >> 6) : 0
        return prefix + String(repeating: "0", count: zeros) + String(value) + ext
    }
    let keys = NaturalOrder.sortKeys(for: names)
    let order = zip(keys, values).sorted { NaturalOrder.compare($0.0, $1.0) == .orderedAscending }.map(\.1)
    precondition(order == values.sorted(), "plain numbers out of numeric order: \(names)")
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
