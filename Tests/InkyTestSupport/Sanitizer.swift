import Foundation

/// Whether `scripts/dev/sanitize` runs the suite: a sanitizer's shadow memory and quarantine are
/// not the daemon's, and workers drop their address-space limit under one, so tests leave
/// out those bounds then and keep the rest of their assertions.
public enum Sanitizer {
    public static let isRunning = ProcessInfo.processInfo.environment["INKYFS_SANITIZER"] != nil
}
