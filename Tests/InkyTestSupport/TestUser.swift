import Foundation

/// A throwaway unprivileged user (useradd, no home, no login), for tests that read a mount as
/// "another local user". Needs root: `make()` is nil otherwise, and the test skips saying so.
/// `remove()` deletes the account again.
public struct TestUser {
    public let name: String

    public static func make() throws -> TestUser? {
        guard getuid() == 0 else { return nil }
        let name = "inkyt" + UUID().uuidString.prefix(8).lowercased()
        try ArchiveMaker.run("/usr/sbin/useradd", ["--no-create-home", "--shell", "/usr/sbin/nologin", "--user-group", name])
        return TestUser(name: name)
    }

    public func remove() {
        _ = try? ArchiveMaker.run("/usr/sbin/userdel", [name])
    }

    /// Runs `executable arguments…` as this user (runuser, no supplementary groups of root's).
    public func run(_ executable: String, _ arguments: [String]) throws -> CommandRunner.Result {
        try CommandRunner.capture("/usr/sbin/runuser", ["-u", name, "--", executable] + arguments)
    }

    /// Runs a shell command line as this user.
    public func shell(_ command: String) throws -> CommandRunner.Result {
        try run("/bin/sh", ["-c", command])
    }
}
