import ArgumentParser
import Foundation
import InkyCommandLine
import InkyCore
import InkyDaemon
import InkyLibrary

struct MountCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mount",
        abstract: "Mount a comic library: every comic becomes a folder of its pages.",
        discussion: """
            Returns once the mount answers; the daemon keeps running in the background and logs to \
            $XDG_STATE_HOME/inkyfs/ (~/.local/state/inkyfs/). Unmount with `inkyfs unmount MOUNTPOINT` \
            or `fusermount3 -u MOUNTPOINT`.

            Comic archives appear as directories named like the archive without its extension, holding \
            001.jpg, 002.png, ... in reading order. A comic that cannot be read holds only ERROR.txt saying why. \
            The mount is read-only but for one write: rm of a link in Continue Reading/ forgets that comic \
            (as `inkyfs progress forget` does). --read-only (-o ro) mounts it read-only in the kernel, that \
            write included; so does --no-continue, which leaves nothing to remove.

            Examples:
              inkyfs mount ~/Comics ~/mnt
              inkyfs mount --foreground --cache-size 512M ~/Comics ~/mnt
              inkyfs mount -o allow_other ~/Comics /srv/comics     (needs user_allow_other in /etc/fuse.conf unless root)

            Without -o allow_other no other user can even look at the mount. With it, others read what \
            the library's own owners and modes let them read, never more (inkyfs never follows a link in \
            the library); the unlocked vault (0500/0400) and Continue Reading (0700) stay yours unless \
            --vault-allow-other is given for the vault.
            """
    )

    @Argument(help: "The library folder, or one comic file.")
    var library: String

    @Argument(help: "An empty directory to mount on.")
    var mountpoint: String

    @Option(name: .customLong("as"), help: ArgumentHelp(
        "How comics appear: 'folders' (a folder of page images each) or 'cbz' (one NAME.cbz file each, a ZIP of the same "
            + "pages stored uncompressed and ComicInfo.xml, made on the fly whatever the comic's format, for readers that only "
            + "take CBZ; a comic that cannot be read is NAME.cbz.error.txt saying why). -o as=cbz in fstab.",
        valueName: "folders|cbz"))
    var comicsAs: ComicShape = .folders

    @Flag(help: "Stay attached and log to stderr instead of daemonizing.")
    var foreground = false

    @Option(name: .customShort("o"), help: ArgumentHelp(
        "Mount options, comma-separated: FUSE ones (allow_other, nonempty, ...) and inkyfs settings "
            + "(any option below by its name with _ for -: cache_size=512M, as=cbz, views=series,arcs; a flag as name=1 or "
            + "name=0: grayscale=1, covers=0), as /etc/fstab passes them.",
        valueName: "options"))
    var fuseOptions: [String] = []

    @Option(help: ArgumentHelp("Memory for decoded pages, across all comics, e.g. 512M. (default: 256M)", valueName: "size"), transform: parseSize)
    var cacheSize: Int64 = 256 << 20

    @Option(help: "Pages kept on each side of the page being read.")
    var window: Int = 5

    @Option(help: "Pages read ahead of the page being read.")
    var prefetch: Int = 5

    @Option(help: "Archive-parsing worker processes.")
    var workers: Int = 4

    @Option(help: ArgumentHelp("Seconds a worker may make no progress before it is killed.", valueName: "seconds"))
    var workerTimeout: Double = 15

    @Option(help: ArgumentHelp("Seconds the kernel may keep names and attributes of folders and comics: far fewer requests "
                               + "(ls -lR, file managers); a change on disk shows when the library watcher tells the kernel, "
                               + "about 0.3 s later, or after this long at most. 0: every path walk asks inkyfs.",
                               valueName: "seconds"))
    var treeTimeout: Double = 10

    @Flag(help: ArgumentHelp("List comics only when they are first opened. By default, after mounting a library folder, "
                               + "every comic the index does not know yet is listed in the background (headers only, in "
                               + "parallel workers, in the order ls -R walks), so a first browse of the library finds it "
                               + "ready; -o list_ahead=0 in fstab."))
    var noListAhead = false

    @Flag(help: ArgumentHelp("No folder.jpg covers nor .directory files in the folder view; -o covers=0 in fstab."))
    var noCovers = false

    @Option(help: ArgumentHelp("Disk space for covers under $XDG_CACHE_HOME/inkyfs/covers, oldest used dropped first, e.g. 500M; "
                               + "-o cover_cache_size= in fstab. (default: 500M)", valueName: "size"), transform: parseSize)
    var coverCacheSize: Int64 = 500 << 20

    @Option(help: ArgumentHelp("Disk space for converted pages (--pages jpeg, --fit, --grayscale, --device) under "
                               + "$XDG_CACHE_HOME/inkyfs/pages, so a page is converted once, not at every mount, and for the "
                               + "last page read and the \(ResumePages.defaultAhead) after it of each solid comic (7z, solid RAR) in "
                               + "progress, so it resumes at once after a remount instead of decoding from its start; oldest used "
                               + "dropped first, e.g. 4G; 0 keeps none. Vault pages are never kept. -o page_cache_size= in fstab. (default: 2G)",
                               valueName: "size"), transform: parseCacheSize)
    var pageCacheSize: Int64 = 2 << 30

    @Flag(help: "Clear a stale mount left on MOUNTPOINT by a daemon that died.")
    var force = false

    @Flag(help: ArgumentHelp("Mount read-only in the kernel (mount and statvfs say ro): rm in Continue Reading/ is refused "
                               + "too. Without it, the daemon refuses every write but that one itself. -o ro in fstab."))
    var readOnly = false

    @Flag(help: "Do not record reading progress.")
    var noProgress = false

    @Option(help: "Name of the virtual folder of comics in progress.")
    var continueName = "Continue Reading"

    @Flag(help: "Hide the folder of comics in progress; the mount is then read-only in the kernel, as with --read-only.")
    var noContinue = false

    @Option(help: ArgumentHelp("Folders of links by what the comics are, from their ComicInfo.xml (else their file names): "
                               + "By Series, By Publisher, Story Arcs, Reading Lists, Recently Added; each shows only with "
                               + "something in it. A comma-separated list of series, publishers, arcs, lists, recent; all, "
                               + "the default; or none. They are read from the index on demand: they keep in memory their "
                               + "folders' names and the folders in use, not the library's metadata.",
                               valueName: "list"))
    var views = "all"

    @Option(help: ArgumentHelp("A folder of ComicRack reading lists (.cbl) shown in Reading Lists/, besides those in the library.",
                               valueName: "dir"))
    var readingLists: String?

    @Option(help: ArgumentHelp("The vault that `inkyfs vault unlock` shows here. Default: $XDG_DATA_HOME/inkyfs/vault.", valueName: "dir"))
    var vault: String?

    @Option(help: "Name of the unlocked vault's folder.")
    var vaultName = "Vault"

    @Flag(help: ArgumentHelp("Let other users read the unlocked vault when mounted with -o allow_other. "
                                + "Without it the vault's folders are mode 0500 and its pages 0400, owned by you, whoever else sees the mount."))
    var vaultAllowOther = false

    @Option(help: ArgumentHelp("Lock the vault after this long without use, e.g. 5m, 90s, 1h; 0 never. Never while a vault file is open. (default: 15m)",
                               valueName: "duration"), transform: parseDuration)
    var vaultIdle: Double = 15 * 60

    @OptionGroup var stateOptions: StateOptions
    @OptionGroup var limitOptions: LimitOptions
    @OptionGroup var pageOptions: PageOptions

    @Option(help: .hidden)
    var readyFd: Int32?

    /// The plan the launcher handed over on this descriptor (`MountPlanCoding`), read before any
    /// parsing; parsed only when the daemon could not read that plan.
    @Option(help: .hidden)
    var planFd: Int32?

    mutating func validate() throws {
        // Settings given in -o (the fstab way) arrive as their flags (`MountOptionList.expanding`);
        // one left here came past that step and would be lost.
        let list = try MountOptionList(fuseOptions)
        guard list.flags.isEmpty else {
            throw ValidationError("-o \(list.flags.joined(separator: " ")): give inkyfs settings as flags here")
        }
        _ = try MountViews.parse(views)
        try pageOptions.validate()
        try limitOptions.validate()
        guard window >= 0, prefetch >= 0 else { throw ValidationError("--window and --prefetch must be 0 or more") }
        guard workers >= 1 else { throw ValidationError("--workers must be at least 1") }
        guard treeTimeout >= 0 else { throw ValidationError("--tree-timeout must be 0 or more") }
    }

    func run() throws {
        let plan = try self.plan()
        guard plan.check(readyFd: readyFd) else { throw ExitCode(ExitStatus.refused.rawValue) }
        if !foreground && readyFd == nil {
            // The daemon gets the plan as well as the command line, and so parses nothing.
            if let failure = DaemonLauncher.launch(arguments: Array(CommandLine.arguments.dropFirst()),
                                                   handing: MountPlanCoding.encode(plan),
                                                   logPath: DaemonLauncher.logPath(for: plan.mountpoint)) {
                FileHandle.standardError.write(Data((failure + "\n").utf8))
                throw ExitCode(ExitStatus.mountFailed.rawValue)
            }
            return
        }
        DaemonLauncher.abandonEarly() // none is started for these, but a guess is a guess
        plan.serve(readiness: ReadyChannel(descriptor: readyFd))
        throw ExitCode(ExitStatus.mountFailed.rawValue)
    }

    /// Whether `arguments`, unparsed, look like a plain background mount (`mount` or mount.fuse3's
    /// form without it; no --foreground, help, version or the daemon's own options), whose daemon
    /// may start before they are parsed (`DaemonLauncher.startEarly`). The parse decides: a daemon
    /// started for a command line that is none is killed as the command exits.
    static func isPlainBackgroundMount(_ arguments: [String], commands: [String]) -> Bool {
        guard let first = arguments.first,
              first == _commandName || !(commands.contains(first) || first == "help" || first.hasPrefix("-")) else { return false }
        let others: Set<String> = ["--foreground", "-h", "--help", "-help", "--version", "--ready-fd", "--plan-fd"]
        return !arguments.contains { others.contains($0) || $0.hasPrefix("--experimental") || $0.hasPrefix("--generate")
            || $0.hasPrefix("--ready-fd=") || $0.hasPrefix("--plan-fd=") }
    }

    /// What this command line asks the daemon to do, resolved: paths made absolute, `-o` sorted.
    func plan() throws -> MountPlan {
        let list = try MountOptionList(fuseOptions)
        var limits = limitOptions.limits
        limits.rendering.conversion = pageOptions.conversion
        // `ro` reaches libfuse, which mounts with MS_RDONLY: the kernel then refuses every write.
        // Without Continue Reading there is no write left to let through, and a mount that is
        // not `ro` costs a GETATTR per folder listed (atime): it is `ro` then too.
        let kernelReadOnly = readOnly || noContinue
        return MountPlan(
            library: absolutePath(library), mountpoint: absolutePath(mountpoint), fuseOptions: list.fuse + (kernelReadOnly ? ["ro"] : []),
            allowNonEmpty: list.allowNonEmpty, force: force, cacheSize: cacheSize, window: window, prefetch: prefetch,
            workers: workers, workerTimeout: workerTimeout, treeTimeout: treeTimeout, listAhead: !noListAhead, covers: !noCovers,
            coverCacheSize: coverCacheSize, pageCacheSize: pageCacheSize, recordProgress: !noProgress,
            continueName: noContinue ? nil : continueName, vaultName: vaultName, vaultAllowOther: vaultAllowOther,
            views: (try? MountViews.parse(views)) ?? [], readingLists: readingLists.map(absolutePath), comicsAsCBZ: comicsAs == .cbz,
            limits: limits, statePath: stateOptions.databasePath, vaultDirectory: VaultOptions.directory(vault), vaultIdle: vaultIdle,
            settings: MountSettings.differing(self, fuseOptions: list.fuse))
    }
}

/// "15m", "90s", "1h", "0" (seconds when no unit).
func parseDuration(_ text: String) throws -> Double {
    let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600]
    let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
    if let unit = trimmed.last, let scale = units[unit], let value = Double(trimmed.dropLast()), value >= 0 { return value * scale }
    if let value = Double(trimmed), value >= 0 { return value }
    throw ValidationError("'\(text)' is not a duration: use 15m, 90s, 1h or 0")
}

/// How `mount --as` shows each comic.
enum ComicShape: String, ExpressibleByArgument, CaseIterable {
    case folders, cbz
}
