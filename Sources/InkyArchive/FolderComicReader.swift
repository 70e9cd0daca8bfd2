import Foundation
import InkyCore

/// A directory of loose images read as a comic: its image files (not recursive) are the pages.
/// Opened from a descriptor of the folder, each page is opened relative to it without following
/// links: a page swapped for a link to `/etc/shadow` is refused. A worker gets the folder as the
/// daemon listed it and a descriptor per page it reads (`init(members:)`), and opens nothing.
final class FolderComicReader: ComicReader {
    let path: String
    let listing: ComicListing
    var onProgress: (() -> Void)?
    private let limits: ComicLimits
    private var currentStats = ReaderStats()
    /// The folder's descriptor when opened from one (owned), else -1 (pages opened by path).
    private let folder: Int32
    /// A folder's files passed in one by one (a worker opens nothing by name), by name: owned.
    private var passed: [String: Int32]?

    /// The folder as the daemon listed it (in name order), with the descriptors of the pages it
    /// passed: a page without one is refused, never opened here. Takes ownership of them all.
    init(members: [FolderMember], label: String, limits: ComicLimits) throws(ComicError) {
        path = label
        self.limits = limits
        folder = -1
        let entries = members.enumerated().map { index, member in
            ArchiveEntry(index: index, path: member.name, kind: member.kind, declaredSize: member.size)
        }
        do throws(ComicError) {
            listing = try ComicListing.build(path: label, format: .folder, entries: entries, isSolid: false, limits: limits)
        } catch {
            members.forEach { if $0.descriptor >= 0 { close($0.descriptor) } }
            throw error
        }
        passed = Dictionary(members.filter { $0.descriptor >= 0 }.map { ($0.name, $0.descriptor) }, uniquingKeysWith: { first, second in
            close(second)
            return first
        })
    }

    init(path: String, limits: ComicLimits) throws(ComicError) {
        self.path = path
        self.limits = limits
        folder = -1
        let entries = try Self.entries(in: path, limits: limits)
        listing = try ComicListing.build(path: path, format: .folder, entries: entries, isSolid: false, limits: limits)
    }

    /// Takes ownership of `descriptor`, a folder the caller opened; `label` names it in messages.
    init(folder descriptor: Int32, label: String, limits: ComicLimits) throws(ComicError) {
        path = label
        self.limits = limits
        folder = descriptor
        let entries: [ArchiveEntry]
        do throws(ComicError) {
            entries = try LibraryRoot.folderComicEntries(of: descriptor, label: label).enumerated().map { index, item in
                ArchiveEntry(index: index, path: item.name, kind: item.kind, declaredSize: item.size)
            }
        } catch {
            close(descriptor)
            throw error
        }
        listing = try ComicListing.build(path: label, format: .folder, entries: entries, isSolid: false, limits: limits)
    }

    deinit {
        if folder >= 0 { close(folder) }
        passed?.values.forEach { close($0) }
    }

    var stats: ReaderStats { currentStats }

    func cost(of page: Page) -> ReadCost { .direct }

    func read(_ page: Page, into sink: (UnsafeRawBufferPointer) -> Void) throws(ComicError) {
        guard passed != nil else {
            let source = try pageSource(page.sourcePath)
            return try copy(page, into: sink) { buffer, count, _ throws(ComicError) in try source.read(into: buffer, count: count) }
        }
        // The descriptor passed for the page, read from its start (`pread`: read again, it reads the same).
        let name = path + "/" + page.sourcePath
        guard let descriptor = passed?[page.sourcePath] else {
            throw .io(path: name, errno: EACCES, detail: "not a regular file the daemon could open")
        }
        try copy(page, into: sink) { buffer, count, offset throws(ComicError) in
            let got = Syscall.retrying { pread(descriptor, buffer, count, off_t(offset)) }
            if got < 0 { throw FileSource.ioError(path: name, errno: errno, action: "cannot read") }
            return got
        }
    }

    func readComicInfo() throws(ComicError) -> [UInt8]? { nil }

    /// A page's bytes in 64 KiB pieces within its budget, whether its file was opened here or
    /// passed: `readAt(buffer, count, offset)` gives the next piece, 0 at the end.
    private func copy(_ page: Page, into sink: (UnsafeRawBufferPointer) -> Void,
                      readAt: (UnsafeMutableRawPointer, Int, Int64) throws(ComicError) -> Int) throws(ComicError) {
        var budget = PageBudget(path: path, entryName: page.sourcePath, declaredSize: page.size, limits: limits)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 1 << 16, alignment: 16)
        defer { buffer.deallocate() }
        var offset: Int64 = 0
        while true {
            let got = try readAt(buffer, 1 << 16, offset)
            if got == 0 { break }
            offset += Int64(got)
            try budget.accept(got, consumed: nil)
            sink(UnsafeRawBufferPointer(start: buffer, count: got))
        }
        try budget.finish()
        currentStats.sourceBytesRead += offset
        currentStats.pageBytesProduced += page.size
    }

    /// True when `path` is a directory holding at least one image and nothing but images
    /// (hidden files aside): the rule for "a folder is a comic".
    static func isImageFolder(_ path: String) -> Bool { ComicFileNames.isImageFolder(path) }

    /// A page's file: beneath the folder's descriptor without following a link, or by path.
    private func pageSource(_ name: String) throws(ComicError) -> FileSource {
        guard folder >= 0 else { return try FileSource(path: path + "/" + name) }
        guard !name.contains("/") else { throw .io(path: path, errno: EACCES, detail: "\(name): not in the folder") }
        let opened = openat(folder, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY)
        guard opened >= 0 else { throw FileSource.ioError(path: path + "/" + name, errno: errno, action: "cannot open") }
        var info = stat()
        guard fstat(opened, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            close(opened)
            throw .io(path: path + "/" + name, errno: EACCES, detail: "not a regular file")
        }
        return FileSource(bytes: try ArchiveFile(descriptor: opened, label: path + "/" + name), label: path + "/" + name)
    }

    private static func entries(in path: String, limits: ComicLimits) throws(ComicError) -> [ArchiveEntry] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: path).sorted()
        } catch {
            throw .io(path: path, errno: 0, detail: "cannot list the folder: \(error.localizedDescription)")
        }
        return names.enumerated().map { index, name in
            let attributes = try? FileManager.default.attributesOfItem(atPath: path + "/" + name)
            let type = attributes?[.type] as? FileAttributeType
            let kind: EntryKind = switch type {
            case .typeRegular?: .file
            case .typeDirectory?: .directory
            case .typeSymbolicLink?: .symlink
            default: .other
            }
            let size = (attributes?[.size] as? NSNumber)?.int64Value
            return ArchiveEntry(index: index, path: name, kind: kind, declaredSize: size)
        }
    }
}
