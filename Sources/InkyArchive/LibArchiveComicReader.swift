import InkyCore

/// ZIP, RAR5, 7z and TAR (plain or compressed) through libarchive.
///
/// Listing reads headers only. Reading keeps one handle positioned in the stream: the next
/// entry costs nothing extra, ZIP and plain TAR skip by seeking, and a solid stream is
/// reopened only when a caller goes backwards.
final class LibArchiveComicReader: EntryStreamingReader {
    let path: String
    let listing: ComicListing
    var onProgress: (() -> Void)?
    private let format: ArchiveFormat
    let limits: ComicLimits
    private var handle: LibArchiveHandle?
    private var position = StreamPosition()
    private var finishedStats = ReaderStats()
    /// CRC-32 by entry index, for entries libarchive does not check itself (stored RAR5).
    private let checksums: [Int: UInt32]
    /// ComicInfo.xml and CoMet.xml bytes read during listing, by entry index.
    private let captured: [Int: [UInt8]]
    /// A ZIP's comment (ComicBookInfo's JSON lives there); nil for other formats or none.
    let archiveComment: [UInt8]?
    /// Pages leave in chunks this large: the worker forwards a full chunk as one frame without
    /// copying it again, so fewer, larger chunks mean fewer copies and system calls per page.
    private static let chunkBytes = 1 << 20
    /// Allocated when a page is first read, never for a listing: a 1 MiB buffer per comic
    /// listed went back to the kernel (brk) and came again for every comic.
    private var chunkStorage: UnsafeMutableRawPointer?
    private var chunk: UnsafeMutableRawPointer {
        if let chunkStorage { return chunkStorage }
        let made = UnsafeMutableRawPointer.allocate(byteCount: Self.chunkBytes, alignment: 16)
        chunkStorage = made
        return made
    }

    /// Opens the archive's bytes again when the decoder has to restart.
    private let openSource: () throws(ComicError) -> FileSource
    /// A ZIP listed from its central directory: each entry's local header offset and path, by
    /// entry index; nil when libarchive walked the headers.
    private let members: [(offset: Int64, path: String)]?

    convenience init(path: String, format: ArchiveFormat, limits: ComicLimits) throws(ComicError) {
        try self.init(label: path, format: format, limits: limits) { () throws(ComicError) in try FileSource(path: path) }
    }

