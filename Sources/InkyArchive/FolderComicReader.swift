import Foundation
import InkyCore

/// A directory of loose images read as a comic: its image files (not recursive) are the pages.
final class FolderComicReader: ComicReader {
    let path: String
    let listing: ComicListing
    var onProgress: (() -> Void)?
    private let limits: ComicLimits
    private var currentStats = ReaderStats()

    init(path: String, limits: ComicLimits) throws(ComicError) {
        self.path = path
        self.limits = limits
        let entries = try Self.entries(in: path, limits: limits)
        listing = try ComicListing.build(path: path, format: .folder, entries: entries, isSolid: false, limits: limits)
    }

    var stats: ReaderStats { currentStats }

    func cost(of page: Page) -> ReadCost { .direct }

    func read(_ page: Page, into sink: (UnsafeRawBufferPointer) -> Void) throws(ComicError) {
        let source = try FileSource(path: path + "/" + page.sourcePath)
        var budget = PageBudget(path: path, entryName: page.sourcePath, declaredSize: page.size, limits: limits)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 1 << 16, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let got = try source.read(into: buffer, count: 1 << 16)
            if got == 0 { break }
            try budget.accept(got, consumed: nil)
            sink(UnsafeRawBufferPointer(start: buffer, count: got))
        }
        try budget.finish()
        currentStats.sourceBytesRead += source.bytesRead
        currentStats.pageBytesProduced += page.size
    }

    func readComicInfo() throws(ComicError) -> [UInt8]? { nil }

    /// True when `path` is a directory holding at least one image and nothing but images
    /// (hidden files aside): the rule for "a folder is a comic".
    static func isImageFolder(_ path: String) -> Bool {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return false }
        var images = 0
        for name in names where !name.hasPrefix(".") {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path + "/" + name, isDirectory: &isDirectory),
                  !isDirectory.boolValue,
                  PageFilter.imageExtensions.contains(EntryPath.lowercasedExtension(of: name)) else { return false }
            images += 1
        }
        return images > 0
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
