import Foundation
import InkyCore
import InkyPDF

extension ComicOpener {
    /// Opens a comic from a descriptor the caller already opened (beneath the library root,
    /// without following any link: `LibraryRoot.openFile`), so what is parsed is the file that
    /// was checked, whatever the path names by now. Takes ownership of `descriptor`; `label`
    /// names the comic in messages.
    public static func open(descriptor: Int32, label: String, limits: ComicLimits = .default) throws(ComicError) -> any ComicReader {
        var info = stat()
        if fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFDIR {
            return try FolderComicReader(folder: descriptor, label: label, limits: limits)
        }
        let file = try ArchiveFile(descriptor: descriptor, label: label)
        let format = try detectFormat(FileSource(bytes: file, label: label))
        do throws(ComicError) {
            switch format {
            // Neither is handed a name to open again (the /proc/self/fd name would be opened
            // with the worker's own rights, which a root mount's worker no longer has): MuPDF
            // reads through the descriptor as it reads a vault object's bytes, unarr a mapping.
            case .pdf:
                return try PDFComicReader(bytes: file, label: label, limits: limits)
            case .rar4 where Int64(info.st_size) > largestMappedRAR:
                // A mapping this large would leave too little of the worker's address space (2 GiB)
                // to decode in: libarchive's RAR reader reads it through the descriptor instead.
                return try LibArchiveComicReader(label: label, format: .rar4, limits: limits,
                                                 openSource: { FileSource(bytes: file, label: label) })
            case .rar4:
                return try UnarrComicReader(descriptor: descriptor, source: FileSource(bytes: file, label: label), limits: limits)
            default:
                return try reader(for: format, label: label, limits: limits, rar4: { () throws(ComicError) in
                    throw .unsupportedFormat(path: label, format: format.displayName)
                }, source: { FileSource(bytes: file, label: label) })
            }
        } catch {
            throw error.relabeled(label)
        }
    }

    /// The largest RAR4 unarr reads (from a mapping of the whole file); larger ones go to libarchive.
    static let largestMappedRAR: Int64 = 1 << 30

    /// A folder of loose images as the caller listed it, each page it reads passed as a descriptor
    /// (`FolderMember`); takes ownership of them and closes `folder` (nothing is
    /// opened in it here).
    public static func open(folder: Int32, members: [FolderMember], label: String,
                            limits: ComicLimits = .default) throws(ComicError) -> any ComicReader {
        if folder >= 0 { close(folder) }
        return try FolderComicReader(members: members, label: label, limits: limits)
    }
}

/// A file of a folder comic as the daemon listed it, with its descriptor when the request reads it.
public struct FolderMember: Sendable {
    public var name: String
    public var kind: EntryKind
    public var size: Int64
    public var descriptor: Int32

    public init(name: String, kind: EntryKind, size: Int64, descriptor: Int32) {
        self.name = name
        self.kind = kind
        self.size = size
        self.descriptor = descriptor
    }
}
