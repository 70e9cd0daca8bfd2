import Foundation
import InkyCore
import Synchronization

/// Pages of comics in progress kept on disk, so a comic in a solid archive (7z, solid RAR, a
/// compressed TAR) resumes at once after a remount instead of decoding its stream from the start
/// again (8 s to page 200 of a 400-page CB7).
///
/// The rule: for each library comic in a solid archive read without conversion, the last page a
/// reader read and the `ahead` pages after it (the resume run) are on disk, in the converted pages'
/// folder and under their cap (`--page-cache-size`, one eviction order for both). The run moves with
/// the reader: pages that leave it are removed, pages that enter it are written as they are decoded,
/// on the fetch threads (never a FUSE thread). Reading the last page drops the comic's pages; so does
/// a change of its file, and a changed file's pages are never served anyway: a page's name holds
/// the file's identity (size, mtime, inode), and its header the name and the page's CRC-32.
///
/// Past the run a solid stream must be decoded from its start once: the first read that serves a
/// kept page starts that decode in the background (the first page after the run), so the worker's
/// decoder waits there while the reader reads the run.
///
/// A vault comic has no name here: nothing of it reaches the disk.
public final class ResumePages: Sendable {
    /// Pages kept after the last one read: ~1 min of reading at a page every 2-3 s, longer than a
    /// 400-page stream's decode from its start; ~10 MB for a comic of 400 KB pages.
    public static let defaultAhead = 24

    public let ahead: Int
    private let files: BoundedFileDirectory

    /// What this mount knows of each comic it kept pages of, by the comic's name.
    private struct Known {
        /// Where the reader is: the run to write once the reader stays (`settle`).
        var run: ClosedRange<Int>?
        /// The run last written to disk, and whether one was in this mount.
        var written: ClosedRange<Int>?
        var wroteOnce = false
        /// A write was asked for in this mount (the first one is asked at once).
        var asked = false
        /// Moves so far: a write waiting for the reader to settle is dropped when another came.
        var moves = 0
        /// The order of the read that moved the run last (`move`).
        var order = 0
        /// A worker's decoder was moved through this comic in this mount.
        var positioned = false
        /// The last page a request of this mount decoded: where that decoder stands.
        var decodedThrough = -1
    }
    private let known = Mutex<[String: Known]>([:])

    public init(sharing pages: ConvertedPageCache, ahead: Int = ResumePages.defaultAhead) {
        files = pages.files
        self.ahead = max(1, ahead)
    }

    /// One comic's pages as they are now: its path, identity and the settings it is listed with.
    struct Comic: Sendable {
        /// The comic's part of every name (`BoundedFileDirectory.comicName`), as converted pages and covers start.
        let name: String
        private let seed: [UInt8]

        init?(_ comic: ComicRef, identity: FileIdentity, rendering: PageRendering?) {
            guard case .library(let path) = comic else { return nil }
            name = BoundedFileDirectory.comicName(path: path, identity: identity)
            // "resume" first: never the name of a converted page of the same comic.
            var seed = Array("resume\0".utf8) + Array(path.utf8) + [0]
            withUnsafeBytes(of: identity.generation.littleEndian) { seed += $0 }
            if let rendering {
                let encoder = JSONEncoder()
                encoder.outputFormatting = .sortedKeys
                seed += (try? encoder.encode(rendering)).map(Array.init) ?? []
            }
            self.seed = seed
        }

        /// The page's key: "<comic>-<page>", 65 characters as a converted page's.
        func key(_ index: Int) -> String {
            name + "-" + BoundedFileDirectory.hashedName(of: seed + withUnsafeBytes(of: Int64(index).littleEndian) { Array($0) })
        }
    }

    /// The run for a reader on page `index` of `count`: nil on the last page (the comic is finished).
    func run(reading index: Int, of count: Int) -> ClosedRange<Int>? {
        guard index >= 0, index < count - 1 else { return nil }
        return index...min(count - 1, index + ahead)
    }

    /// Seconds a reader stays on a page before its run is written: a reader paging through at
    /// once (a copy, a viewer's thumbnails) writes nothing, a reader reading writes a page a turn.
    static let settle = 0.5

