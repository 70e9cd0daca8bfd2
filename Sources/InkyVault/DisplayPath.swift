/// Rules for the names a person sees: display paths inside the mounted `Vault/`, and file
/// names restored on extraction. Both end up as real path components (in FUSE replies
/// and in `open(2)`), so anything that could escape a directory or is not a valid
/// component is refused here, once, rather than trusted later.
public enum DisplayPath {
    /// Linux NAME_MAX: a longer component cannot be created or looked up.
    static let maximumComponentBytes = 255
    static let maximumPathBytes = 4096

    /// `path` itself if it is a valid relative path of valid components; throws otherwise.
    /// Not normalised silently: "a//b" or "a/./b" is refused, so what is stored is exactly
    /// what the caller asked for.
    static func validate(_ path: String) throws(VaultError) -> String {
        guard !path.isEmpty else { throw .invalidDisplayPath(path, reason: "empty") }
        guard path.utf8.count <= maximumPathBytes else { throw .invalidDisplayPath(path, reason: "too long") }
        guard !path.hasPrefix("/") else { throw .invalidDisplayPath(path, reason: "must be relative") }
        for component in path.split(separator: "/", omittingEmptySubsequences: false) {
            guard isValidFileName(String(component)) else {
                throw .invalidDisplayPath(path, reason: "'\(component)' is not a valid file or folder name")
            }
        }
        return path
    }

    /// `validate`, for a name being added: also no control character (C0, DEL, C1), which would
    /// print raw in `vault list` and in `Vault/` (a newline forging a line, an escape sequence
    /// driving the terminal). Only new names: a manifest written before this rule still opens.
    static func validateNew(_ path: String) throws(VaultError) -> String {
        let valid = try validate(path)
        guard !hasControlCharacter(valid) else {
            throw .invalidDisplayPath(escaped(path), reason: "contains a control character (a newline, an escape, a bell...)")
        }
        return valid
    }

    static func hasControlCharacter(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
    }

    /// One path component: not empty, not "." or "..", no "/" or NUL, at most 255 bytes.
    static func isValidFileName(_ name: String) -> Bool {
        !name.isEmpty && name != "." && name != ".." && name.utf8.count <= maximumComponentBytes
            && !name.utf8.contains(UInt8(ascii: "/")) && !name.utf8.contains(0)
    }

    /// `text` for a terminal or a log: control characters (C0, DEL, C1: a newline, an escape
    /// sequence, a bell) written as `\u{1B}`, and the backslash doubled, so a hostile name can
    /// neither forge a line nor drive the terminal.
    public static func escaped(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            if hasControlCharacter(String(scalar)) {
                out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else if scalar == "\\" {
                out += "\\\\"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// `name` if `isTaken(name)` is false, else "stem (1).ext", "stem (2).ext", ... The
    /// counter goes before the extension so the file still opens with the right program.
    /// A leading dot is not an extension (".hidden" becomes ".hidden (1)").
    static func unique(_ name: String, isTaken: (String) -> Bool) -> String {
        guard isTaken(name) else { return name }
        let (stem, suffix) = splitExtension(name)
        var counter = 1
        while true {
            let candidate = "\(stem) (\(counter))\(suffix)"
            if !isTaken(candidate) { return candidate }
            counter += 1
        }
    }

    /// Applies `unique` to the last component of a display path.
    static func uniquePath(_ path: String, isTaken: (String) -> Bool) -> String {
        let (folder, name) = splitLast(path)
        let uniqueName = unique(name) { isTaken(folder.isEmpty ? $0 : folder + "/" + $0) }
        return folder.isEmpty ? uniqueName : folder + "/" + uniqueName
    }

    static func splitLast(_ path: String) -> (folder: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return ("", path) }
        return (String(path[..<slash]), String(path[path.index(after: slash)...]))
    }

    /// Every folder above `path`: "a/b/c.cbz" → ["a", "a/b"].
    static func folders(of path: String) -> [String] {
        var folders: [String] = []
        var current = ""
        for component in path.split(separator: "/").dropLast() {
            current = current.isEmpty ? String(component) : current + "/" + component
            folders.append(current)
        }
        return folders
    }

    private static func splitExtension(_ name: String) -> (stem: String, suffix: String) {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return (name, "") }
        return (String(name[..<dot]), String(name[dot...]))
    }
}
