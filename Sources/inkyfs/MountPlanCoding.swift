import Foundation
import InkyCommandLine
import InkyCore
import InkyDaemon
import InkyLibrary

/// A `MountPlan` as bytes, from the command to the daemon it starts (`DaemonLauncher`, on an
/// inherited pipe). Both are the same executable, but the file may have been replaced in
/// between (an upgrade): the bytes begin with their format and the release, and a daemon that
/// cannot read them parses its command line, which it gets whole either way.
enum MountPlanCoding {
    /// Changed whenever a field is added, removed or reordered.
    static let format: UInt64 = 1
    static let magic = "inkyfs mount plan"

    static func encode(_ plan: MountPlan) -> [UInt8] {
        var out = BinaryWriter()
        out.string(magic)
        out.varint(format)
        out.string(InkyfsRelease.number)
        out.string(plan.library)
        out.string(plan.mountpoint)
        strings(plan.fuseOptions, &out)
        flag(plan.allowNonEmpty, &out)
        flag(plan.force, &out)
        out.signed(plan.cacheSize)
        out.signed(Int64(plan.window))
        out.signed(Int64(plan.prefetch))
        out.signed(Int64(plan.workers))
        out.fixed64(plan.workerTimeout.bitPattern)
        out.fixed64(plan.treeTimeout.bitPattern)
        flag(plan.listAhead, &out)
        flag(plan.covers, &out)
        out.signed(plan.coverCacheSize)
        out.signed(plan.pageCacheSize)
        flag(plan.recordProgress, &out)
        out.optional(plan.continueName) { $0.string($1) }
        out.string(plan.vaultName)
        flag(plan.vaultAllowOther, &out)
        strings(plan.views.map(\.rawValue), &out)
        out.optional(plan.readingLists) { $0.string($1) }
        flag(plan.comicsAsCBZ, &out)
        let limits = plan.limits, conversion = limits.rendering.conversion
        out.signed(Int64(limits.maxPages))
        out.signed(limits.maxPageBytes)
        out.signed(limits.maxComicBytes)
        out.signed(Int64(limits.rendering.height))
        out.optional(limits.rendering.dpi) { $0.signed(Int64($1)) }
        out.string(conversion.format.rawValue)
        out.optional(conversion.fitWidth) { $0.signed(Int64($1)) }
        out.optional(conversion.fitHeight) { $0.signed(Int64($1)) }
        flag(conversion.grayscale, &out)
        flag(conversion.splitSpreads, &out)
        flag(conversion.rightToLeft, &out)
        flag(conversion.cropMargins, &out)
        flag(conversion.strips, &out)
        out.string(plan.statePath)
        out.string(plan.vaultDirectory)
        out.fixed64(plan.vaultIdle.bitPattern)
        strings(plan.settings, &out)
        return out.bytes
    }

