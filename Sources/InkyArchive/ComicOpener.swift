import Foundation
import InkyCore
import InkyPDF

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
        // Opened once, for the sniff and for the reader, as a descriptor the caller opened is:
        // opening and reading it again doubled the system calls of listing a small comic.
        let file = try ArchiveFile(path: path)
        let format = try detectFormat(FileSource(bytes: file, label: path))
        if format == .pdf { return try PDFComicReader(path: path, limits: limits) }
        return try reader(for: format, label: path, limits: limits,
                          rar4: { () throws(ComicError) in try UnarrComicReader(path: path, limits: limits) },
                          source: { FileSource(bytes: file, label: path) })
    }

    /// Opens a comic from bytes that are not a plain file (a vault object decrypted on demand).
    /// `label` names it in messages. Folders cannot come this way; ACE and RAR 1.4 are refused.
    /// MuPDF reads a PDF through the same bytes, at random, as it reads a file: never a copy.
    public static func open(bytes: any RandomAccessBytes, label: String, limits: ComicLimits = .default) throws(ComicError) -> any ComicReader {
        let source = FileSource(bytes: bytes, label: label)
        let format = try detectFormat(source)
        if format == .pdf { return try PDFComicReader(bytes: bytes, label: label, limits: limits) }
        // A ZIP is listed from its central directory: each local header is a chunk to decrypt.
        return try reader(for: format, label: label, limits: limits, listFromDirectory: true,
                          rar4: { () throws(ComicError) in try UnarrComicReader(bytes: source, limits: limits) },
                          source: { FileSource(bytes: bytes, label: label) })
    }

    /// The backend for a detected format, wherever the bytes come from: `rar4` makes the unarr
    /// reader, `source` opens the bytes again for libarchive (each restart reopens them);
    /// `listFromDirectory` lists a ZIP from its central directory (`ZipDirectoryListing`).
    static func reader(for format: ArchiveFormat, label: String, limits: ComicLimits, listFromDirectory: Bool = false,
                               rar4: () throws(ComicError) -> UnarrComicReader,
                               source: @escaping () throws(ComicError) -> FileSource) throws(ComicError) -> any ComicReader {
        switch format {
        case .rar4:
            return try rar4()
        case .sevenZip:
            // liblzma streams a solid folder entry by entry, so damage costs only what lies
            // behind it; what that reader does not decode goes to libarchive.
            if let reader = try SevenZipComicReader.open(source: source(), limits: limits) { return reader }
            return try LibArchiveComicReader(label: label, format: format, limits: limits, openSource: source)
        case .zip:
            return try LibArchiveComicReader(label: label, format: format, limits: limits,
                                             listFromDirectory: listFromDirectory, openSource: source)
        case .rar5, .tar, .gzip, .bzip2, .xz, .zstd, .lzip:
            return try LibArchiveComicReader(label: label, format: format, limits: limits, openSource: source)
        case .pdf, .ace, .oldRAR, .folder:
            // A PDF never comes here: each `open` hands it to MuPDF, by name or through its bytes.
            throw .unsupportedFormat(path: label, format: format.displayName)
        }
    }

    /// The format from the file's first bytes; `.notAComicArchive` when it matches none.
    public static func detectFormat(_ path: String) throws(ComicError) -> ArchiveFormat {
        try detectFormat(FileSource(path: path))
    }

    static func detectFormat(_ source: FileSource) throws(ComicError) -> ArchiveFormat {
        let read = { (offset: Int64, count: Int) throws(ComicError) -> [UInt8] in try source.bytes(at: offset, count: count) }
        guard let format = try ArchiveFormat.detect(size: source.size, read: read) else { throw .notAComicArchive(path: source.path) }
        return format
    }

    /// Versions of the archive libraries, for `--version` and `doctor`.
    public static var libraryVersions: [String: String] {
        ["libarchive": LibArchiveHandle.version, "libunarr": UnarrVersion.version, "mupdf": PDFComicReader.engineVersion]
    }
}
