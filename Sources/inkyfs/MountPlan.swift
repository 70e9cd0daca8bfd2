import Foundation
import InkyCommandLine
import InkyCore
import InkyDaemon
import InkyFUSE
import InkyLibrary
import InkyWorker
import Logging

/// A mount's settings once the command line is parsed, checked and resolved (absolute paths, `-o`
/// sorted into libfuse's options and inkyfs's settings): all the daemon needs to mount. The command
/// makes it (`MountCommand.plan`); a background mount hands it to the daemon it starts
/// (`MountPlanCoding`), which then runs no argument parser: parsing `mount`'s fifty options costs
/// each process about 6 ms of CPU (the parser's reflection looks every option's type up in every
/// conformance record of the executable), and the daemon's start is on the mount's critical path.
struct MountPlan: Equatable {
    var library: String
    var mountpoint: String
    /// What libfuse gets: `nosuid,nodev`, the FUSE options of `-o`, and `ro` for `--read-only`.
    var fuseOptions: [String]
    var allowNonEmpty = false
    var force = false
    var cacheSize: Int64 = 256 << 20
    var window = 5
    var prefetch = 5
    var workers = 4
    var workerTimeout: Double = 15
    var treeTimeout: Double = 10
    var listAhead = true
    var covers = true
    var coverCacheSize: Int64 = 500 << 20
    var pageCacheSize: Int64 = 2 << 30
    var recordProgress = true
    /// nil: `--no-continue`.
    var continueName: String? = "Continue Reading"
    var vaultName = "Vault"
    var vaultAllowOther = false
    var views: [MetadataViewKind] = MetadataViewKind.allCases
    var readingLists: String?
    var comicsAsCBZ = false
    /// The command's limits, its page conversion in `rendering.conversion`.
    var limits = ComicLimits.default
    var statePath: String
    var vaultDirectory: String
    var vaultIdle: Double = 15 * 60
    /// The settings that differ from the defaults, as `inkyfs status` shows them (`MountSettings`).
    var settings: [String] = []

    /// Names of the virtual folders at the root, which the library must not hold too.
    var reservedNames: [(name: String, option: String)] {
        var names: [(name: String, option: String)] = []
        if let continueName { names.append((continueName, "--continue-name NAME, or hide it with --no-continue")) }
        names.append((vaultName, "--vault-name NAME"))
        return names
    }

    /// The checks made before mounting (`MountPreflight`), in the command and again in the daemon
    /// it starts (a moment later: the mountpoint may have changed). A refusal goes to the launcher
    /// through `readyFd` when there is one, else to stderr; it ends the command with `refused`.
    func check(readyFd: Int32?) -> Bool {
        do throws(MountPreflight.Problem) {
            try MountPreflight.check(library: library, mountpoint: mountpoint, allowNonEmpty: allowNonEmpty, force: force,
                                     reservedNames: reservedNames,
                                     daemonPID: { (try? ControlClient.send(.status, to: $0))?.pid },
                                     note: { FileHandle.standardError.write(Data("inkyfs: \($0)\n".utf8)) })
            return true
        } catch {
            ReadyChannel(descriptor: readyFd).fail("inkyfs: \(error)")
            return false
        }
    }

    /// Mounts and serves until unmounted (the process then ends with status 0); returns only when
    /// it could not mount, having told `readiness` why.
    func serve(readiness: ReadyChannel) {
        let unfit = MountDaemon.prepareProcess()
        let logger = Logger(label: "inkyfs")
        if let unfit { logger.warning("\(unfit)") }
        var configuration = MountDaemon.Configuration(
            library: library, mountpoint: mountpoint, fuseOptions: fuseOptions, mount: mountOptions,
            workers: WorkerPool.Configuration(maxWorkers: workers, timeout: workerTimeout),
            statePath: statePath, vaultDirectory: vaultDirectory)
        configuration.vaultIdleSeconds = vaultIdle
        configuration.settings = settings
        do throws(FUSESession.Failure) {
            try MountDaemon.run(configuration, log: { logger.write($0) }, warn: { message in
                logger.warning("\(message)")
                readiness.warn(message)
            }) {
                // The settings as applied, whether they came as flags or in -o (fstab, mount.fuse3).
                let changed = settings.isEmpty ? "" : "; not the defaults: " + settings.joined(separator: " ")
                logger.info("mounted \(library) on \(mountpoint) (cache \(ByteCountText.format(cacheSize)), window \(window), prefetch \(prefetch), workers \(workers))\(changed)")
                readiness.ready()
            }
        } catch {
            readiness.fail("inkyfs: \(error)")
        }
    }

    /// The library core's options; its caches' folders are opened here, in the daemon.
    private var mountOptions: MountOptions {
        var options = MountOptions(limits: limits, window: WindowPolicy(window: window, prefetch: prefetch), cacheBytes: Int(cacheSize))
        options.recordProgress = recordProgress
        options.continueReadingName = continueName
        options.vaultName = vaultName
        options.vaultAllowOther = vaultAllowOther
        options.listingParallelism = workers
        options.treeTimeout = treeTimeout
        options.listLibraryAhead = listAhead
        options.metadataViews = views
        options.readingListsDirectory = readingLists
        options.comicsAsCBZ = comicsAsCBZ
        options.covers = !covers || comicsAsCBZ ? nil : CoverCache(capacity: coverCacheSize)
        if pageCacheSize > 0 {
            // One folder and one cap for converted pages and the pages kept to resume solid comics.
            let pages = ConvertedPageCache(capacity: pageCacheSize)
            if limits.rendering.conversion.isActive { options.pageCache = pages }
            options.resumePages = recordProgress ? ResumePages(sharing: pages) : nil
        }
        return options
    }
}

extension MountPlan {
    /// The daemon's whole life when its plan was handed over: the checks, then the mount.
    func runDaemon() -> Never {
        guard check(readyFd: 3) else { exit(ExitStatus.refused.rawValue) }
        serve(readiness: ReadyChannel(descriptor: 3))
        exit(ExitStatus.mountFailed.rawValue)
    }
}
