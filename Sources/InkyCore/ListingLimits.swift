/// A worker's listing checked again in the daemon against the limits it was asked with: a
/// worker taken over by a hostile archive can send any listing, and names, sizes and counts
/// flow from it into FUSE replies, the stored-ZIP layout (`UInt16` name lengths, `UInt32`
/// sizes) and allocations. What breaks a limit makes the comic fail as unreadable, never a trap.
extension ComicListing {
    /// nil when the listing is one a sound worker could send; else what is wrong with it.
    public func breach(of limits: ComicLimits, fileSize: Int64) -> String? {
        if pages.count > limits.maxPages { return "\(pages.count) pages, more than \(limits.maxPages)" }
        if skipped.count > limits.maxEntries { return "\(skipped.count) skipped entries, more than \(limits.maxEntries)" }
        for (index, page) in pages.enumerated() {
            let name = page.name.utf8
            guard !name.isEmpty, name.count <= 255, page.name != ".", page.name != "..",
                  !name.contains(UInt8(ascii: "/")), !name.contains(0) else {
                return "page \(index + 1)'s name is not a file name (\(name.count) bytes)"
            }
            guard page.sourcePath.utf8.count <= max(limits.maxNameBytes, 4096) else {
                return "page \(index + 1)'s entry path is \(page.sourcePath.utf8.count) bytes"
            }
            guard page.size >= -1, page.size <= limits.maxPageBytes else { return "page \(index + 1) claims \(page.size) bytes" }
            if let stored = page.storedData {
                guard page.size >= 0, stored.offset >= 0, stored.offset <= fileSize - page.size else {
                    return "page \(index + 1)'s stored bytes at \(stored.offset) lie outside the \(fileSize)-byte file"
                }
            }
        }
        return nil
    }
}
