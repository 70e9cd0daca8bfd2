internal import CUnarr
import Foundation
import InkyCore

/// The libunarr this process runs against. unarr 1.0 has no version call (`ar_get_version`
/// came later), so the version is read from the file the loader mapped: libunarr.so.1.0.1
/// is 1.0.1. The API level of the headers we were built with stands in if that fails.
enum UnarrVersion {
    static var version: String {
        if let mapped = mappedLibrary(), let number = mapped.components(separatedBy: ".so.").last, number.first?.isNumber == true {
            return number
        }
        return "API \(UNARR_API_VERSION)"
    }

    /// The real file name of the mapped libunarr (symlinks resolved), e.g. "libunarr.so.1.0.1".
    private static func mappedLibrary() -> String? {
        guard let maps = ProcFile.read("/proc/self/maps"),
              let line = maps.split(separator: "\n").first(where: { $0.contains("/libunarr.so") }),
              let slash = line.firstIndex(of: "/") else { return nil }
        let path = String(line[slash...])
        return (URL(fileURLWithPath: path).resolvingSymlinksInPath().path as NSString).lastPathComponent
    }
}