    /// `listFromDirectory`: a ZIP whose central directory is whole is listed from it alone, and
    /// each member read from its own local header on (`ZipDirectoryListing`): for bytes where
    /// every local header costs a round trip and a decryption (a vault object).
    init(label: String, format: ArchiveFormat, limits: ComicLimits, listFromDirectory: Bool = false,
         openSource: @escaping () throws(ComicError) -> FileSource) throws(ComicError) {
        self.path = label
        self.format = format
        self.limits = limits
        var source = try openSource()
        var damagedHeaders: [(offset: Int64, why: String)] = []
        var shift: Int64 = 0
        let reopen: () throws(ComicError) -> FileSource
        if format == .tar, let start = TarResync.start(in: source, limit: limits.maxPageBytes + 1_024) {
            reopen = { () throws(ComicError) in try openSource().shifted(by: start) }
            source = source.shifted(by: start)
            shift = start
            damagedHeaders.append((0, "its checksum fails; read from the next valid header at byte \(start)"))
        } else {
            reopen = openSource
        }
        self.openSource = reopen
        var solid = [.sevenZip, .gzip, .bzip2, .xz, .zstd, .lzip].contains(format)
        var encryptedNames: Set<String> = []
        var fileChecksums: [RARHeaderScan.FileChecksum] = []
        if format == .rar5 {
            // libarchive 3.6 neither flags RAR5 data encryption nor says whether it is solid.
            let scan = try RARHeaderScan.scan(source)
            if scan.headersEncrypted { throw .encrypted(path: path) }
            solid = scan.isSolid
            encryptedNames = scan.encryptedNames
            fileChecksums = scan.fileChecksums
        }
        let directory = format == .zip ? ZipCentralDirectory(in: source, maxEntries: limits.maxEntries) : nil
        if directory?.hasOverlappingRecords == true {
            throw .corrupted(path: path, detail: "overlapping entries: central-directory records share one member's bytes (an overlap bomb?)")
        }
        let members = listFromDirectory ? directory.flatMap(ZipDirectoryListing.init) : nil
        self.members = members.map { listed in zip(listed.localHeaderOffsets, listed.entries.map(\.path)).map { ($0, $1) } }
        var walk = HeaderWalk()
        var handleDamage: [(offset: Int64, why: String)] = []
        var counted = source  // whose bytes the listing's stats count, as before
        if let members {
            walk.entries = members.entries
        } else {
            if let directory {
                // Listing visits every local header: fetch them together, not one seek at a time.
                source.willNeed(directory.localHeaderOffsets.map { ($0, LibArchiveHandle.CallbackState.firstBlock) })
            }
            var handle = try LibArchiveHandle(source: source, format: format)
            walk = try HeaderWalk.walk(handle, path: path, limits: limits, capture: true)
            if walk.captureFailed {
                handle = try LibArchiveHandle(source: reopen(), format: format)
                walk = try HeaderWalk.walk(handle, path: path, limits: limits, capture: false)
            }
            handleDamage = handle.damagedHeaders
            counted = handle.source
        }
        var entries = walk.entries
        for index in entries.indices where encryptedNames.contains(entries[index].path) {
            entries[index].isEncrypted = true
        }
        // libarchive lists a RAR5's file headers in order; a checksum is only trusted for the
        // entry whose name it was read with.
        var checksums: [Int: UInt32] = [:]
        for (entry, file) in zip(entries, fileChecksums) where entry.path == file.name {
            checksums[entry.index] = file.crc32
        }
        self.checksums = checksums
        // A RAR5 member libarchive does not check: captured bytes count only when they match.
        captured = walk.captured.filter { index, bytes in checksums[index].map { CRC32.checksum(bytes) == $0 } ?? true }
        archiveComment = directory.flatMap { $0.comment.isEmpty ? nil : $0.comment }
        var listing = try ComicListing.build(path: path, format: format, entries: entries, isSolid: solid, limits: limits)
        // Offsets in the file, also after a resync shifted what libarchive reads.
        damagedHeaders += handleDamage.map { ($0.offset + shift, $0.why) }
        for damaged in damagedHeaders.prefix(max(0, ComicListing.maxSkippedKept - listing.skipped.count)) {
            listing.skipped.append(SkippedEntry(path: "(header at byte \(damaged.offset))", reason: .damagedHeader(damaged.why)))
        }
        if let directory {
            // Offsets into the bytes this reader reads: the file itself, or a vault object's
            // plaintext, whose ranges the daemon then decrypts instead of the file's it preads.
            let records = ZipStoredEntries.records(of: directory, for: entries)
            if members != nil {
                // Locating stored members reads their local headers: all asked for at once.
                source.willNeed(records.values.filter { $0.method == 0 }.map { ($0.localHeaderOffset, 30 + $0.name.count) })
            }
            let stored = ZipStoredEntries.locate(in: source, records: records, entries: entries)
            for number in listing.pages.indices { listing.pages[number].storedData = stored[listing.pages[number].entryIndex] }
            // The CRC-32s the directory declares: a CBZ made of the pages (`--as cbz`) needs no
            // pass over them to know them. The decoder checks the bytes against the CRC it reads,
            // so a lying record only fails its page.
            checksums.merge(records.mapValues(\.crc32)) { rar, _ in rar }
        }
        // The archive's own CRC-32s, for a CBZ of the pages without a pass over them.
        for number in listing.pages.indices where listing.pages[number].crc32 == nil {
            listing.pages[number].learnedCRC32 = checksums[listing.pages[number].entryIndex]
        }
        self.listing = listing
        finishedStats.sourceBytesRead = counted.bytesRead
    }

    deinit { chunkStorage?.deallocate() }

    /// Whether the listing came from a ZIP's central directory alone (`ZipDirectoryListing`).
    var isListedFromDirectory: Bool { members != nil }

    func countProduced(_ bytes: Int64) { finishedStats.pageBytesProduced += bytes }

    func readComicInfo() throws(ComicError) -> [UInt8]? { try capturedOrRead(listing.comicInfo) }

    func readCoMet() throws(ComicError) -> [UInt8]? { try capturedOrRead(listing.coMet) }

    /// Bytes kept from the listing pass, else (too large, or damaged then) read on demand.
    private func capturedOrRead(_ entry: ArchiveEntry?) throws(ComicError) -> [UInt8]? {
        if let entry, let bytes = captured[entry.index] { return bytes }
        return try readWhole(entry)
    }

    var stats: ReaderStats {
        var stats = finishedStats
        stats.sourceBytesRead += handle?.source.bytesRead ?? 0
        return stats
    }

    func cost(of page: Page) -> ReadCost {
        members != nil ? .direct : handle == nil ? (page.entryIndex == 0 || !listing.isSolid ? .direct : .forward(skippedEntries: page.entryIndex))
            : position.cost(of: page.entryIndex, isSolid: listing.isSolid)
    }

    func stream(entryIndex: Int, name: String, size: Int64,
                into sink: (UnsafeRawBufferPointer) -> Void) throws(ComicError) {
        if members != nil { return try streamMember(entryIndex: entryIndex, name: name, size: size, into: sink) }
        do throws(ComicError) {
            let handle = try positionedHandle(at: entryIndex)
            try pump(handle, entryIndex: entryIndex, name: name, size: size, into: sink)
        } catch {
            // After a decoder error the handle's state is unknown: start clean next time. An
            // entry that only failed its checksum leaves the stream intact, positioned after it.
            if handle?.entryEndedDamaged != true { dropHandle() }
            throw error
        }
    }

