/// Decides which archive members are pages, which one is the ComicInfo.xml, and which are
/// skipped (with the reason, so `inkyfs pages` can explain a missing page).
public enum PageFilter {
    public static let imageExtensions: Set<String> = [
        "jpg", "jpeg", "png", "gif", "webp", "avif", "jxl", "bmp", "tif", "tiff", "heic", "heif", "jp2", "j2k",
    ]

    public enum Verdict: Equatable, Sendable {
        case page
        case comicInfo
        /// CoMet.xml, the other metadata file comics carry: read by a worker while listing.
        case coMet
        case skipped(SkipReason)
    }

    public static func classify(_ entry: ArchiveEntry, limits: ComicLimits) -> Verdict {
        let components = EntryPath.components(of: entry.path)
        if let unsafe = EntryPath.unsafeReason(entry.path, components: components, limits: limits) {
            return .skipped(.unsafeName(unsafe))
        }
        guard entry.kind == .file else { return .skipped(.notARegularFile(entry.kind)) }
        guard let name = components.last else { return .skipped(.unsafeName("empty name")) }
        if components.contains(where: { $0.hasPrefix(".") || $0.hasPrefix("_") }) {
            return .skipped(.hidden)
        }
        if components.count == 1, name.lowercased() == "comicinfo.xml" { return .comicInfo }
        if components.count <= 2, name.lowercased() == "comet.xml" { return .coMet }
        guard imageExtensions.contains(EntryPath.lowercasedExtension(of: name)) else {
            return .skipped(.notAnImage)
        }
        if entry.isEncrypted { return .skipped(.encrypted) }
        guard let size = entry.declaredSize else { return .skipped(.unknownSize) }
        if size == 0 { return .skipped(.emptyFile) }
        if size > limits.maxPageBytes { return .skipped(.tooLarge(size)) }
        return .page
    }
}

/// Why an archive member did not become a page.
public enum SkipReason: Equatable, Sendable, Codable {
    case notARegularFile(EntryKind)
    case hidden
    case notAnImage
    case unsafeName(String)
    case encrypted
    case unknownSize
    case emptyFile
    case tooLarge(Int64)
    /// A member whose header is damaged: its name is unknown, the reader stepped past it.
    case damagedHeader(String)

    public var text: String {
        switch self {
        case .notARegularFile(let kind): "not a regular file (\(kind.rawValue))"
        case .hidden: "hidden or resource-fork entry"
        case .notAnImage: "not an image"
        case .unsafeName(let why): "unsafe name: \(why)"
        case .encrypted: "encrypted"
        case .unknownSize: "the header declares no size"
        case .emptyFile: "empty file"
        case .tooLarge(let size): "declares \(ByteCountText.format(size)), over the per-page limit"
        case .damagedHeader(let why): "damaged header, its member left out: \(why)"
        }
    }

    /// Skips a reader of `pages` should be told about; the rest are expected clutter.
    public var isNoteworthy: Bool {
        switch self {
        case .notARegularFile, .hidden, .notAnImage: false
        default: true
        }
    }
}

/// Path arithmetic on archive member names, which may use `\` (Windows zippers) and may be hostile.
public enum EntryPath {
    public static func components(of path: String) -> [String] {
        path.isASCII ? asciiComponents(of: path) : characterComponents(of: path)
    }

    /// The split by characters, which any path takes and a non-ASCII one needs.
    static func characterComponents(of path: String) -> [String] {
        path.replacingBackslashes().split(separator: "/", omittingEmptySubsequences: true)
            .map(String.init).filter { $0 != "." }
    }

    /// The same split on bytes, for an ASCII path, where every byte is a character (no mark can
    /// combine with a '/' into another character there): splitting by `Character` was a tenth of
    /// a worker's listing CPU, this runs three times per member.
    static func asciiComponents(of path: String) -> [String] {
        var parts: [String] = []
        var utf8 = path.utf8[...]
        while !utf8.isEmpty {
            let end = utf8.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "\\") } ?? utf8.endIndex
            let part = utf8[..<end]
            if !part.isEmpty && !(part.count == 1 && part.first == UInt8(ascii: ".")) {
                parts.append(String(Substring(part)))
            }
            utf8 = end == utf8.endIndex ? utf8[end...] : utf8[utf8.index(after: end)...]
        }
        return parts
    }

    public static func unsafeReason(_ path: String, components: [String], limits: ComicLimits) -> String? {
        if path.utf8.count > limits.maxNameBytes { return "longer than \(limits.maxNameBytes) bytes" }
        let normalized = path.replacingBackslashes()
        if normalized.hasPrefix("/") { return "absolute path" }
        if normalized.utf8.count >= 2, normalized.dropFirst().first == ":" { return "drive-letter path" }
        if components.contains("..") { return "'..' component" }
        if path.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            return "control character"
        }
        return nil
    }

    public static func lowercasedExtension(of name: String) -> String {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return name[name.index(after: dot)...].lowercased()
    }
}

private extension String {
    /// Looks for the byte, not the substring: `contains("\\")` goes through Foundation's string
    /// search, 2% of a worker's CPU when listing a library (it runs for every member, twice).
    func replacingBackslashes() -> String {
        utf8.contains(UInt8(ascii: "\\")) ? String(map { $0 == "\\" ? "/" : $0 }) : self
    }
}
