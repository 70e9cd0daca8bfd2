import Foundation

/// The temporary folders one test case makes, removed together in its `tearDown`.
public final class TemporaryFolders {
    private var made: [URL] = []

    public init() {}

    public func make(_ label: String) -> URL {
        let url = ArchiveMaker.temporaryDirectory(label)
        made.append(url)
        return url
    }

    public func removeAll() {
        for folder in made { try? FileManager.default.removeItem(at: folder) }
        made = []
    }
}
