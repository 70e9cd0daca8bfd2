import ArgumentParser
import InkyCore

/// `-o` as mount.fuse3 and /etc/fstab pass it: FUSE options for libfuse, inkyfs's own settings
/// (`cache_size=512M,window=5,prefetch=5,workers=4,worker_timeout=15`), and words that belong to
/// mount(8) and must not reach libfuse. The mount stays read-only, nosuid and nodev whatever
/// the line says (`rw`, `dev`, `suid` are dropped).
struct MountOptionList {
    var fuse: [String] = []
    var allowNonEmpty = false
    var settings: [String: String] = [:]

    static let ownSettings: Set<String> = ["cache_size", "window", "prefetch", "workers", "worker_timeout", "pdf_height", "pdf_dpi",
                                           "tree_timeout", "list_ahead", "views", "pages", "fit", "grayscale", "device", "as",
                                           "split_spreads", "rtl", "crop_margins", "strips",
                                           "covers", "cover_cache_size", "page_cache_size"]
    static let mountWords: Set<String> = ["defaults", "nofail", "auto", "noauto", "user", "users", "nouser", "owner",
                                          "group", "_netdev", "rw", "ro", "dev", "suid", "exec", "noexec", "nosuid", "nodev"]

    init(_ arguments: [String]) throws {
        var previousKey = ""
        for option in arguments.flatMap({ $0.split(separator: ",").map(String.init) }) where !option.isEmpty {
            let key = String(option.split(separator: "=", maxSplits: 1).first ?? "")
            defer { previousKey = key }
            if previousKey == "views", let views = settings["views"], MountViews.names.contains(option) {
                // `views=series,arcs`: the list's commas are also -o's; a view's name is no FUSE option.
                settings["views"] = views + "," + option
                previousKey = "views"
                continue
            }
            if option == "nonempty" {
                allowNonEmpty = true // fuse3 mounts over anything; refusing is our check
            } else if Self.ownSettings.contains(key) {
                guard let value = option.split(separator: "=", maxSplits: 1).dropFirst().first else {
                    throw ValidationError("-o \(key) needs a value, like \(key)=5")
                }
                settings[key] = String(value)
            } else if !Self.mountWords.contains(option) && !option.hasPrefix("x-") && !option.hasPrefix("comment=") {
                fuse.append(option)
            }
        }
        fuse = ["nosuid", "nodev"] + fuse
    }
}
