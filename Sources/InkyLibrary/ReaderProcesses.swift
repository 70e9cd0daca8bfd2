import Foundation
import InkyCore
import InkyTree
import Synchronization

/// Whose reads of pages are a person reading: the mounting user's, through a program that shows
/// what it reads. Thumbnailers, file managers (which read pages only to draw thumbnails and
/// previews), `file`, and programs that copy or checksum files read pages nobody looks at;
/// another user's reads through an `allow_other` mount are theirs, never the mounting user's.
///
/// A program is known by its process's name (`/proc/PID/comm`, the file name it was started
/// from, cut to 15 bytes by the kernel), its executable's file name, and for KDE's I/O workers
/// the plugin they run (KIO's thumbnailer is `kioworker …/thumbnail.so`). The pid the kernel
/// gives is the reading thread's: threads may name themselves ("pool-…"), so the names looked
/// at are those of its thread group's leader.
final class ReaderProcesses: Sendable {
    /// Programs that read pages nobody looks at (lowercased).
    static let nonReaders: Set<String> = [
        // Thumbnailers: XFCE's tumbler, GNOME's and others' `*-thumbnailer` (matched by name below too).
        "tumblerd", "gnome-thumbnail-factory", "gdk-pixbuf-thumbnailer", "evince-thumbnailer", "ffmpegthumbnailer",
        "totem-video-thumbnailer", "atril-thumbnailer", "xreader-thumbnailer", "gnome-epub-thumbnailer",
        // File managers: they show comics' pages only as thumbnails and previews.
        "pcmanfm", "pcmanfm-qt", "nautilus", "nemo", "caja", "thunar", "dolphin", "spacefm", "doublecmd", "krusader",
        // What reads a file without showing it.
        "file", "cp", "rsync", "tar", "bsdtar", "zip", "7z", "7za", "md5sum", "sha1sum", "sha224sum", "sha256sum",
        "sha384sum", "sha512sum", "b2sum", "cksum", "cmp",
    ]
    /// KDE's I/O workers: a thumbnailer only when the plugin they run is.
    static let kioWorkers: Set<String> = ["kioworker", "kioslave5", "kioslave", "kdeinit5"]
    /// The kernel cuts a process's name to this many bytes.
    static let commLength = 15
    /// A thread's verdict is kept this long: a pid is not reused that fast, and a program reads
    /// a page in many requests.
    static let keptSeconds = 2.0

    let owner: UInt32
    private let verdicts = Mutex<[Int32: (reader: Bool, at: Date)]>([:])

    init(owner: UInt32 = getuid()) { self.owner = owner }

    /// Whether `caller`'s reads are the mounting user reading. A thread the kernel could not
    /// name (pid 0), or whose names cannot be read, counts as a reader: nothing says otherwise.
    func isReader(_ caller: Caller) -> Bool {
        guard caller.uid == owner else { return false }
        guard caller.pid > 0 else { return true }
        let now = Date()
        if let kept = verdicts.withLock({ $0[caller.pid] }), now.timeIntervalSince(kept.at) < Self.keptSeconds { return kept.reader }
        let reader = !Self.isNonReader(Self.names(of: caller.pid))
        verdicts.withLock { verdicts in
            if verdicts.count > 256 { verdicts = verdicts.filter { now.timeIntervalSince($0.value.at) < Self.keptSeconds } }
            verdicts[caller.pid] = (reader, now)
        }
        return reader
    }

    struct Names: Equatable {
        var comm: String
        var executable: String?
        var arguments: [String]
    }

    /// The names of the thread group `thread` belongs to; empty when it is gone.
    static func names(of thread: Int32) -> Names {
        let status = ProcFile.read("/proc/\(thread)/status") ?? ""
        let leader = status.split(separator: "\n").first { $0.hasPrefix("Tgid:") }
            .flatMap { Int32($0.dropFirst(5).trimmingCharacters(in: .whitespaces)) } ?? thread
        let comm = (ProcFile.read("/proc/\(leader)/comm") ?? "").trimmingCharacters(in: .newlines)
        var executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(leader)/exe"))
        if let path = executable, path.hasSuffix(" (deleted)") { executable = String(path.dropLast(" (deleted)".count)) }
        let arguments = (ProcFile.read("/proc/\(leader)/cmdline") ?? "").split(separator: "\0").prefix(2).map(String.init)
        return Names(comm: comm, executable: executable.map { ($0 as NSString).lastPathComponent }, arguments: arguments)
    }

    static func isNonReader(_ names: Names) -> Bool {
        let comm = names.comm.lowercased()
        if isNonReaderName(comm) { return true }
        // A name cut to 15 bytes: the start of a known name, or of a thumbnailer's.
        if comm.utf8.count == commLength, nonReaders.contains(where: { $0.hasPrefix(comm) }) || comm.contains("thumbn") { return true }
        if let executable = names.executable?.lowercased(), isNonReaderName(executable) { return true }
        if kioWorkers.contains(comm) || names.executable.map({ kioWorkers.contains($0.lowercased()) }) == true {
            return names.arguments.dropFirst().contains { ($0 as NSString).lastPathComponent.lowercased().contains("thumbnail") }
        }
        return false
    }

    private static func isNonReaderName(_ name: String) -> Bool {
        nonReaders.contains(name) || name.contains("thumbnail")
    }
}
