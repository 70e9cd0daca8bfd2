import Foundation
internal import CFuse3

/// What libfuse writes through fuse_log ("fuse: unknown option(s): `-o bogus'"): still written
/// to stderr as before, and the last line kept so a failure can carry it to the terminal of
/// the person mounting, not only to the daemon's log.
enum FUSEMessages {
    private static let lock = NSLock()
    /// One message may come in several calls ("…`-o ", "bogus", "'\n"): joined here.
    nonisolated(unsafe) private static var text = ""

    static func capture() {
        lock.withLock { text = "" }
        fuse_set_log_func { _, format, arguments in
            guard let format, let arguments else { return }
            var buffer = [CChar](repeating: 0, count: 1024)
            _ = vsnprintf(&buffer, buffer.count, format, arguments)
            let line = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            FileHandle.standardError.write(Data(line.utf8))
            FUSEMessages.lock.withLock { FUSEMessages.text = String((FUSEMessages.text + line).suffix(4096)) }
        }
    }

    /// The last thing libfuse said since `capture`, nil if nothing.
    static func last() -> String? {
        lock.withLock { text.split(separator: "\n").last { !$0.trimmingCharacters(in: .whitespaces).isEmpty }.map(String.init) }
    }
}
