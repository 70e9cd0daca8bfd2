import ArgumentParser
import Foundation
import InkyCommandLine
import InkyCore
import InkyFUSE
import InkyStore
import InkyVault
import InkyWorker

struct DoctorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check what inkyfs needs from this machine, one line each, with the fix for what fails.",
        discussion: """
            Checks /dev/fuse, fusermount3 and its setuid bit, user_allow_other in /etc/fuse.conf (when \
            -o allow_other is given), the worker executable (inkyfs-worker) and the libarchive, libunarr and MuPDF \
            it runs, the executable `inkyfs serve` becomes (inkyfs-serve), the libfuse, OpenSSL and SQLite in use, the \
            state and vault folders, and inkyfs mounts whose daemon died. Exits 1 when a check failed.
            """
    )

    @Flag(help: "Print JSON: { ok, checks: [ { name, status, detail, fix } ] } (docs/json-output.md).")
    var json = false

    @Option(name: .customShort("o"), help: ArgumentHelp("The mount options you plan to use (allow_other is checked against /etc/fuse.conf).",
                                                        valueName: "options"))
    var mountOptions: [String] = []

    @OptionGroup var stateOptions: StateOptions

    @Option(help: ArgumentHelp("The vault folder. Default: $XDG_DATA_HOME/inkyfs/vault.", valueName: "dir"))
    var vault: String?

    struct Report: Encodable {
        var ok: Bool
        var checks: [HealthCheck]
    }

    func run() throws {
        let requested = try MountOptionList(mountOptions).fuse
        let checks = FUSEHealth.checks(allowOther: requested.contains("allow_other") || requested.contains("allow_root"),
                                       environment: Self.fuseEnvironment())
            + libraryChecks()
            + [DirectoryHealth.writable("state", (stateOptions.databasePath as NSString).deletingLastPathComponent,
                                        purpose: "logs, index, reading progress"),
               DirectoryHealth.privateFolder("vault", VaultOptions.directory(vault), missing: "no vault yet (inkyfs vault init creates one)",
                                             subfolders: ["objects", "orphans"])]
        let ok = !checks.contains { $0.status == .failed }
        if json {
            try JSONOutput.print(Report(ok: ok, checks: checks))
        } else {
            for check in checks { print(Self.line(check)) }
        }
        if !ok { throw ExitCode(ExitStatus.failed.rawValue) }
    }

    /// "ok       dev-fuse     /dev/fuse (…) opens read-write"; a failure ends with its fix.
    static func line(_ check: HealthCheck) -> String {
        let status = ["ok": "ok", "warning": "WARNING", "failed": "FAILED"][check.status.rawValue]!
        let fix = check.fix.map { "  fix: \($0)" } ?? ""
        return status.padding(toLength: 9, withPad: " ", startingAt: 0) + check.name.padding(toLength: 13, withPad: " ", startingAt: 0)
            + check.detail + fix
    }

    private func libraryChecks() -> [HealthCheck] {
        workerChecks() + [serveCheck(), HealthCheck("openssl", .ok, OpenSSLVersion.version), HealthCheck("sqlite", .ok, SQLiteVersion.version)]
    }

    /// The worker executable runs and names its parsers' versions (it alone maps them).
    private func workerChecks() -> [HealthCheck] {
        let worker = HelperExecutable.worker
        let path = worker.path
        guard let data = Self.output(of: path, ["versions"]), let versions = try? JSONDecoder().decode([String: String].self, from: data) else {
            let fix = "reinstall inkyfs: it needs \(worker.name) at \(worker.candidates.joined(separator: " or "))"
            return [HealthCheck("worker", .failed, "\(path) does not run", fix: fix)]
                + ["libarchive", "libunarr", "mupdf"].map { HealthCheck($0, .failed, "unknown: the worker does not run") }
        }
        return [HealthCheck("worker", .ok, path)]
            + ["libarchive", "libunarr", "mupdf"].map { HealthCheck($0, .ok, versions[$0] ?? "unknown") }
    }

    /// The server executable runs and is of this release: `inkyfs serve` becomes it with the
    /// options checked here, which another release's could read otherwise.
    private func serveCheck() -> HealthCheck {
        let server = HelperExecutable.serve
        let path = server.path
        let fix = "reinstall inkyfs: `inkyfs serve` needs \(server.name) at \(server.candidates.joined(separator: " or "))"
        guard let data = Self.output(of: path, ["--version"]) else { return HealthCheck("serve", .failed, "\(path) does not run", fix: fix) }
        let version = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard version == "\(server.name) \(InkyfsRelease.number)" else {
            return HealthCheck("serve", .failed, "\(path) is \(version), not of inkyfs \(InkyfsRelease.number)", fix: fix)
        }
        return HealthCheck("serve", .ok, path)
    }

    /// What `executable` prints on stdout, when it runs and exits 0.
    private static func output(of executable: String, _ arguments: [String]) -> Data? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return process.terminationStatus == 0 ? data : nil
    }

    /// Test hooks, in debug builds only: a test simulates a machine without /dev/fuse or with
    /// its own fuse.conf.
    private static func fuseEnvironment() -> FUSEHealth.Environment {
        var environment = FUSEHealth.Environment()
        #if DEBUG
        let variables = ProcessInfo.processInfo.environment
        if let device = variables["INKYFS_DOCTOR_DEV_FUSE"] { environment.fuseDevice = device }
        if let conf = variables["INKYFS_DOCTOR_FUSE_CONF"] { environment.fuseConf = conf }
        #endif
        return environment
    }
}