    /// Moves the comic's run; nil when it stands where it was (nothing to do), else this move's
    /// number and whether it is the comic's first in this mount (its run is written at once).
    /// `order` numbers the reads: a read whose thread came late, after a later read moved the run,
    /// moves nothing (moved back, the run would drop pages the decoder is past, to be decoded again).
    func move(_ comic: Comic, to run: ClosedRange<Int>?, order: Int) -> (number: Int, first: Bool)? {
        known.withLock { known in
            if let before = known[comic.name] {
                guard order > before.order else { return nil }
                known[comic.name]!.order = order
                if before.run == run { return nil }
            }
            known[comic.name, default: Known()].order = order
            known[comic.name, default: Known()].run = run
            known[comic.name]!.moves += 1
            defer { known[comic.name]!.asked = true }
            return (known[comic.name]!.moves, !known[comic.name]!.asked)
        }
    }

    /// Whether no move came after move `number`.
    func isLastMove(_ comic: Comic, _ number: Int) -> Bool { known.withLock { $0[comic.name]?.moves == number } }

    /// The run to write now and the one written before (now replaced by it), and whether this is
    /// the comic's first write in this mount.
    func take(_ comic: Comic) -> (run: ClosedRange<Int>?, written: ClosedRange<Int>?, first: Bool) {
        known.withLock { known in
            let entry = known[comic.name, default: Known()]
            known[comic.name, default: Known()].written = entry.run
            known[comic.name]!.wroteOnce = true
            return (entry.run, entry.written, !entry.wroteOnce)
        }
    }

    /// Whether page `index` may be on disk, kept: in the run written in this mount, or before the
    /// first write, in the run just asked for (after a remount, an earlier mount's).
    func mayKeep(_ comic: Comic, _ index: Int) -> Bool {
        known.withLock { known in
            guard let entry = known[comic.name] else { return false }
            return (entry.wroteOnce ? entry.written : entry.run)?.contains(index) ?? false
        }
    }

    /// Whether page `index` is in the run on disk: a page decoded for a reader is written too.
    func isInRun(_ comic: Comic, _ index: Int) -> Bool {
        known.withLock { $0[comic.name]?.written?.contains(index) ?? false }
    }

    func isPositioned(_ comic: Comic) -> Bool { known.withLock { $0[comic.name]?.positioned ?? false } }

    /// Notes that a request decoded the comic up to page `index` (its last one).
    func decoded(_ comic: Comic, through index: Int) {
        known.withLock { known in
            known[comic.name, default: Known()].positioned = true
            known[comic.name, default: Known()].decodedThrough = index
        }
    }

    /// The last page a request of this mount decoded (-1: none).
    func decodedThrough(_ comic: Comic) -> Int { known.withLock { $0[comic.name]?.decodedThrough ?? -1 } }

    /// The kept page, when a whole, undamaged copy of `size` bytes is here; a bad copy is removed.
    func page(_ comic: Comic, _ index: Int, size: Int64?) -> [UInt8]? {
        let key = comic.key(index)
        guard let file = files.read(key + ".page") else { return nil }
        guard let bytes = ConvertedPageCache.unwrap(file, name: key), size.map({ $0 == Int64(bytes.count) }) ?? true else {
            files.remove(key + ".page")
            return nil
        }
        return bytes
    }

    func contains(_ comic: Comic, _ index: Int) -> Bool { files.contains(comic.key(index) + ".page") }

    /// Writes the page now, on the calling (fetch) thread: a later lookup on any thread finds it.
    func store(_ comic: Comic, _ index: Int, _ bytes: [UInt8]) {
        let key = comic.key(index)
        files.write(key + ".page", ConvertedPageCache.wrap(bytes, name: key))
    }

    func remove(_ comic: Comic, _ indices: some Sequence<Int>) {
        for index in indices { files.remove(comic.key(index) + ".page") }
    }

    /// Forgets a comic whose file changed or was finished (its pages are removed by the caller).
    func forget(_ comic: Comic) { _ = known.withLock { $0.removeValue(forKey: comic.name) } }
}
