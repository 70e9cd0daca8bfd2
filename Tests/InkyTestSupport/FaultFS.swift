import Foundation

/// A read-only passthrough FUSE filesystem that fails chosen reads with EIO
/// (`Tests/Tools/faultfs.c`, compiled once into `.cache/`): a library on a failing disk,
/// where the container offers no device-mapper error target.
public final class FaultFS {
    public let mountpoint: URL
    private let faults: URL
    private let process: Process

    /// Serves `source` read-only on `mountpoint` (a new folder of its own by default, made if
    /// missing); no read fails until `fail` is called.
    public init(source: URL, at mountpoint: URL? = nil) throws {
        // faultfs mounts through libfuse as inkyfs does: skipped, saying why, where inkyfs is.
        try MountedLibrary.skipUnlessFUSEOpens()
        let code = Corpus.packageRoot.appendingPathComponent("Tests/Tools/faultfs.c")
        let version = String(Digest.sha256Hex(try readFile(code.path)).prefix(12))
        let binary = Corpus.packageRoot.appendingPathComponent(".cache/faultfs-\(version)")
        if !FileManager.default.isExecutableFile(atPath: binary.path) {
            let flags = try ArchiveMaker.run("/usr/bin/pkg-config", ["--cflags", "--libs", "fuse3"])
                .split(whereSeparator: \.isWhitespace).map(String.init)
            try CacheEntry.make(binary) { part in _ = try ArchiveMaker.run("/usr/bin/cc", ["-Wall", "-O1", "-o", part.path, code.path] + flags) }
        }
        let mountpoint = mountpoint ?? ArchiveMaker.temporaryDirectory("faultfs")
        try FileManager.default.createDirectory(at: mountpoint, withIntermediateDirectories: true)
        self.mountpoint = mountpoint
        faults = FileManager.default.temporaryDirectory.appendingPathComponent("faults-\(UUID().uuidString)")
        FileManager.default.createFile(atPath: faults.path, contents: Data())
        process = Process()
        process.executableURL = binary
        process.arguments = [source.path, faults.path, mountpoint.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(10)
        while !MountedLibrary.isMounted(mountpoint.path) {
            guard process.isRunning, Date() < deadline else { throw ArchiveMaker.ToolFailure(command: "faultfs", status: 1, stderr: "did not mount") }
            usleep(20_000)
        }
    }

    deinit {
        _ = try? ArchiveMaker.run("/usr/bin/fusermount3", ["-u", "-z", mountpoint.path])
        _ = process.waitForExit()
        try? FileManager.default.removeItem(at: mountpoint)
        try? FileManager.default.removeItem(at: faults)
    }

    /// From now on reads of `name` overlapping bytes `range` fail with EIO (replacing earlier faults).
    public func fail(_ faults: [(name: String, range: Range<Int>)]) throws {
        try Data(faults.map { "\($0.name) \($0.range.lowerBound) \($0.range.upperBound)\n" }.joined().utf8).write(to: self.faults)
    }

    /// A healthy disk again.
    public func heal() throws { try fail([]) }
}
