/// A metadata field made into one file name for a view: whatever the comic's tags say, the result
/// is a single path component the kernel accepts, never `.` or `..`, with no `/`, NUL or control
/// character, and short enough (in UTF-8 bytes) to leave room for what a view adds around it.
public enum SafeName {
    /// Bytes a name made here takes at most: NAME_MAX is 255, and views add a position, a
    /// volume or an issue number around it.
    public static let maxBytes = 180

    /// nil when nothing showable is left (an empty field, `.` or `..`).
    public static func make(_ text: String, maxBytes: Int = maxBytes) -> String? {
        guard var cleaned = MetadataText.clean(text, maxLength: maxBytes) else { return nil }
        cleaned = cleaned.replacingSlashes
        if cleaned.utf8.count > maxBytes {
            var cut = ""
            for character in cleaned {
                if cut.utf8.count + character.utf8.count > maxBytes - 3 { break }
                cut.append(character)
            }
            cleaned = cut.trimmingSpaces + "…"
        }
        if cleaned == "." || cleaned == ".." { return nil }
        return cleaned
    }
}

extension String {
    /// `/` (and the backslash some tools treat alike) as `-`: a name, never a path.
    var replacingSlashes: String {
        String(String.UnicodeScalarView(unicodeScalars.map { $0 == "/" || $0 == "\\" ? "-" : $0 }))
    }
}
