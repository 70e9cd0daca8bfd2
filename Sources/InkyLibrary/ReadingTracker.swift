import Foundation
import InkyCore
import InkyStore

/// Reading state and the `Continue Reading/` folder. Only reads that come from the kernel for
/// a page file count: the window cache's prefetch never passes through `read`, and the
/// kernel's readahead stays inside the file being read.
extension LibraryFilesystem {
    struct ContinueLink {
        var name: String
        var comic: String
    }

    func recordReading(page: Int, of pageCount: Int, comic: ComicState) {
        comic.recordedOnce = true
        guard options.recordProgress, let state, let file = libraryFile(comic.comic) else { return }
        stateQueue.async { state.recordRead(file, page: page, pageCount: pageCount) }
    }

    /// Waits for queued state writes (reads recorded, rendered page sizes): the daemon calls it
    /// before it exits, so an unmount right after a read loses nothing.
    public func finishStateWrites() {
        stateQueue.sync {}
    }

    /// Comics in progress under this library, most recent first, as link names that sort in
    /// that order: "01 - Issue 001", "02 - …".
    func continueReadingLinks() -> [ContinueLink] {
        guard let state else { return [] }
        stateQueue.sync {} // writes of reads just made are visible
        let prefix = libraryPath + "/"
        let comics = state.progress().compactMap { row -> String? in
            guard row.path.hasPrefix(prefix) else { return nil }
            let relative = String(row.path.dropFirst(prefix.count))
            guard case .success(let info) = root.status(relative), info.st_mode & S_IFMT == S_IFREG else { return nil }
            return relative
        }
        let width = max(2, String(comics.count).count)
        return comics.enumerated().compactMap { rank, comic in
            guard let display = displayPath(of: comic) else { return nil }
            let number = String(rank + 1)
            let padded = String(repeating: "0", count: width - number.count) + number
            let name = "\(padded) - \(display.split(separator: "/").last.map(String.init) ?? display)"
            return ContinueLink(name: name, comic: comic)
        }
    }

    /// "../Series/Issue 001": from `Continue Reading/` to the comic's directory.
    func linkTarget(_ comic: String) -> String? {
        displayPath(of: comic).map { "../" + $0 }
    }

    /// The path under the mount of a comic given by its path in the library (names of comics
    /// lose their extension unless they collide).
    func displayPath(of comic: String) -> String? {
        let folder = comic.split(separator: "/").dropLast().joined(separator: "/")
        guard case .success(let index) = folderIndex(folder),
              let display = index.nodes.first(where: { $0.value == .comic(.library(comic)) })?.key else { return nil }
        return folder.isEmpty ? display : folder + "/" + display
    }
}
