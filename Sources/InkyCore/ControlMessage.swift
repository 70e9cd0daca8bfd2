import Foundation

/// What `inkyfs vault unlock/lock/status` asks a running mount over its control socket.
/// A password never travels inside this JSON: it follows `.unlock` as one raw data frame, so
/// the daemon can copy it into locked memory and wipe the receive buffer.
public enum ControlRequest: Codable, Sendable, Equatable {
    case status
    case unlock
    /// `unlock`, accepting a manifest older than the newest one recorded (a restored backup).
    case unlockAcceptingRollback
    case lock
    /// What the daemon holds of the vault (cached pages, live key buffers), for tests that
    /// prove a lock left nothing behind. Says nothing about content.
    case debug

    /// The requests a password frame follows.
    public var carriesPassword: Bool { self == .unlock || self == .unlockAcceptingRollback }
}

/// The daemon's answer: whether it worked, and a line for the person who asked.
public struct ControlReply: Codable, Sendable, Equatable {
    public enum Outcome: String, Codable, Sendable {
        /// `throttled`: an unlock refused unread because wrong passwords came just before;
        /// `refused`: the asking process is not the mounting user.
        case ok, wrongPassword, throttled, refused, failed
    }

    public var outcome: Outcome
    public var message: String
    /// The mountpoint that answered, so `unlock` without a mountpoint can say which one it found.
    public var mountpoint: String
    /// The library it serves: where `vault remove` puts comics by default.
    public var library: String?
    /// For `wrongPassword` and `throttled`: seconds before the next unlock attempt is heard.
    public var retryAfter: Double?
    /// Whether the mount's vault is unlocked after this request, for the daemon's own replies
    /// (the socket's refusals cannot tell): what `vault status` and `add` read, not the message.
    public var vaultUnlocked: Bool?
    /// What `inkyfs status` shows of the daemon that answered: its pid, the mount settings that
    /// differ from the defaults, and in how many seconds the unlocked vault locks itself
    /// (nil: locked, never, or not while one of its files is open).
    public var pid: Int32?
    public var settings: [String]?
    public var vaultLocksIn: Double?
    /// The vault folder the mount shows (`--vault DIR`), so a vault command can tell whether the
    /// vault it is about to unlock itself is the one this mount holds unlocked.
    public var vaultDirectory: String?

    public init(outcome: Outcome, message: String, mountpoint: String, library: String? = nil, retryAfter: Double? = nil) {
        self.outcome = outcome
        self.message = message
        self.mountpoint = mountpoint
        self.library = library
        self.retryAfter = retryAfter
    }

    /// Longest request frame: a request is a few bytes of JSON.
    public static let maxRequestLength = 1024
    /// Longest password frame.
    public static let maxPasswordLength = 4096

    /// Parses a request frame; nil for anything that is not exactly one known request.
    public static func parseRequest(_ frame: [UInt8]) -> ControlRequest? {
        guard frame.count <= maxRequestLength else { return nil }
        return try? JSONDecoder().decode(ControlRequest.self, from: Data(frame))
    }
}