    /// A member of a ZIP listed from its directory: libarchive's streaming reader from the
    /// member's local header on, on a handle of its own (no walk through the headers before
    /// it). The header must name the member the directory does, or nothing is read.
    private func streamMember(entryIndex: Int, name: String, size: Int64,
                              into sink: (UnsafeRawBufferPointer) -> Void) throws(ComicError) {
        guard let members, members.indices.contains(entryIndex) else {
            throw .corrupted(path: path, detail: "entry \(entryIndex) is not in the central directory")
        }
        let member = members[entryIndex]
        let handle = try LibArchiveHandle(source: openSource().shifted(by: member.offset), format: format, zipMember: true)
        defer { finishedStats.sourceBytesRead += handle.source.bytesRead }
        guard case .entry(let local) = try handle.nextHeader(), local.path == member.path else {
            throw .corrupted(path: path, detail: "'\(name)': its local header does not match the central directory")
        }
        try pump(handle, entryIndex: entryIndex, name: name, size: size, into: sink)
    }

    /// The current entry's bytes into `sink` under the page budget, then its CRC-32 checked.
    private func pump(_ handle: LibArchiveHandle, entryIndex: Int, name: String, size: Int64,
                      into sink: (UnsafeRawBufferPointer) -> Void) throws(ComicError) {
        var budget = PageBudget(path: path, entryName: name, declaredSize: size, limits: limits)
        let consumedAtStart = handle.source.bytesRead
        position.pendingEntry = nil
        let expected = checksums[entryIndex]
        var crc: UInt32 = 0
        while true {
            let got = try handle.readData(into: chunk, count: Self.chunkBytes)
            if got == 0 { break }
            try budget.accept(got, consumed: handle.source.bytesRead - consumedAtStart)
            let bytes = UnsafeRawBufferPointer(start: chunk, count: got)
            if expected != nil { crc = CRC32.checksum(bytes, continuing: crc) }
            sink(bytes)
            onProgress?()
        }
        try budget.finish()
        // A failed page is dropped whole by whoever collects it (the daemon drops what a
        // worker sent of a page that then fails), so checking at the end serves no bad byte.
        if let expected, crc != expected { throw .corrupted(path: path, detail: "'\(name)' fails its CRC-32") }
    }

    /// A handle whose current header is `entryIndex`, reopening only to go backwards.
    private func positionedHandle(at entryIndex: Int) throws(ComicError) -> LibArchiveHandle {
        if handle != nil && position.needsRestart(for: entryIndex) {
            dropHandle()
            finishedStats.restarts += 1
        }
        let handle: LibArchiveHandle
        if let open = self.handle {
            handle = open
        } else {
            handle = try LibArchiveHandle(source: openSource(), format: format)
            self.handle = handle
        }
        if position.pendingEntry == entryIndex { return handle }
        var skippedBytes: Int64 = 0
        while true {
            if let pending = position.pendingEntry, pending < entryIndex {
                skippedBytes += try skip(handle)
            }
            switch try handle.nextHeader() {
            case .end:
                throw .corrupted(path: path, detail: "entry \(entryIndex) is missing on a second read (the file changed?)")
            case .unreadable:
                position.pendingEntry = nil
            case .entry:
                position.pendingEntry = handle.lastHeaderIndex
            }
            position.nextEntry = handle.lastHeaderIndex + 1
            if handle.lastHeaderIndex == entryIndex, position.pendingEntry == entryIndex { return handle }
            if handle.lastHeaderIndex >= entryIndex {
                throw .corrupted(path: path, detail: "entry \(entryIndex) became unreadable")
            }
            if skippedBytes > limits.maxComicBytes {
                throw .limitExceeded(path: path, detail: "more than \(ByteCountText.format(limits.maxComicBytes)) decoded to reach one page")
            }
        }
    }

    /// In a solid stream skipping means decoding: do it here, counted, so a bomb among the
    /// skipped entries hits the comic-size limit instead of running unbounded inside libarchive.
    private func skip(_ handle: LibArchiveHandle) throws(ComicError) -> Int64 {
        position.pendingEntry = nil
        guard listing.isSolid else {
            try handle.skipData()
            return 0
        }
        var decoded: Int64 = 0
        while true {
            let got: Int
            do throws(ComicError) {
                got = try handle.readData(into: chunk, count: Self.chunkBytes)
            } catch {
                // A skipped entry that fails only its own checksum costs only itself: a flipped
                // byte in page 3 of a 7z must not fail pages 4 and 5 behind it.
                if handle.entryEndedDamaged { return decoded }
                throw error
            }
            if got == 0 { return decoded }
            decoded += Int64(got)
            onProgress?()
            if decoded > limits.maxComicBytes {
                throw .limitExceeded(path: path, detail: "an entry decodes to more than \(ByteCountText.format(limits.maxComicBytes))")
            }
        }
    }

    private func dropHandle() {
        if let handle { finishedStats.sourceBytesRead += handle.source.bytesRead }
        handle = nil
        position = StreamPosition()
    }
}

extension LibArchiveComicReader {
    /// Streams any entry, page or not, to nowhere: lets tests drive the corpus's lying
    /// non-image entries through the same budget checks pages get.
    func streamForTesting(entryIndex: Int, size: Int64) throws(ComicError) {
        try stream(entryIndex: entryIndex, name: "entry \(entryIndex)", size: size) { _ in }
    }
}
