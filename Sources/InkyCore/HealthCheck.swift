/// One finding of `inkyfs doctor`: what was checked, how it stands, and for anything that is
/// not fine the command that fixes it, because "fuse: device not found" alone helps nobody.
public struct HealthCheck: Codable, Sendable, Equatable {
    public enum Status: String, Codable, Sendable {
        /// Fine.
        case ok
        /// Works, but not for everyone or not in every setup (e.g. fusermount3 not setuid, as root).
        case warning
        /// Mounting (or the vault, or the state database) will not work until fixed.
        case failed
    }

    /// A stable key for scripts: "dev-fuse", "fusermount3", "libfuse", …
    public var name: String
    public var status: Status
    public var detail: String
    /// Set for every check that is not `ok`.
    public var fix: String?

    public init(_ name: String, _ status: Status, _ detail: String, fix: String? = nil) {
        self.name = name
        self.status = status
        self.detail = detail
        self.fix = fix
    }
}
