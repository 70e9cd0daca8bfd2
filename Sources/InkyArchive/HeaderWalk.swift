import InkyCore

/// One pass over an archive's headers: the entries, and on the way the bytes of its first
/// ComicInfo.xml and CoMet.xml while libarchive stands on them, so indexing a comic (listing
/// plus metadata) opens the archive once instead of twice.
struct HeaderWalk {
    var entries: [ArchiveEntry] = []
    /// Metadata member bytes by entry index; only whole, in-budget members are kept.
    var captured: [Int: [UInt8]] = [:]
    /// Set when reading a metadata member failed: the handle's state is unknown after that, so
    /// the caller lists again on a fresh handle without capturing (a damaged ComicInfo.xml
    /// must not cost the comic its listing).
    var captureFailed = false

    /// Metadata files are a few KiB; a larger one is read the old way, on demand.
    static let captureLimit: Int64 = 1 << 20

    static func walk(_ handle: LibArchiveHandle, path: String, limits: ComicLimits, capture: Bool) throws(ComicError) -> HeaderWalk {
        var walk = HeaderWalk()
        var failures: [String] = []
        var seen: Set<String> = [] // "comicInfo" / "coMet": the listing keeps the first of each
        while true {
            switch try handle.nextHeader() {
            case .end:
                return walk
            case .unreadable(let why):
                failures.append(why)
                if failures.count > limits.maxHeaderErrors {
                    throw .corrupted(path: path, detail: "\(failures.count) unreadable headers, last: \(why)")
                }
            case .entry(let entry):
                walk.entries.append(entry)
                if walk.entries.count > limits.maxEntries {
                    throw .limitExceeded(path: path, detail: "more than \(limits.maxEntries) entries")
                }
                guard capture, let kind = metadataKind(entry, limits: limits), seen.insert(kind).inserted,
                      let size = entry.declaredSize, size <= min(captureLimit, limits.maxPageBytes), !entry.isEncrypted
                else { continue }
                do throws(ComicError) {
                    walk.captured[entry.index] = try read(handle, entry: entry, size: size, path: path, limits: limits)
                } catch {
                    walk.captureFailed = true
                    return walk
                }
            }
        }
    }

    private static func metadataKind(_ entry: ArchiveEntry, limits: ComicLimits) -> String? {
        // Both metadata files end in ".xml": a page's name is not worth a second `classify`
        // (the listing classifies every member anyway).
        guard mentionsXML(entry.path.utf8) else { return nil }
        return switch PageFilter.classify(entry, limits: limits) {
        case .comicInfo: "comicInfo"
        case .coMet: "coMet"
        default: nil
        }
    }

    /// True when "xml", in any case, occurs in the bytes (no other character lowercases to
    /// these letters, so no metadata file's name escapes it).
    static func mentionsXML(_ bytes: String.UTF8View) -> Bool {
        var previous: (UInt8, UInt8) = (0, 0)
        for byte in bytes {
            if previous == (UInt8(ascii: "x"), UInt8(ascii: "m")) && byte | 0x20 == UInt8(ascii: "l") { return true }
            previous = (previous.1, byte | 0x20)
        }
        return false
    }

    /// The member's bytes under the same budget a page gets (declared size, ratio, per-page limit).
    private static func read(_ handle: LibArchiveHandle, entry: ArchiveEntry, size: Int64,
                             path: String, limits: ComicLimits) throws(ComicError) -> [UInt8] {
        var budget = PageBudget(path: path, entryName: entry.path, declaredSize: size, limits: limits)
        let consumedAtStart = handle.source.bytesRead
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(size))
        let chunkBytes = 64 << 10
        let chunk = UnsafeMutableRawPointer.allocate(byteCount: chunkBytes, alignment: 16)
        defer { chunk.deallocate() }
        while true {
            let got = try handle.readData(into: chunk, count: chunkBytes)
            if got == 0 { break }
            try budget.accept(got, consumed: handle.source.bytesRead - consumedAtStart)
            bytes.append(contentsOf: UnsafeRawBufferPointer(start: chunk, count: got))
        }
        try budget.finish()
        return bytes
    }
}
