import Foundation
import InkyCore
import InkyWorker

/// What a worker tells about a comic besides its pages, read while it lists it (the archive is
/// open then): its ComicInfo.xml, else its CoMet.xml, else ComicBookInfo in its ZIP comment,
/// else its file name, which also fills a series the others leave out. A damaged or hostile
/// metadata file is only a missing one: the comic still lists and reads.
enum ListingMetadata {
    static func read(from reader: any ComicReader, path: String) -> ComicMetadata {
        let fromName = FileNameMetadata.parse(fileName(of: path), folder: folderName(of: path))
        return tags(from: reader)?.filling(from: fromName) ?? fromName
    }

    /// `NSString.lastPathComponent` without the bridge, which was 2% of a worker's listing CPU,
    /// for an ASCII path with no doubled or trailing slash: there both take what follows the
    /// last slash. Any other path still goes through Foundation (which, for one, does not see
    /// a slash that a combining mark follows as a separator).
    static func fileName(of path: String) -> String {
        let utf8 = path.utf8
        let slash = UInt8(ascii: "/")
        guard utf8.last != slash, path.isASCII,
              !zip(utf8, utf8.dropFirst()).contains(where: { $0 == slash && $1 == slash }) else {
            return (path as NSString).lastPathComponent
        }
        guard let last = utf8.lastIndex(of: slash) else { return path }
        return String(Substring(utf8[utf8.index(after: last)...]))
    }

    /// The name of the folder holding the comic, whose series a name like `Issue 001.cbz` means
    /// (at the top of the library: the library folder's own name, as good a series as any).
    static func folderName(of path: String) -> String? {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")), slash > path.utf8.startIndex else { return nil }
        let name = fileName(of: String(Substring(path.utf8[..<slash])))
        return name.isEmpty ? nil : name
    }

    /// The tags alone: a vault object's file name is random hex, and the daemon fills in from the
    /// comic's own name in memory (its views are the vault's, never the index's).
    static func tags(from reader: any ComicReader) -> ComicMetadata? {
        (try? reader.readComicInfo()).flatMap { $0.flatMap(MetadataFiles.comicInfo) }
            ?? (try? reader.readCoMet()).flatMap { $0.flatMap(MetadataFiles.coMet) }
            ?? reader.archiveComment.flatMap(MetadataFiles.comicBookInfo)
    }
}
