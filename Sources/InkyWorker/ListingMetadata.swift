import Foundation
import InkyCore

/// What a worker tells about a comic besides its pages, read while it lists it (the archive is
/// open then): its ComicInfo.xml, else its file name. A damaged or hostile ComicInfo.xml is
/// only a missing one: the comic still lists and reads.
enum ListingMetadata {
    static func read(from reader: any ComicReader, path: String) -> ComicMetadata {
        let fromName = FileNameMetadata.parse((path as NSString).lastPathComponent)
        if let bytes = try? reader.readComicInfo(), let info = MetadataFiles.comicInfo(bytes) {
            return info.filling(from: fromName)
        }
        return fromName
    }
}
