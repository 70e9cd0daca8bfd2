import Foundation
import Synchronization

/// A one-line "[12/340] path" on stderr while a long command runs, only when stderr is a
/// terminal: pipes and logs get clean output.
final class ProgressLine: Sendable {
    private let total: Int
    private let enabled: Bool
    /// Whether a line is on the terminal (callers update it one at a time).
    private let shown = Atomic(false)

    /// `evenForOne`: show it for a single long item too (encrypting one large comic).
    init(total: Int, evenForOne: Bool = false) {
        self.total = total
        enabled = isatty(STDERR_FILENO) == 1 && (total > 1 || evenForOne)
    }

    /// `current`: the item being worked on; a path shows as its last component. `note` follows
    /// it verbatim (a rate, an ETA), so a '/' in it cannot be taken for a path.
    func update(done: Int, current: String, note: String = "") {
        guard enabled else { return }
        let name = current.split(separator: "/").last.map(String.init) ?? current
        let line = "[\(done + 1)/\(total)] \(name)" + (note.isEmpty ? "" : "  (\(note))")
        FileHandle.standardError.write(Data(("\r\u{1B}[K" + String(line.prefix(100))).utf8))
        shown.store(true, ordering: .relaxed)
    }

    func clear() {
        guard shown.exchange(false, ordering: .relaxed) else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
    }
}
