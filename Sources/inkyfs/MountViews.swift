import ArgumentParser
import InkyLibrary

/// `--views series,publishers,arcs,lists,recent`, `all` or `none` (`-o views=...`): which metadata
/// views the mount shows. `By Publisher/` links into `By Series/`, so asking for it brings that too.
enum MountViews {
    static let names = Set(MetadataViewKind.allCases.map(\.rawValue))

    static func parse(_ text: String) throws -> [MetadataViewKind] {
        if text == "none" { return [] }
        if text == "all" { return MetadataViewKind.allCases }
        var kinds: [MetadataViewKind] = []
        for word in text.split(separator: ",").map(String.init) {
            guard let kind = MetadataViewKind(rawValue: word) else {
                throw ValidationError("--views \(text): \(word) is not a view (series, publishers, arcs, lists, recent, all, or none)")
            }
            if !kinds.contains(kind) { kinds.append(kind) }
        }
        if kinds.contains(.publishers) && !kinds.contains(.series) { kinds.insert(.series, at: 0) }
        return MetadataViewKind.allCases.filter(kinds.contains)
    }
}
