import Foundation
import InkyCore
import Synchronization

/// Comic files' `lstat`s of the last second, for the listing paths only: a warm `ls -lR` made
/// three of them per comic in a row (its folder's listing, listing ahead reading the index for
/// the folder, the comic's own directory reply), and the two made while the kernel waited were
/// 3 µs of the 19 it waited per comic directory (a FUSE ceiling's: 7). A folder's listing
/// stores what it saw of each comic, and the next second takes that instead of looking again.
///
/// Only what a directory listing shows is made from these: a lookup, an open and a page read
/// still look at the file itself, so a comic replaced within the second is never read at its
/// old offsets (its old pages answer ESTALE). The watcher forgets a path it saw change, and
/// everything beneath it, before it looks at the comic again.
final class RecentComicChecks: Sendable {
    /// As long as a folder stays open (`LibraryRoot`): what `ls` or a file manager does with
    /// a folder's entries right after listing it.
    static let lifetime: UInt64 = 1_000_000_000
    /// A few folders' comics: when full, the expired go, and if none has, all go.
    static let capacity = 4_096

    private let checks = Mutex<[String: (check: ComicCheck, seen: UInt64)]>([:])
    private let now: @Sendable () -> UInt64

    init(clock: @escaping @Sendable () -> UInt64 = { DispatchTime.now().uptimeNanoseconds }) { now = clock }

    /// `path`'s check if one was stored in the last `lifetime`.
    func check(_ path: String) -> ComicCheck? {
        let time = now()
        return checks.withLock { checks in
            guard let found = checks[path], time &- found.seen < Self.lifetime else { return nil }
            return found.check
        }
    }

    func store(_ path: String, _ check: ComicCheck) {
        let time = now()
        checks.withLock { checks in
            if checks.count >= Self.capacity && checks[path] == nil {
                checks = checks.filter { time &- $0.value.seen < Self.lifetime }
                if checks.count >= Self.capacity { checks.removeAll(keepingCapacity: true) }
            }
            checks[path] = (check, time)
        }
    }

    /// Forgets the paths in `gone` and everything beneath them (a folder renamed or removed takes its
    /// comics; "" is the whole library), in one pass: the watcher reports a copy of thousands
    /// of comics as one batch, and a pass per path would be thousands of passes.
    func forget(under gone: Set<String>) {
        guard !gone.isEmpty else { return }
        checks.withLock { checks in
            guard !gone.contains("") else { return checks.removeAll() }
            checks = checks.filter { !Self.isAtOrBeneath(gone, $0.key) }
        }
    }

    /// Whether `path` is one of `paths` or lies beneath one: each folder holding it is looked up.
    static func isAtOrBeneath(_ paths: Set<String>, _ path: String) -> Bool {
        if paths.contains(path) { return true }
        var end = path.utf8.endIndex
        while let slash = path.utf8[..<end].lastIndex(of: UInt8(ascii: "/")) {
            if paths.contains(String(Substring(path.utf8[..<slash]))) { return true }
            end = slash
        }
        return false
    }

    var count: Int { checks.withLock { $0.count } }
}

extension LibraryFilesystem {
    /// `comicCheck` for what a directory listing shows (a folder's entries' attributes, a comic
    /// directory's reply, listing ahead): a library comic's check from the last second if there
    /// is one, else looked at now and kept.
    func listedComicCheck(_ comic: ComicRef) -> Result<ComicCheck, Errno> {
        guard case .library(let path) = comic else { return comicCheck(comic) }
        if let recent = recentChecks.check(path) { return .success(recent) }
        let result = comicCheck(comic)
        if case .success(let check) = result { recentChecks.store(path, check) }
        return result
    }
}
