import Foundation
import InkyCore

/// What a worker tells about a comic besides its pages, read while it lists it (the archive is
/// open then): its ComicInfo.xml, else its CoMet.xml, else ComicBookInfo in its ZIP comment,
/// else its file name, which also fills a series the others leave out. A damaged or hostile
/// metadata file is only a missing one: the comic still lists and reads.
enum ListingMetadata {
    static func read(from reader: any ComicReader, path: String) -> ComicMetadata {
        let fromName = FileNameMetadata.parse((path as NSString).lastPathComponent)
        return tags(from: reader)?.filling(from: fromName) ?? fromName
    }

    /// The tags alone: a vault object's file name is random hex, and the daemon fills in from the
    /// comic's own name in memory (its views are the vault's, never the index's).
    static func tags(from reader: any ComicReader) -> ComicMetadata? {
        (try? reader.readComicInfo()).flatMap { $0.flatMap(MetadataFiles.comicInfo) }
            ?? (try? reader.readCoMet()).flatMap { $0.flatMap(MetadataFiles.coMet) }
            ?? reader.archiveComment.flatMap(MetadataFiles.comicBookInfo)
    }
}