    /// The plan in `bytes`; nil when they are not one this executable wrote (another format or
    /// release, or cut short).
    static func decode(_ bytes: [UInt8]) -> MountPlan? {
        var input = BinaryReader(bytes)
        guard input.string() == magic, input.varint() == format, input.string() == InkyfsRelease.number,
              let library = input.string(), let mountpoint = input.string(), let fuseOptions = strings(&input) else { return nil }
        var plan = MountPlan(library: library, mountpoint: mountpoint, fuseOptions: fuseOptions, statePath: "", vaultDirectory: "")
        guard let allowNonEmpty = flag(&input), let force = flag(&input), let cacheSize = input.signed(),
              let window = int(&input), let prefetch = int(&input), let workers = int(&input),
              let workerTimeout = input.fixed64(), let treeTimeout = input.fixed64(),
              let listAhead = flag(&input), let covers = flag(&input), let coverCacheSize = input.signed(),
              let pageCacheSize = input.signed(), let recordProgress = flag(&input),
              let continueName = input.optional({ $0.string() }), let vaultName = input.string(),
              let vaultAllowOther = flag(&input), let views = strings(&input), let readingLists = input.optional({ $0.string() }),
              let comicsAsCBZ = flag(&input) else { return nil }
        guard let maxPages = int(&input), let maxPageBytes = input.signed(), let maxComicBytes = input.signed(),
              let height = int(&input), let dpi = input.optional({ int(&$0) }),
              let pages = input.string().flatMap(PageConversion.Format.init(rawValue:)),
              let fitWidth = input.optional({ int(&$0) }), let fitHeight = input.optional({ int(&$0) }),
              let grayscale = flag(&input), let splitSpreads = flag(&input), let rightToLeft = flag(&input),
              let cropMargins = flag(&input), let strips = flag(&input) else { return nil }
        guard let statePath = input.string(), let vaultDirectory = input.string(), let vaultIdle = input.fixed64(),
              let settings = strings(&input), input.isAtEnd else { return nil }
        let kinds = views.compactMap(MetadataViewKind.init(rawValue:))
        guard kinds.count == views.count else { return nil }
        plan.allowNonEmpty = allowNonEmpty
        plan.force = force
        plan.cacheSize = cacheSize
        (plan.window, plan.prefetch, plan.workers) = (window, prefetch, workers)
        plan.workerTimeout = Double(bitPattern: workerTimeout)
        plan.treeTimeout = Double(bitPattern: treeTimeout)
        plan.listAhead = listAhead
        plan.covers = covers
        plan.coverCacheSize = coverCacheSize
        plan.pageCacheSize = pageCacheSize
        plan.recordProgress = recordProgress
        plan.continueName = continueName
        plan.vaultName = vaultName
        plan.vaultAllowOther = vaultAllowOther
        plan.views = kinds
        plan.readingLists = readingLists
        plan.comicsAsCBZ = comicsAsCBZ
        let conversion = PageConversion(format: pages, fitWidth: fitWidth, fitHeight: fitHeight, grayscale: grayscale,
                                        splitSpreads: splitSpreads, rightToLeft: rightToLeft, cropMargins: cropMargins, strips: strips)
        plan.limits = ComicLimits(maxPages: maxPages, maxPageBytes: maxPageBytes, maxComicBytes: maxComicBytes,
                                  rendering: PageRendering(height: height, dpi: dpi, conversion: conversion))
        plan.statePath = statePath
        plan.vaultDirectory = vaultDirectory
        plan.vaultIdle = Double(bitPattern: vaultIdle)
        plan.settings = settings
        return plan
    }

    private static func flag(_ value: Bool, _ out: inout BinaryWriter) { out.byte(value ? 1 : 0) }

    private static func flag(_ input: inout BinaryReader) -> Bool? {
        switch input.byte() {
        case 0: false
        case 1: true
        default: nil
        }
    }

    private static func int(_ input: inout BinaryReader) -> Int? { input.signed().map(Int.init(truncatingIfNeeded:)) }

    private static func strings(_ values: [String], _ out: inout BinaryWriter) {
        out.varint(UInt64(values.count))
        for value in values { out.string(value) }
    }

    private static func strings(_ input: inout BinaryReader) -> [String]? {
        guard let count = input.count() else { return nil }
        var values: [String] = []
        for _ in 0..<count {
            guard let value = input.string() else { return nil }
            values.append(value)
        }
        return values
    }
}

extension MountPlanCoding {
    /// The plan the launcher handed a daemon (the command line ends `--ready-fd 3 --plan-fd 4`),
    /// read and its descriptor closed; nil otherwise, or when it cannot be read. A daemon started
    /// early for a command that then mounted nothing ends here, silently.
    static func handedOver(_ arguments: [String]) -> MountPlan? {
        guard arguments.suffix(4) == ["--ready-fd", "3", "--plan-fd", "4"] else { return nil }
        switch DaemonHandover.receive(from: 4) {
        case .nothing?: exit(ExitStatus.ok.rawValue) // started early by a command that then mounted nothing
        case .plan(let bytes)?:
            let plan = decode(bytes)
            #if DEBUG
            // A debug build (the tests') takes no way around: a plan this executable wrote reads back.
            if plan == nil {
                ReadyChannel(descriptor: 3).fail("inkyfs: the plan handed over does not read back")
                exit(ExitStatus.mountFailed.rawValue)
            }
            #endif
            return plan
        case nil: return nil
        }
    }

    #if DEBUG
    /// A debug build (the tests') parses its command line too and refuses to mount when the plan
    /// handed over says anything else: every background mount of the test suite checks the coding.
    static func verify(_ plan: MountPlan, arguments: [String]) {
        // Without `--ready-fd 3 --plan-fd 4`, which a `--` in the line would make positional.
        let command = (try? MountOptionList.expanding(Array(arguments.dropLast(4)))).flatMap { try? Inkyfs.parseAsRoot($0) as? MountCommand }
        let parsed = try? command?.plan()
        guard parsed != plan else { return }
        ReadyChannel(descriptor: 3).fail("inkyfs: the plan handed over is not the command line's: \(plan), parsed \(String(describing: parsed))")
        exit(ExitStatus.mountFailed.rawValue)
    }
    #endif
}
