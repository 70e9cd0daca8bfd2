import Foundation
internal import CFuse3
import Synchronization

/// What libfuse writes through fuse_log ("fuse: unknown option(s): `-o bogus'"): still written
/// to stderr as before, and the last line kept so a failure can carry it to the terminal of
/// the person mounting, not only to the daemon's log.
enum FUSEMessages {
    /// One message may come in several calls ("…`-o ", "bogus", "'\n"): joined here.
    private static let text = Mutex("")

    static func capture() {
        text.withLock { $0 = "" }
        fuse_set_log_func { _, format, arguments in
            guard let format, let arguments else { return }
            var buffer = [CChar](repeating: 0, count: 1024)
            _ = vsnprintf(&buffer, buffer.count, format, arguments)
            let line = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            FileHandle.standardError.write(Data(line.utf8))
            FUSEMessages.text.withLock { $0 = String(($0 + line).suffix(4096)) }
        }
    }

    /// The last thing libfuse said since `capture`, nil if nothing.
    static func last() -> String? {
        text.withLock { $0.split(separator: "\n").last { !$0.trimmingCharacters(in: .whitespaces).isEmpty }.map(String.init) }
    }
}
