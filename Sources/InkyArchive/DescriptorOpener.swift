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
            // MuPDF and unarr open files by name: they get the descriptor's own name, which
            // is the opened file itself (the link in /proc is to it, not to a path). They keep
            // their own descriptor, so `file` may close once they have opened.
            case .pdf:
                return try PDFComicReader(path: "/proc/self/fd/\(descriptor)", limits: limits)
            case .rar4:
                return try UnarrComicReader(path: "/proc/self/fd/\(descriptor)", limits: limits)
            default:
                return try reader(for: format, label: label, limits: limits, rar4: { () throws(ComicError) in
                    throw .unsupportedFormat(path: label, format: format.displayName)
                }, source: { FileSource(bytes: file, label: label) })
            }
        } catch {
            throw error.relabeled(label)
        }
    }
}
