import Foundation
import InkyCore

/// Opens any comic — archive file or image folder — choosing the backend from the content.
public enum ComicOpener {
    /// Lists `path` and returns a reader positioned before its first page.
    public static func open(_ path: String, limits: ComicLimits = .default) throws(ComicError) -> any ComicReader {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw .io(path: path, errno: ENOENT, detail: "no such file or folder")
        }
        if isDirectory.boolValue {
            return try FolderComicReader(path: path, limits: limits)
        }
        let format = try detectFormat(path)
        switch format {
        case .rar4:
            return try UnarrComicReader(path: path, limits: limits)
        case .zip, .rar5, .sevenZip, .tar, .gzip, .bzip2, .xz, .zstd, .lzip:
            return try LibArchiveComicReader(path: path, format: format, limits: limits)
        case .pdf:
            throw .unsupportedFormat(path: path, format: "PDF (PDF comics are not supported yet)")
        case .ace, .oldRAR, .folder:
            throw .unsupportedFormat(path: path, format: format.displayName)
        }
    }

    /// Opens a comic from bytes that are not a plain file (a vault object decrypted on demand).
    /// `label` names it in messages. Folders cannot come this way; PDF, ACE and RAR 1.4 are refused.
    public static func open(bytes: any RandomAccessBytes, label: String, limits: ComicLimits = .default) throws(ComicError) -> any ComicReader {
        let source = FileSource(bytes: bytes, label: label)
        let format = try detectFormat(source)
        switch format {
        case .rar4:
            return try UnarrComicReader(bytes: source, limits: limits)
        case .zip, .rar5, .sevenZip, .tar, .gzip, .bzip2, .xz, .zstd, .lzip:
            return try LibArchiveComicReader(label: label, format: format, limits: limits) { FileSource(bytes: bytes, label: label) }
        case .pdf:
            throw .unsupportedFormat(path: label, format: "PDF (PDF comics are not supported yet)")
        case .ace, .oldRAR, .folder:
            throw .unsupportedFormat(path: label, format: format.displayName)
        }
    }

    /// The format from the file's first bytes; `.notAComicArchive` when it matches none.
    public static func detectFormat(_ path: String) throws(ComicError) -> ArchiveFormat {
        try detectFormat(FileSource(path: path))
    }

    static func detectFormat(_ source: FileSource) throws(ComicError) -> ArchiveFormat {
        if let format = ArchiveFormat.sniff(try source.bytes(at: 0, count: ArchiveFormat.sniffLength)) {
            return format
        }
        let tailStart = max(0, source.size - Int64(ArchiveFormat.tailLength))
        if let format = ArchiveFormat.sniffTail(try source.bytes(at: tailStart, count: Int(source.size - tailStart))) {
            return format
        }
        throw .notAComicArchive(path: source.path)
    }

    /// Library files worth opening as comics: a comic or archive extension, whatever the
    /// content turns out to be (so a broken `.cbr` is reported, not silently passed through).
    public static let comicExtensions: Set<String> = [
        "cbz", "cbr", "cb7", "cbt", "cba", "zip", "rar", "7z", "tar", "tgz", "tbz", "tbz2", "txz", "tzst", "pdf",
    ]

    public static func looksLikeComicFile(_ name: String) -> Bool {
        comicExtensions.contains(EntryPath.lowercasedExtension(of: name))
    }

    /// Versions of the archive libraries, for `--version` and `doctor`.
    public static var libraryVersions: [String: String] {
        ["libarchive": LibArchiveHandle.version]
    }
}
