import Foundation

extension Process {
    /// Waits for the child and returns its exit status (or 128 + signal).
    ///
    /// Foundation's `waitUntilExit` on Linux can miss the exit of a child that itself spawned a
    /// background daemon (seen with `inkyfs mount`): it then waits forever on a zombie. Reaping
    /// with waitpid ourselves, as a fallback, cannot miss it.
    public func waitForExit() -> Int32 {
        while true {
            if !isRunning { return terminationReason == .uncaughtSignal ? 128 + terminationStatus : terminationStatus }
            var status: Int32 = 0
            if waitpid(processIdentifier, &status, WNOHANG) == processIdentifier {
                let signal = status & 0x7F
                return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
            }
            usleep(5_000)
        }
    }
}
