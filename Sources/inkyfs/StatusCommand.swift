import ArgumentParser
import Foundation
import InkyCommandLine
import InkyCore
import InkyDaemon
import InkyFUSE

struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show your running mounts, one line each: mountpoint, library, daemon pid, settings, vault.",
        discussion: """
            Each line: the mountpoint, the library, the daemon's pid, the vault (none, locked, or unlocked \
            and when it locks itself), and the mount's settings that differ from the defaults. A mount whose \
            daemon died is shown with the command that clears it. Exits 4 when none is running.

            Example:
              /home/me/mnt  /home/me/Comics  pid 4242  vault unlocked, locks itself in 14m 10s  --as cbz -o allow_other
            """
    )

    @Flag(help: "Print JSON: an array of { mountpoint, library, pid, settings: [..], vault: none|locked|unlocked, vaultLocksIn, alive }.")
    var json = false

    struct Mount: Encodable {
        var mountpoint: String
        var library: String
        var pid: Int32?
        var settings: [String]
        var vault: String
        /// Seconds until the unlocked vault locks itself; nil: locked, never, or a vault file is open.
        var vaultLocksIn: Double?
        var alive: Bool
    }

    func run() throws {
        let mounts = Self.mounts()
        if json {
            try JSONOutput.print(mounts)
        } else if mounts.isEmpty {
            print("no inkyfs mount of yours is running (mount one with: inkyfs mount LIBRARY MOUNTPOINT)")
        } else {
            for mount in mounts { print(Self.line(mount)) }
        }
        if mounts.isEmpty { throw ExitCode(ExitStatus.notMounted.rawValue) }
    }

    /// This user's mounts: each that answers on its control socket, and those the mount table
    /// lists as this user's that do not (a daemon that died, or one without a control socket).
    static func mounts() -> [Mount] {
        let answering = ControlClient.statuses().filter { $0.outcome == .ok }
        var found = answering.map { reply in
            Mount(mountpoint: reply.mountpoint, library: reply.library ?? "?", pid: reply.pid, settings: reply.settings ?? [],
                  vault: reply.message.hasPrefix("this mount has no vault") ? "none" : reply.vaultUnlocked == true ? "unlocked" : "locked",
                  vaultLocksIn: reply.vaultLocksIn, alive: true)
        }
        let known = Set(found.map { MountPreflight.resolved($0.mountpoint) })
        for mount in InkyfsMount.current() where mount.userID == getuid() && !known.contains(mount.mountpoint) {
            let alive = MountAnswer.of(mount.mountpoint) == .answering
            found.append(Mount(mountpoint: mount.mountpoint, library: mount.library, pid: nil, settings: [], vault: "unknown",
                               vaultLocksIn: nil, alive: alive))
        }
        return found.sorted { $0.mountpoint < $1.mountpoint }
    }

    static func line(_ mount: Mount) -> String {
        guard mount.alive else {
            return "\(mount.mountpoint)  \(mount.library)  daemon gone or not answering: clear it with \(MountAnswer.fix(for: mount.mountpoint))"
        }
        var parts = [mount.mountpoint, mount.library, mount.pid.map { "pid \($0)" } ?? "pid unknown (no control socket)"]
        switch mount.vault {
        case "unlocked": parts.append("vault unlocked" + (mount.vaultLocksIn.map { ", locks itself in \(duration($0))" } ?? ""))
        case "locked": parts.append("vault locked")
        case "none": parts.append("no vault")
        default: break
        }
        parts += mount.settings
        return parts.joined(separator: "  ")
    }

    /// "14m 10s", "45s", "1h 2m".
    static func duration(_ seconds: Double) -> String {
        let total = Int(seconds.rounded())
        if total >= 3600 { return "\(total / 3600)h \(total % 3600 / 60)m" }
        if total >= 60 { return "\(total / 60)m \(total % 60)s" }
        return "\(total)s"
    }
}
