import Foundation
import InkyCore

/// The settings of a mount that differ from the defaults, as flags, for `inkyfs status`: what a
/// person needs to tell two mounts apart or to see that an fstab line took effect. Settings given
/// in -o are already in the command's fields (`MountCommand.validate`).
enum MountSettings {
    static func differing(_ command: MountCommand, fuseOptions: [String]) -> [String] {
        guard let base = try? MountCommand.parse(["LIBRARY", "MOUNTPOINT"]) else { return [] }
        var found: [String] = []
        /// Compared as text: every setting prints the way the flag takes it.
        func note(_ flag: String, _ value: Any?, _ standard: Any?) {
            func shown(_ any: Any?) -> String {
                guard let any else { return "" }
                if let number = any as? Double, number == number.rounded() { return String(Int(number)) }
                return "\(any)"
            }
            let text = shown(value), standardText = shown(standard)
            guard text != standardText else { return }
            found.append(text == "true" ? flag : text == "false" ? "--no-" + flag.dropFirst(2) : "\(flag) \(text)")
        }
        func size(_ bytes: Int64) -> String { ByteCountText.format(bytes).replacingOccurrences(of: " ", with: "") }
        note("--as", command.comicsAs.rawValue, base.comicsAs.rawValue)
        note("--cache-size", size(command.cacheSize), size(base.cacheSize))
        note("--window", command.window, base.window)
        note("--prefetch", command.prefetch, base.prefetch)
        note("--workers", command.workers, base.workers)
        note("--worker-timeout", command.workerTimeout, base.workerTimeout)
        note("--tree-timeout", command.treeTimeout, base.treeTimeout)
        note("--no-list-ahead", command.noListAhead ? "true" : nil, nil)
        note("--no-covers", command.noCovers ? "true" : nil, nil)
        note("--cover-cache-size", size(command.coverCacheSize), size(base.coverCacheSize))
        note("--page-cache-size", size(command.pageCacheSize), size(base.pageCacheSize))
        note("--read-only", command.readOnly ? "true" : nil, nil)
        note("--no-progress", command.noProgress ? "true" : nil, nil)
        note("--continue-name", command.continueName, base.continueName)
        note("--no-continue", command.noContinue ? "true" : nil, nil)
        note("--views", command.views, base.views)
        note("--reading-lists", command.readingLists, nil)
        note("--vault", command.vault, nil)
        note("--vault-name", command.vaultName, base.vaultName)
        note("--vault-allow-other", command.vaultAllowOther ? "true" : nil, nil)
        note("--vault-idle", command.vaultIdle, base.vaultIdle)
        note("--state", command.stateOptions.state, nil)
        let pages = command.pageOptions, standardPages = base.pageOptions
        note("--pages", pages.pages.rawValue, standardPages.pages.rawValue)
        note("--fit", pages.fit.map { "\($0.width)x\($0.height)" }, nil)
        note("--grayscale", pages.grayscale ? "true" : nil, nil)
        note("--split-spreads", pages.splitSpreads, nil)
        note("--rtl", pages.rtl ? "true" : nil, nil)
        note("--crop-margins", pages.cropMargins, nil)
        note("--strips", pages.strips, nil)
        note("--device", pages.device, nil)
        let limits = command.limitOptions, standardLimits = base.limitOptions
        note("--max-pages", limits.maxPages, standardLimits.maxPages)
        note("--max-page-size", size(limits.maxPageSize), size(standardLimits.maxPageSize))
        note("--max-comic-size", size(limits.maxComicSize), size(standardLimits.maxComicSize))
        note("--pdf-height", limits.pdfHeight, standardLimits.pdfHeight)
        note("--pdf-dpi", limits.pdfDpi, nil)
        let fuse = fuseOptions.filter { $0 != "nosuid" && $0 != "nodev" }
        if !fuse.isEmpty { found.append("-o " + fuse.joined(separator: ",")) }
        return found
    }
}
