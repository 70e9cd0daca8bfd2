/// Why a comic, or one of its pages, cannot be served. Every case carries a message a person
/// understands, because it ends up verbatim in `ERROR.txt` and on the command line.
public enum ComicError: Error, Equatable, Sendable, Codable {
    /// The bytes are not any archive format we know (a text file named `.cbr`, say).
    case notAComicArchive(path: String)
    /// A real archive or document format that inkyfs does not read (ACE, RAR 1.4).
    case unsupportedFormat(path: String, format: String)
    /// The archive's structure is broken: truncated, bit-flipped, or the decoder gave up.
    case corrupted(path: String, detail: String)
    /// Password-protected entries or headers.
    case encrypted(path: String)
    /// A readable archive that holds no page images.
    case noPages(path: String)
    /// One page is larger than the per-page limit (checked on the bytes actually produced).
    case pageTooLarge(path: String, entry: String, limit: Int64)
    /// A comic-wide limit: page count, total size, compression ratio, entry count.
    case limitExceeded(path: String, detail: String)
    /// The operating system refused: missing file, permission, I/O error.
    case io(path: String, errno: Int32, detail: String)
    /// The archive parser died or stopped answering (only raised by out-of-process readers).
    case parserFailed(path: String, detail: String)

    /// One line, with the path, for logs and the CLI.
    public var message: String {
        switch self {
        case .notAComicArchive(let path):
            return "\(path): not a comic archive (the content is not ZIP, RAR, 7z, TAR or PDF)"
        case .unsupportedFormat(let path, let format):
            return "\(path): unsupported format: \(format)"
        case .corrupted(let path, let detail):
            return "\(path): corrupted archive: \(detail)"
        case .encrypted(let path):
            return "\(path): encrypted archives are not supported (password-protected entries)"
        case .noPages(let path):
            return "\(path): no pages: the archive holds no image files"
        case .pageTooLarge(let path, let entry, let limit):
            return "\(path): page '\(entry)' is larger than the per-page limit of \(ByteCountText.format(limit))"
        case .limitExceeded(let path, let detail):
            return "\(path): limit exceeded: \(detail)"
        case .io(let path, _, let detail):
            return "\(path): \(detail)"
        case .parserFailed(let path, let detail):
            return "\(path): the archive parser failed: \(detail)"
        }
    }

    /// A short machine-readable name for `--json` output and the index.
    public var kind: String {
        switch self {
        case .notAComicArchive: "not-a-comic-archive"
        case .unsupportedFormat: "unsupported-format"
        case .corrupted: "corrupted"
        case .encrypted: "encrypted"
        case .noPages: "no-pages"
        case .pageTooLarge: "page-too-large"
        case .limitExceeded: "limit-exceeded"
        case .io: "io-error"
        case .parserFailed: "parser-failed"
        }
    }
}

extension ComicError {
    /// The same error naming `path` instead (a reader opened under another name reports as the
    /// comic the daemon asked about).
    public func relabeled(_ path: String) -> ComicError {
        switch self {
        case .notAComicArchive: .notAComicArchive(path: path)
        case .unsupportedFormat(_, let format): .unsupportedFormat(path: path, format: format)
        case .corrupted(_, let detail): .corrupted(path: path, detail: detail)
        case .encrypted: .encrypted(path: path)
        case .noPages: .noPages(path: path)
        case .pageTooLarge(_, let entry, let limit): .pageTooLarge(path: path, entry: entry, limit: limit)
        case .limitExceeded(_, let detail): .limitExceeded(path: path, detail: detail)
        case .io(_, let code, let detail): .io(path: path, errno: code, detail: detail)
        case .parserFailed(_, let detail): .parserFailed(path: path, detail: detail)
        }
    }
}

extension ComicError: CustomStringConvertible {
    public var description: String { message }
}
